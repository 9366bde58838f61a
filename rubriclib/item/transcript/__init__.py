"""An agent run as one canonical list of messages (`model`), read losslessly from the shapes
runs are recorded in (`reading`: OpenAI Chat Completions messages, Anthropic Messages, OpenAI
Responses API items and Responses, LangChain messages; a module per shape; `opentelemetry`: a
run per trace of an OTLP JSON export). inspect_ai's message JSON is read by `inspect` (a log's
samples, and the integration's `state.messages`), letta's messages by evals/letta/runs.py, into
the same model."""

from rubriclib.item.transcript.model import (
    Message,
    Problems,
    Role,
    Shape,
    ToolCall,
    Transcript,
    TranscriptError,
)
from rubriclib.item.transcript.opentelemetry import read_traces
from rubriclib.item.transcript.reading import read_transcript, unanswered, with_final_answer

__all__ = [
    "Message",
    "Problems",
    "Role",
    "Shape",
    "ToolCall",
    "Transcript",
    "TranscriptError",
    "read_traces",
    "read_transcript",
    "unanswered",
    "with_final_answer",
]

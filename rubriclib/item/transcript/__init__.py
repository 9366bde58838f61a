"""An agent run as one canonical list of messages (`model`), read losslessly from the shapes
runs are recorded in (`reading`: OpenAI Chat Completions messages, Anthropic Messages, OpenAI
Responses API items and Responses, LangChain messages, Pydantic AI messages, smolagents'
memory; a module per shape in `shapes`; `opentelemetry`: a run per trace of an OTLP JSON
export). inspect_ai's message JSON is read by `inspect` (a log's samples, and the
integration's `state.messages`), letta's messages by evals/letta/runs.py, into the same
model."""

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face
from rubriclib.item.transcript.model import (
    Message,
    Problems,
    Role,
    Shape,
    ToolCall,
    Transcript,
    TranscriptError,
    unanswered,
)
from rubriclib.item.transcript.reading import read_transcript, with_final_answer

if TYPE_CHECKING:
    from rubriclib.item.transcript.opentelemetry import read_traces as read_traces

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

# An OTLP export is read only by who asks for it: its reader is loaded on first use.
__getattr__, __dir__ = lazy_face(__name__, {"read_traces": ".opentelemetry"})

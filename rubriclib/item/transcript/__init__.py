"""An agent run as one canonical list of messages (`model`), read losslessly from the shapes
runs are recorded in (`reading`: OpenAI Chat Completions messages, Anthropic Messages, OpenAI
Responses API items and Responses, LangChain messages; a module per shape). inspect_ai's and
letta's message objects are read by their integrations into the same model."""

from rubriclib.item.transcript.model import (
    Message,
    Problems,
    Role,
    Shape,
    ToolCall,
    Transcript,
    TranscriptError,
)
from rubriclib.item.transcript.reading import read_transcript, unanswered, with_final_answer

__all__ = [
    "Message",
    "Problems",
    "Role",
    "Shape",
    "ToolCall",
    "Transcript",
    "TranscriptError",
    "read_transcript",
    "unanswered",
    "with_final_answer",
]

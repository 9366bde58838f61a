"""The canonical model of an agent run: messages with tool calls, read from every recorded
shape into this one model."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Role = Literal["system", "developer", "user", "assistant", "tool"]
Shape = Literal[
    "openai-chat", "anthropic", "openai-responses", "langchain", "opentelemetry", "inspect", "letta"
]
Problems = list[tuple[str, str]]
"""`(where, what is wrong)` for each problem of a run."""


class ToolCall(BaseModel):
    """One call an assistant made: the tool's name and its arguments (parsed JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str
    arguments: Any


class Message(BaseModel):
    """One message of a run: who wrote it, its text, the assistant's thinking and tool calls,
    and for a tool result (`role: tool`) the call it answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Role
    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    answers: str | None = None
    """A tool result's call id (a call earlier in the run)."""
    tool_name: str | None = None
    """The tool a tool result names itself as coming from (OpenAI's and LangChain's `name`),
    when the run records it: checked against the call it answers."""
    is_error: bool = False
    """A tool result the tool reported as an error (Anthropic's `is_error`)."""


class Transcript(BaseModel):
    """An agent run: its messages in order, and the shape it was recorded in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: tuple[Message, ...]
    shape: Shape

    @property
    def final_answer(self) -> str | None:
        """The run's last assistant text, or None when the assistant never wrote one."""
        for message in reversed(self.messages):
            if message.role == "assistant" and message.text.strip():
                return message.text
        return None

    def call(self, call_id: str) -> tuple[int, ToolCall] | None:
        """The index of the message that made call `call_id`, and the call."""
        for index, message in enumerate(self.messages):
            for call in message.tool_calls:
                if call.id == call_id:
                    return index, call
        return None


class TranscriptError(ValueError):
    """A run that cannot be read: one `(where, problem)` per problem, `where` such as
    `transcript[3].tool_calls[0].function.arguments`."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{where}: {problem}" for where, problem in problems))
        self.problems = problems

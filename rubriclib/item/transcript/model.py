"""The canonical model of an agent run: messages with tool calls, read from every recorded
shape into this one model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
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
        at = self.final_answer_at
        return None if at is None else self.messages[at].text

    @property
    def final_answer_at(self) -> int | None:
        """The index of the run's last assistant text, or None when there is none."""
        for index in range(len(self.messages) - 1, -1, -1):
            message = self.messages[index]
            if message.role == "assistant" and message.text.strip():
                return index
        return None

    @cached_property
    def pairing(self) -> Pairing:
        """Which call each tool result answers (`pair_results`)."""
        return pair_results(self.messages)


Answered = tuple[int, ToolCall]
"""The index of the message that made a call, and the call."""


@dataclass(frozen=True)
class Pairing:
    """For each message of a run, the call it answers (None but for tool results), and what
    was doubtful in pairing them: `(the result's index, why)`."""

    calls: tuple[Answered | None, ...]
    notes: tuple[tuple[int, str], ...]


def pair_results(
    messages: Sequence[Message], place: Callable[[int], str] = lambda at: f"M{at + 1}"
) -> Pairing:
    """Each tool result paired with the nearest earlier call with its id that has no result
    yet (ids repeat across turns where a server numbers calls per reply; calls in one message
    are answered in order), preferring a call to the tool the result names. A result whose tool
    name disagrees, an id that pairing cannot settle, and a second result for a call are noted,
    each naming the messages by `place`; a result whose id no earlier call has is None."""
    open_calls: list[Answered] = []
    made: list[Answered] = []
    calls: list[Answered | None] = []
    notes: list[tuple[int, str]] = []
    for index, message in enumerate(messages):
        answered = None
        if message.answers is not None:
            answered, note = _paired(message, open_calls, made, place)
            if answered in open_calls:
                open_calls.remove(answered)
            if note:
                notes.append((index, note))
        calls.append(answered)
        made.extend((index, call) for call in message.tool_calls)
        open_calls.extend((index, call) for call in message.tool_calls)
    return Pairing(tuple(calls), tuple(notes))


def _paired(
    result: Message, open_calls: list[Answered], made: list[Answered], place: Callable[[int], str]
) -> tuple[Answered | None, str | None]:
    """The call `result` answers, and what is doubtful about it (None when nothing is)."""
    same = [pair for pair in open_calls if pair[1].id == result.answers]
    if not same:
        again = [pair for pair in made if pair[1].id == result.answers]
        if not again:
            return None, None
        chosen = _nearest(again)
        return chosen, (
            f"answers call {result.answers!r} in {place(chosen[0])}, which already has a "
            "result: shown under that call again"
        )
    named = [pair for pair in same if pair[1].name == result.tool_name]
    chosen = _nearest(named or same)
    at, call = chosen
    if result.tool_name is not None and not named:
        return chosen, (
            f"names tool {result.tool_name!r}, but call {call.id!r} it answers "
            f"(in {place(at)}) is to {call.name!r}"
        )
    rivals = {other.name for other_at, other in same if other_at == at}
    if result.tool_name is None and len(rivals) > 1:
        return chosen, (
            f"call id {call.id!r} is used by {len(rivals)} open calls in {place(at)} "
            f"({', '.join(sorted(rivals))}); paired with the first, {call.name!r} (a tool "
            "result that names its tool settles it)"
        )
    return chosen, None


def _nearest(pairs: list[Answered]) -> Answered:
    """The first call of the latest message among `pairs`."""
    latest = max(at for at, _ in pairs)
    return next(pair for pair in pairs if pair[0] == latest)


class TranscriptError(ValueError):
    """A run that cannot be read: one `(where, problem)` per problem, `where` such as
    `transcript[3].tool_calls[0].function.arguments`."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{where}: {problem}" for where, problem in problems))
        self.problems = problems

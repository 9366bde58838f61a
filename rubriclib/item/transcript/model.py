"""The canonical model of an agent run: messages with tool calls, read from every recorded
shape into this one model; `paired_transcript`, where every shape's reader ends."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

Role = Literal["system", "developer", "user", "assistant", "tool"]
Shape = Literal[
    "openai-chat",
    "anthropic",
    "openai-responses",
    "langchain",
    "opentelemetry",
    "inspect",
    "letta",
    "pydantic-ai",
    "smolagents",
    "docent",
]
Problems = list[tuple[str, str]]
"""`(where, what is wrong)` for each problem of a run."""
logger = logging.getLogger("rubriclib")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""Half of a UTF-16 pair: JSON's `\\ud800` escape reads into one, and no UTF-8 carries it."""


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


class RunPart(BaseModel):
    """One transcript of a run recorded as several (Docent's AgentRun): the index of its first
    message in the run, and its heading (its name and what it records about itself, short)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int
    heading: str


class Transcript(BaseModel):
    """An agent run: its messages in order, the shape it was recorded in, and, for a run
    recorded as several transcripts, where each starts (`parts`: its blocks are then named
    `T1B3`, as Docent names them, rather than `M12`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: tuple[Message, ...]
    shape: Shape
    parts: tuple[RunPart, ...] = ()

    @model_validator(mode="after")
    def _parts_in_order(self) -> Transcript:
        starts = [part.start for part in self.parts]
        if starts and (
            starts[0] != 0 or starts != sorted(starts) or starts[-1] > len(self.messages)
        ):
            raise ValueError("parts must start at 0 and in order, within the run's messages")
        return self

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`parts` only where the run has them: a one-transcript run is written as before."""
        written: dict[str, Any] = handler(self)
        if not self.parts:
            written.pop("parts", None)
        return written

    @cached_property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        """Each transcript's messages as `(start, end)`: one, the whole run, without parts."""
        starts = [part.start for part in self.parts] or [0]
        return tuple(zip(starts, [*starts[1:], len(self.messages)], strict=True))

    @cached_property
    def block_ids(self) -> tuple[str, ...]:
        """Each message's block id: `M1` on, or `T0B0` on (Docent's: transcript, then block,
        each from 0) in a run of parts."""
        if not self.parts:
            return tuple(f"M{index}" for index in range(1, len(self.messages) + 1))
        return tuple(
            f"T{number}B{index - start}"
            for number, (start, end) in enumerate(self.bounds)
            for index in range(start, end)
        )

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
        """Which call each tool result answers (`pair_results`), within each transcript."""
        return pair_parts(self.messages, self.bounds, self.block_ids.__getitem__)


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


def pair_parts(
    messages: Sequence[Message], bounds: Sequence[tuple[int, int]], place: Callable[[int], str]
) -> Pairing:
    """`pair_results` of each transcript's messages (`bounds`: start and end of each), as one
    run's pairing: a result answers a call of its own transcript."""
    calls: list[Answered | None] = []
    notes: list[tuple[int, str]] = []
    for start, end in bounds:
        pairing = pair_results(messages[start:end], partial(_shifted, place, start))
        calls.extend(None if call is None else (start + call[0], call[1]) for call in pairing.calls)
        notes.extend((start + at, note) for at, note in pairing.notes)
    return Pairing(tuple(calls), tuple(notes))


def _shifted(place: Callable[[int], str], start: int, at: int) -> str:
    return place(start + at)


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


def paired_transcript(
    messages: list[Message],
    places: list[str],
    shape: Shape,
    problems: Problems,
    warnings: Problems | None = None,
    parts: tuple[RunPart, ...] = (),
) -> Transcript:
    """The run read as `messages` (each recorded at `places[i]`; in `parts` when it was
    recorded as several transcripts): every call given an id, every tool result paired with its
    call, a TranscriptError naming every problem, and what was doubtful in pairing added to
    `warnings` (logged when no list is given)."""
    transcript = Transcript(messages=tuple(with_call_ids(messages)), shape=shape, parts=parts)
    problems.extend(lone_surrogates(transcript, places))
    problems.extend(unanswered(transcript, places))
    if problems:
        raise TranscriptError(problems)
    doubts = pairing_doubts(transcript, places)
    if warnings is None:
        for place, doubt in doubts:
            logger.warning("%s: %s", place, doubt)
    else:
        warnings.extend(doubts)
    return transcript


def unanswered(transcript: Transcript, places: list[str], verb: str = "answers") -> Problems:
    """A problem at `places[i]` for each tool result whose call is not earlier in the run (a
    tool result `verb`s its call: letta's tool return `returns` it)."""
    return [
        (place, f"{verb} call {message.answers!r}, which is not earlier in the run")
        for message, place, call in zip(
            transcript.messages, places, transcript.pairing.calls, strict=True
        )
        if message.answers is not None and call is None
    ]


def lone_surrogates(transcript: Transcript, places: list[str]) -> Problems:
    """A problem at `places[i]` for each message holding a lone surrogate (a `\\ud800` JSON
    escape without its pair): it cannot be printed, written or sent, so it is refused on
    reading rather than failing later in a render or a request."""
    problems: Problems = []
    for message, place in zip(transcript.messages, places, strict=True):
        for name, value in message.model_dump(exclude_defaults=True).items():
            found = _LONE_SURROGATE.search(json.dumps(value, ensure_ascii=False))
            if found:
                problems.append(
                    (
                        place,
                        f"holds a lone surrogate {found[0]!r} (in its {name}), which is not "
                        "text: no UTF-8 can carry it to a judge",
                    )
                )
                break
    return problems


def pairing_doubts(transcript: Transcript, places: list[str]) -> Problems:
    """What was doubtful in pairing the run's tool results with its calls, each at the
    result's place and naming the call's."""
    pairing = pair_parts(transcript.messages, transcript.bounds, places.__getitem__)
    return [(places[index], note) for index, note in pairing.notes]


def with_call_ids(messages: list[Message]) -> list[Message]:
    """`messages` with an id for every call recorded without one (`""`): `call-M3-1` for the
    first such call of the third message, unique in the run and the same at every reading."""
    taken = {call.id for message in messages for call in message.tool_calls}
    named: list[Message] = []
    for number, message in enumerate(messages, 1):
        if all(call.id for call in message.tool_calls):
            named.append(message)
            continue
        calls = []
        for order, call in enumerate(message.tool_calls, 1):
            call_id = call.id or f"call-M{number}-{order}"
            while not call.id and call_id in taken:
                call_id += "'"
            taken.add(call_id)
            calls.append(call.model_copy(update={"id": call_id}))
        named.append(message.model_copy(update={"tool_calls": tuple(calls)}))
    return named

"""A recorded run, in whichever shape it was recorded, read into the canonical model."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from rubriclib.item.transcript.model import (
    Message,
    Problems,
    Shape,
    Transcript,
    TranscriptError,
    lone_surrogates,
    paired_transcript,
)
from rubriclib.item.transcript.otlp import is_export
from rubriclib.item.transcript.parts import parts_text
from rubriclib.item.transcript.shapes.anthropic import (
    ANTHROPIC_BLOCKS,
    anthropic_message,
    sdk_message,
)
from rubriclib.item.transcript.shapes.chat import chat_message
from rubriclib.item.transcript.shapes.docent import docent_sign, read_agent_run
from rubriclib.item.transcript.shapes.langchain import (
    langchain_message,
    langchain_objects,
    langchain_sign,
)
from rubriclib.item.transcript.shapes.pydantic_ai import pydantic_ai_run, pydantic_ai_sign
from rubriclib.item.transcript.shapes.responses import (
    RESPONSES_ITEMS,
    joined,
    responses_item,
    responses_request,
    same_turn,
    spliced,
)
from rubriclib.item.transcript.shapes.smolagents import smolagents_run, smolagents_sign

SHAPE_NAMES = {
    "openai-chat": "OpenAI chat",
    "anthropic": "Anthropic Messages",
    "openai-responses": "OpenAI Responses",
    "langchain": "LangChain",
    "pydantic-ai": "Pydantic AI",
    "smolagents": "smolagents",
}
WHOLE_RUN_READERS = {"pydantic-ai": pydantic_ai_run, "smolagents": smolagents_run}
"""Shapes read a whole run at once: Pydantic AI's instructions repeat at every request,
smolagents' steps span several messages."""
READERS = {
    "openai-chat": chat_message,
    "anthropic": anthropic_message,
    "openai-responses": responses_item,
    "langchain": langchain_message,
}


def read_transcript(
    value: Any, field: str = "transcript", warnings: Problems | None = None
) -> Transcript:
    """`value` (a list of messages or items in one shape, an Anthropic request's `{system,
    messages}`, a Responses request's `{instructions, input}`, a whole Response, an
    OpenTelemetry export of one trace, or a Docent AgentRun's dump) as a Transcript; a
    TranscriptError naming every problem. What was doubtful in pairing tool results with calls
    is added to `warnings`, or logged when no list is given."""
    if isinstance(value, Transcript):
        return value
    if isinstance(value, Mapping) and "shape" in value:
        return _canonical(value, field)
    if is_export(value):
        return _one_trace(value, field)
    if docent_sign(value):
        return read_agent_run(value, field, warnings)
    problems: Problems = []
    start, system, entries = _recorded(value, field, problems)
    if problems:
        raise TranscriptError(problems)
    shape = _shape(entries, start, problems)
    if problems:
        raise TranscriptError(problems)
    if shape in WHOLE_RUN_READERS:
        messages, places = WHOLE_RUN_READERS[shape](entries, problems)
        return paired_transcript(messages, places, shape, problems, warnings)
    reader = READERS[shape]
    messages = []
    places = []
    if system is not None:
        messages.append(Message(role="system", text=parts_text(system[1], system[0], problems)))
        places.append(system[0])
    for place, entry in entries:
        for message in reader(entry, place, problems):
            if shape == "openai-responses" and messages and same_turn(messages[-1], message):
                messages[-1] = joined(messages[-1], message)
            else:
                messages.append(message)
                places.append(place)
    return paired_transcript(messages, places, shape, problems, warnings)


def _recorded(
    value: Any, field: str, problems: Problems
) -> tuple[tuple[Shape, str] | None, tuple[str, Any] | None, list[tuple[str, Any]]]:
    """The run's entries `(where, entry)` (whole Responses spliced), its system text `(where,
    text)` (Anthropic's `system`, Responses' `instructions`) and the shape its wrapper shows."""
    start: tuple[Shape, str] | None = None
    system = instructions = None
    where = field
    if isinstance(value, Mapping) and "messages" in value:
        unknown = sorted(set(value) - {"messages", "system"})
        if unknown:
            raise TranscriptError(
                [(field, f"unknown key {unknown[0]!r}; a run has messages, system")]
            )
        if value.get("system") is not None:
            start, system = ("anthropic", f"{field}.system"), (f"{field}.system", value["system"])
        value, where = value["messages"], f"{field}.messages"
    elif isinstance(value, Mapping) and (
        {"input", "instructions"} & set(value) or value.get("object") == "response"
    ):
        given, value, where = responses_request(value, field)
        start = ("openai-responses", where)
        instructions = None if given is None else (f"{field}.instructions", given)
    if not isinstance(value, list) or not value:
        kind = "an empty list" if value == [] else type(value).__name__
        why = f"must be a non-empty list of messages (an agent run), not {kind}"
        raise TranscriptError([(where, langchain_objects([value]) or why)])
    entries, instructions = spliced(
        [(f"{where}[{index}]", entry) for index, entry in enumerate(value)], instructions, problems
    )
    if instructions is not None:
        if isinstance(instructions[1], list):  # instructions as input items
            listed = [(f"{instructions[0]}[{i}]", item) for i, item in enumerate(instructions[1])]
            entries = listed + entries
        else:
            system = instructions
    if objects := langchain_objects([entry for _, entry in entries]):
        problems.append((where, objects))  # one hint for the whole run, not one per message
        return start, system, entries
    for place, entry in entries:
        if not isinstance(entry, Mapping):
            problems.append((place, f"must be a message (a mapping), not {type(entry).__name__}"))
    return start, system, entries


def _canonical(value: Mapping[str, Any], field: str) -> Transcript:
    """A run as a Transcript writes itself (`{messages, shape}`, from `model_dump`): what
    `rubriclib new --from` copies into a golden and a goldens report holds."""
    try:
        transcript = Transcript.model_validate(dict(value))
    except ValidationError as error:
        problems: Problems = []
        for problem in error.errors():
            where = field + "".join(
                f"[{part}]" if isinstance(part, int) else f".{part}" for part in problem["loc"]
            )
            problems.append((where, problem["msg"]))
        raise TranscriptError(problems) from None
    places = [f"{field}.messages[{index}]" for index in range(len(transcript.messages))]
    if problems := lone_surrogates(transcript, places):
        raise TranscriptError(problems)
    return transcript


def _one_trace(export: Mapping[str, Any], field: str) -> Transcript:
    """The run of an OpenTelemetry export holding one trace; an export of several is refused,
    saying how many and where each is read as a run."""
    from rubriclib.item.transcript.opentelemetry import read_traces  # loaded by who asks

    runs = read_traces(export)
    if len(runs) == 1:
        return runs[0][1]
    if not runs:
        why = "is an OpenTelemetry export with no model call: it records no run to judge"
    else:
        why = (
            f"is an OpenTelemetry export of {len(runs)} traces, and a run is one trace: give "
            "the export as an eval's dataset (a row per trace), or read its runs with read_traces"
        )
    raise TranscriptError([(field, why)])


def _shape(
    entries: list[tuple[str, Any]], start: tuple[Shape, str] | None, problems: Problems
) -> Shape:
    """The one shape the run's entries show (OpenAI chat when none shows any); a problem at
    the first entry of a second shape. LangChain reads OpenAI chat's messages too."""
    first = start
    for place, entry in entries:
        for shape, sign in _signs(entry):
            if first is None or (first[0], shape) == ("openai-chat", "langchain"):
                first = (shape, place)
            elif shape != first[0] and (first[0], shape) != ("langchain", "openai-chat"):
                problems.append(
                    (
                        place,
                        f"{sign} is {SHAPE_NAMES[shape]}, but {first[1]} is "
                        f"{SHAPE_NAMES[first[0]]}: a run is recorded in one shape",
                    )
                )
                return first[0]
    return first[0] if first else "openai-chat"


def _signs(entry: Mapping[str, Any]) -> Iterator[tuple[Shape, str]]:
    """What marks `entry` as one shape: `(shape, the key or block that shows it)`."""
    if sign := langchain_sign(entry):  # its own content blocks may be Anthropic's
        yield "langchain", sign
        return
    if sign := pydantic_ai_sign(entry):
        yield "pydantic-ai", sign
        return
    if sign := smolagents_sign(entry):  # its messages carry tool_calls, always null
        yield "smolagents", sign
        return
    if sdk_message(entry):
        yield "anthropic", "an Anthropic SDK Message (type 'message' with stop_reason, usage)"
    elif entry.get("type") in RESPONSES_ITEMS:
        yield "openai-responses", f"type {entry['type']!r}"
    if "tool_calls" in entry or entry.get("role") == "tool":
        yield "openai-chat", "tool_calls" if "tool_calls" in entry else "role 'tool'"
    content = entry.get("content")
    for part in content if isinstance(content, list) else ():
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in ANTHROPIC_BLOCKS:
            yield "anthropic", f"a {kind!r} block"
        elif kind in ("input_text", "output_text"):
            yield "openai-responses", f"an {kind!r} part"
        elif kind in ("image_url", "input_audio"):
            yield "openai-chat", f"an {kind!r} part"


def with_final_answer(data: Any) -> Any:
    """An item's or a golden's fields with its run read and, when no output is given, the
    run's final answer as the output (empty when it has none, or when the run cannot be read:
    the transcript's own validator says why)."""
    if not isinstance(data, Mapping) or data.get("output") is not None:
        return data
    if not data.get("transcript"):
        return data
    try:
        transcript = read_transcript(data["transcript"])
    except TranscriptError:
        return {**data, "output": ""}
    return {**data, "transcript": transcript, "output": transcript.final_answer or ""}

"""OpenTelemetry GenAI traces: one run per trace, read from its chat calls' messages as the
GenAI semantic conventions record them (`gen_ai.input.messages` / `gen_ai.output.messages` on
spans or on `gen_ai.client.inference.operation.details` events, or the older
`gen_ai.*.message` and `gen_ai.choice` events), each message read as the chat message it
records."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rubriclib.item.transcript.model import (
    Message,
    Problems,
    Transcript,
    TranscriptError,
    paired_transcript,
)
from rubriclib.item.transcript.otlp import Record, records
from rubriclib.item.transcript.shapes.chat import chat_message

INFERENCE = ("chat", "text_completion", "generate_content")
"""`gen_ai.operation.name`s of a model call (an agent's or a tool's span is no call)."""
INPUT, OUTPUT, SYSTEM = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
)
DETAILS = "gen_ai.client.inference.operation.details"
OLD_EVENTS = {f"gen_ai.{role}.message": role for role in ("system", "user", "assistant", "tool")}
PARTS = ("text", "reasoning", "tool_call", "tool_call_response", "blob", "uri", "file")
MEDIA = {"image": "image_url", "audio": "input_audio"}
"""A blob, uri or file part's modality as the chat part that names it (`(image not shown)`)."""
NOT_CAPTURED = (
    "records no messages: content capture was off (set OTEL_INSTRUMENTATION_GENAI_CAPTURE_"
    "MESSAGE_CONTENT=span_only with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental)"
)
EVENTS_NOT_CAPTURED = (
    "records no messages: content capture was off (the older gen_ai.*.message events hold "
    "content with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)"
)
Placed = list[tuple[Message, str]]
"""Messages, each with where it is recorded."""


@dataclass(frozen=True)
class TraceRun:
    """One trace's run, or the problems that kept it from being one, and what is worth
    keeping about it (the model, the service)."""

    trace_id: str
    transcript: Transcript | None
    problems: Problems
    metadata: dict[str, Any]


@dataclass
class _Call:
    """One model call of a trace: where it is recorded, its order, its messages."""

    place: str
    order: tuple[int, int]
    input: Placed | None = None
    output: Placed | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Trace:
    calls: dict[str, _Call] = field(default_factory=dict)
    problems: Problems = field(default_factory=list)
    first_old_event: str | None = None
    """Where the trace's first older event (`gen_ai.*.message`, `gen_ai.choice`) is."""
    old_content: bool = False
    """Whether any of its older events holds content (capture off, they hold none)."""


def read_traces(export: Any) -> list[tuple[str, Transcript]]:
    """Each trace of an OpenTelemetry GenAI export as `(trace id, its run)`, a run to judge.

    Args:
        export: An OTLP JSON export (`{"resourceSpans": [...]}`, or `resourceLogs` of GenAI
            events), or a list of them (a JSONL file's lines, each read with `json.loads`).

    Returns:
        Every trace with a model call: its id and its run, the `transcript` to judge.

    Raises:
        TranscriptError: A ValueError naming every problem (where in the export, and why).
    """
    exports = enumerate(export) if isinstance(export, list) else [(None, export)]
    runs, problems = traces((f"[{i}]." if i is not None else "", e) for i, e in exports)
    problems += [problem for run in runs for problem in run.problems]
    if problems:
        raise TranscriptError(problems)
    return [(run.trace_id, run.transcript) for run in runs if run.transcript is not None]


def traces(documents: Iterable[tuple[str, Any]]) -> tuple[list[TraceRun], Problems]:
    """The run of every trace with a model call in these exports (`(label, export)`: a label
    starts each place, e.g. `line 3: `), and the problems that belong to no trace."""
    problems: Problems = []
    found: dict[str, _Trace] = {}
    order = itertools.count()
    for label, document in documents:
        for record in records(document, label, problems):
            _add(record, next(order), found, problems)
    return [_trace_run(trace_id, trace) for trace_id, trace in found.items()], problems


def _add(record: Record, order: int, found: dict[str, _Trace], problems: Problems) -> None:
    """A span or event of a model call added to its trace's call (events name their span)."""
    attributes = record.attributes
    if record.span:
        operation = attributes.get("gen_ai.operation.name")
        if operation not in INFERENCE and (operation is not None or INPUT not in attributes):
            return  # an agent's or a tool's span, or no GenAI span
    elif record.name not in (DETAILS, "gen_ai.choice", *OLD_EVENTS):
        return
    if record.trace_id is None:
        problems.append((record.place, "has no traceId: a model call outside a trace is no run"))
        return
    trace = found.setdefault(record.trace_id, _Trace())
    call = trace.calls.setdefault(record.span_id or record.place, _Call(record.place, (0, order)))
    model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
    service = record.resource.get("service.name")
    call.metadata.update({k: v for k, v in (("model", model), ("service", service)) if v})
    if record.span:
        call.place, call.order = record.place, (record.start, order)
    if record.span or record.name == DETAILS:
        _convention_messages(record, call, trace.problems)
        return
    trace.first_old_event = trace.first_old_event or record.place
    trace.old_content = trace.old_content or _holds_content(record.body)
    if record.name in OLD_EVENTS:
        call.input = (call.input or []) + _old_event(
            record, OLD_EVENTS[record.name], trace.problems
        )
    elif record.body is None or (isinstance(record.body, Mapping) and not record.body.get("index")):
        call.output = _old_event(record, None, trace.problems)  # the first choice: the run's


def _convention_messages(record: Record, call: _Call, problems: Problems) -> None:
    """A call's messages from `gen_ai.input.messages` / `gen_ai.output.messages` (a JSON
    string on a span, structured on an event), the system instructions first."""
    at = f"{record.place}.attributes"
    if INPUT in record.attributes and call.input is None:
        call.input = _messages(record.attributes[INPUT], f"{at}[{INPUT}]", problems)
        if SYSTEM in record.attributes:
            system = {"role": "system", "parts": _json(record.attributes[SYSTEM])}
            call.input[:0] = _messages([system], f"{at}[{SYSTEM}]", problems)
    if OUTPUT in record.attributes and call.output is None:
        messages = _json(record.attributes[OUTPUT])  # the first choice is the run's
        first = messages[:1] if isinstance(messages, list) else messages
        call.output = _messages(first, f"{at}[{OUTPUT}]", problems)


def _json(value: Any) -> Any:
    """A value recorded as JSON text (on a span) parsed; structured values (events) as they
    are; JSON that does not parse is left as text (the reader says so)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


def _messages(value: Any, place: str, problems: Problems) -> Placed:
    value = _json(value)
    if isinstance(value, str):
        problems.append((place, "is not JSON (a list of messages written as JSON text)"))
        return []
    if not isinstance(value, list):
        problems.append((place, f"must be a list of messages, not {type(value).__name__}"))
        return []
    read: Placed = []
    for index, entry in enumerate(value):
        at = f"{place}[{index}]"
        if not isinstance(entry, Mapping):
            problems.append((at, f"must be a message (a mapping), not {type(entry).__name__}"))
            continue
        read += [(message, at) for message in _convention_message(entry, at, problems)]
    return read


def _convention_message(entry: Mapping[str, Any], at: str, problems: Problems) -> list[Message]:
    """One `{role, parts}` message read as the chat message(s) it records: its tool call
    responses as tool messages, the rest one message of its role."""
    parts = entry.get("parts")
    if not isinstance(parts, list):
        problems.append((f"{at}.parts", "must be a list of parts"))
        return []
    content: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    thinking: list[str] = []
    for index, part in enumerate(parts):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text":
            content.append({"type": "text", "text": part.get("content")})
        elif kind == "reasoning":
            thinking.append(str(part.get("content") or ""))
        elif kind == "tool_call":
            arguments = part.get("arguments")
            text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
            function = {"name": part.get("name"), "arguments": text}
            calls.append({"id": part.get("id"), "type": "function", "function": function})
        elif kind == "tool_call_response":
            response = part.get("response")
            shown = response if isinstance(response, str | list) else json.dumps(response)
            results.append({"role": "tool", "tool_call_id": part.get("id"), "content": shown})
        elif kind in ("blob", "uri", "file"):
            content.append({"type": MEDIA.get(part.get("modality"), "file")})
        else:
            problems.append(
                (f"{at}.parts[{index}]", f"unknown part {kind!r}; parts are {', '.join(PARTS)}")
            )
    messages = [message for result in results for message in chat_message(result, at, problems)]
    if content or calls or thinking or not results:
        chat = {"role": entry.get("role"), "content": content or None, "tool_calls": calls}
        messages += [
            message.model_copy(update={"thinking": "\n".join(thinking)})
            for message in chat_message(chat, at, problems)
        ]
    return messages


def _old_event(record: Record, role: str | None, problems: Problems) -> Placed:
    """A `gen_ai.{role}.message` event (role given) or a `gen_ai.choice` (its `message`) read
    as the chat message its body holds."""
    body, at = record.body, f"{record.place}.body"
    if role is None and isinstance(body, Mapping):
        body, at = body.get("message"), f"{at}.message"
    body = body if isinstance(body, Mapping) else {}
    chat = {
        "role": role or body.get("role") or "assistant",
        "content": body.get("content"),
        "tool_calls": body.get("tool_calls"),
        "tool_call_id": body.get("id"),
    }
    return [(message, at) for message in chat_message(chat, at, problems)]


def _holds_content(body: Any) -> bool:
    """Whether an older event's body holds what content capture adds: a `content` or a tool
    call's `arguments` (without it the events still come, with roles, ids and tool names)."""
    if isinstance(body, Mapping):
        return bool({"content", "arguments"} & body.keys()) or any(
            map(_holds_content, body.values())
        )
    return isinstance(body, list) and any(map(_holds_content, body))


def _trace_run(trace_id: str, trace: _Trace) -> TraceRun:
    calls = sorted(trace.calls.values(), key=lambda call: call.order)
    if trace.first_old_event and not trace.old_content:
        trace.problems = [(trace.first_old_event, EVENTS_NOT_CAPTURED)]  # not their symptoms
    problems = trace.problems
    silent = [call.place for call in calls if call.input is None]
    problems += [(silent[0], NOT_CAPTURED)] if silent else []
    metadata = calls[-1].metadata
    run = [] if problems else _run(calls, problems)
    if not run and not problems:
        problems.append((calls[-1].place, "records no messages"))
    try:
        messages, places = [message for message, _ in run], [place for _, place in run]
        transcript = paired_transcript(messages, places, "opentelemetry", problems)
    except TranscriptError:
        return TraceRun(trace_id, None, problems, metadata)
    return TraceRun(trace_id, transcript, [], metadata)


def _run(calls: list[_Call], problems: Problems) -> Placed:
    """The last call's input and output, which every earlier call's messages must begin (each
    request repeats the run so far); a problem at the first message of one that does not."""
    last = calls[-1]
    run = [*(last.input or []), *(last.output or [])]
    for call in calls[:-1]:
        for index, (message, place) in enumerate([*(call.input or []), *(call.output or [])]):
            merged = _merged(message, run[index][0]) if index < len(run) else None
            if merged is None:
                problems.append(
                    (
                        place,
                        f"is not message {index + 1} of the run that the trace's last model "
                        f"call records ({last.place}): a trace is read as one run, each model "
                        "call repeating the calls before it",
                    )
                )
                break
            if merged != run[index][0]:
                run[index] = (merged, place)
    return run


def _merged(one: Message, other: Message) -> Message | None:
    """Two records of the same message as one, the text or thinking that only one of them
    keeps kept (the older events drop an assistant's text beside its tool calls, and no chat
    request resends thinking); None when they are different messages."""
    if one == other:
        return one
    kept = {key: getattr(one, key) or getattr(other, key) for key in ("text", "thinking")}
    if any(getattr(m, k) not in ("", kept[k]) for m in (one, other) for k in kept):
        return None
    merged = one.model_copy(update=kept)
    return merged if merged == other.model_copy(update=kept) else None

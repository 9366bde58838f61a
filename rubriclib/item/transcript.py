"""An agent run as one canonical list of messages, read losslessly from the shapes runs are
recorded in: OpenAI Chat Completions messages, Anthropic Messages (a `system` field or
message, content blocks), and OpenAI Responses API items. inspect_ai's and letta's message
objects are read by their integrations into the same model."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

Role = Literal["system", "developer", "user", "assistant", "tool"]
Shape = Literal["openai-chat", "anthropic", "openai-responses", "inspect", "letta"]
SHAPE_NAMES = {
    "openai-chat": "OpenAI chat",
    "anthropic": "Anthropic Messages",
    "openai-responses": "OpenAI Responses",
}
Problems = list[tuple[str, str]]
"""`(where, what is wrong)` for each problem of a run."""
RESPONSES_ITEMS = ("message", "function_call", "function_call_output", "reasoning")
ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")


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


def read_transcript(value: Any, field: str = "transcript") -> Transcript:
    """`value` (a list of messages or items in one shape, or an Anthropic request's
    `{system, messages}`) as a Transcript; a TranscriptError naming every problem."""
    if isinstance(value, Transcript):
        return value
    if isinstance(value, Mapping) and "shape" in value:
        return _canonical(value, field)
    system: Any = None
    where = field
    if isinstance(value, Mapping) and "messages" in value:
        unknown = sorted(set(value) - {"messages", "system"})
        if unknown:
            raise TranscriptError(
                [(field, f"unknown key {unknown[0]!r}; a run has messages, system")]
            )
        system, value, where = value.get("system"), value["messages"], f"{field}.messages"
    if not isinstance(value, list) or not value:
        kind = "an empty list" if value == [] else type(value).__name__
        raise TranscriptError(
            [(field, f"must be a non-empty list of messages (an agent run), not {kind}")]
        )
    problems: Problems = []
    entries = [(f"{where}[{index}]", entry) for index, entry in enumerate(value)]
    for place, entry in entries:
        if not isinstance(entry, Mapping):
            problems.append((place, f"must be a message (a mapping), not {type(entry).__name__}"))
    if problems:
        raise TranscriptError(problems)
    shape = _shape(entries, system is not None, field, problems)
    if problems:
        raise TranscriptError(problems)
    reader = {"openai-chat": _chat, "anthropic": _anthropic, "openai-responses": _responses}[shape]
    messages: list[Message] = []
    places: list[str] = []
    if system is not None:
        messages.append(
            Message(role="system", text=_parts_text(system, f"{field}.system", problems))
        )
        places.append(f"{field}.system")
    for place, entry in entries:
        for message in reader(entry, place, problems):
            if shape == "openai-responses" and messages and _same_turn(messages[-1], message):
                messages[-1] = _joined(messages[-1], message)
            else:
                messages.append(message)
                places.append(place)
    problems.extend(unanswered(messages, places))
    if problems:
        raise TranscriptError(problems)
    return Transcript(messages=tuple(messages), shape=shape)


def _canonical(value: Mapping[str, Any], field: str) -> Transcript:
    """A run as a Transcript writes itself (`{messages, shape}`, from `model_dump`): what
    `rubriclib new --from` copies into a golden and a goldens report holds."""
    try:
        return Transcript.model_validate(dict(value))
    except ValidationError as error:
        problems: Problems = []
        for problem in error.errors():
            where = field + "".join(
                f"[{part}]" if isinstance(part, int) else f".{part}" for part in problem["loc"]
            )
            problems.append((where, problem["msg"]))
        raise TranscriptError(problems) from None


def _shape(
    entries: list[tuple[str, Any]], has_system: bool, field: str, problems: Problems
) -> Shape:
    """The one shape the run's entries show (OpenAI chat when none shows any); a problem at
    the first entry of a second shape."""
    first: tuple[Shape, str] | None = ("anthropic", f"{field}.system") if has_system else None
    for place, entry in entries:
        for shape, sign in _signs(entry):
            if first is None:
                first = (shape, place)
            elif shape != first[0]:
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
    if entry.get("type") in RESPONSES_ITEMS:
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


def _role(entry: Mapping[str, Any], place: str, allowed: Sequence[str], problems: Problems) -> Any:
    role = entry.get("role")
    if role not in allowed:
        shown = "no role" if role is None else f"unknown role {role!r}"
        problems.append((f"{place}.role", f"{shown}; roles here are {', '.join(allowed)}"))
        return None
    return role


def _parts_text(content: Any, place: str, problems: Problems) -> str:
    """Text content, or text parts joined; an image or file part is named, never dropped."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        problems.append(
            (f"{place}.content", f"must be text or a list of parts, not {type(content).__name__}")
        )
        return ""
    texts = []
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(f"(refusal) {part['refusal']}")
        elif kind in (
            "image_url",
            "image",
            "input_image",
            "input_audio",
            "file",
            "input_file",
            "document",
        ):
            texts.append(f"({kind.replace('input_', '').replace('_url', '')} not shown)")
        else:
            problems.append((f"{place}.content[{index}]", f"unknown content part {kind!r}"))
    return "\n".join(texts)


def _arguments(raw: Any, place: str, problems: Problems) -> Any:
    """Arguments recorded as a JSON string (OpenAI), parsed; not JSON is a problem."""
    if not isinstance(raw, str):
        problems.append((place, f"must be a JSON string, not {type(raw).__name__}"))
        return None
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as error:
        problems.append((place, f"is not JSON ({error.msg} at character {error.pos})"))
        return None


def _chat(entry: Mapping[str, Any], place: str, problems: Problems) -> list[Message]:
    """One OpenAI Chat Completions message."""
    role = _role(entry, place, ("system", "developer", "user", "assistant", "tool"), problems)
    text = _parts_text(entry.get("content"), place, problems)
    if isinstance(entry.get("refusal"), str):
        text = "\n".join(filter(None, [text, f"(refusal) {entry['refusal']}"]))
    if role == "tool":
        call_id = entry.get("tool_call_id")
        if not isinstance(call_id, str):
            problems.append((f"{place}.tool_call_id", "a tool message needs the id of its call"))
            return []
        return [Message(role="tool", text=text, answers=call_id)]
    calls = []
    for index, call in enumerate(entry.get("tool_calls") or ()):
        at = f"{place}.tool_calls[{index}]"
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            problems.append((f"{at}.function", "a tool call needs a function with a name"))
            continue
        arguments = _arguments(function.get("arguments"), f"{at}.function.arguments", problems)
        call_id = call.get("id")
        calls.append(
            ToolCall(
                id=str(call_id) if call_id else f"call{index}",
                name=function["name"],
                arguments=arguments,
            )
        )
    if role is None:
        return []
    return [Message(role=role, text=text, tool_calls=tuple(calls))]


def _anthropic(entry: Mapping[str, Any], place: str, problems: Problems) -> list[Message]:
    """One Anthropic message: its tool results become tool messages (in order), the rest one
    message of its role."""
    role = _role(entry, place, ("system", "user", "assistant"), problems)
    content = entry.get("content")
    if not isinstance(content, list):
        text = _parts_text(content, place, problems)
        return [Message(role=role, text=text)] if role else []
    messages: list[Message] = []
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    for index, block in enumerate(content):
        at = f"{place}.content[{index}]"
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "tool_result":
            if not isinstance(block.get("tool_use_id"), str):
                problems.append((f"{at}.tool_use_id", "a tool result needs the id of its call"))
                continue
            result = _parts_text(block.get("content"), at, problems)
            messages.append(
                Message(
                    role="tool",
                    text=result,
                    answers=block["tool_use_id"],
                    is_error=bool(block.get("is_error")),
                )
            )
        elif kind == "tool_use":
            if not isinstance(block.get("name"), str) or not isinstance(block.get("id"), str):
                problems.append((at, "a tool_use block needs an id and a name"))
                continue
            calls.append(
                ToolCall(id=block["id"], name=block["name"], arguments=block.get("input", {}))
            )
        elif kind == "thinking":
            thinking.append(str(block.get("thinking", "")))
        elif kind == "redacted_thinking":
            thinking.append("(redacted thinking)")
        else:
            texts.append(_parts_text([block], place, problems))
    if role and (texts or thinking or calls):
        messages.append(
            Message(
                role=role,
                text="\n".join(texts),
                thinking="\n".join(thinking),
                tool_calls=tuple(calls),
            )
        )
    return messages


def _responses(entry: Mapping[str, Any], place: str, problems: Problems) -> list[Message]:
    """One OpenAI Responses API item (a message without `type` is a message)."""
    kind = entry.get("type", "message")
    if kind == "message":
        role = _role(entry, place, ("system", "developer", "user", "assistant"), problems)
        text = _parts_text(entry.get("content"), place, problems)
        return [Message(role=role, text=text)] if role else []
    if kind == "function_call":
        if not isinstance(entry.get("name"), str) or not isinstance(entry.get("call_id"), str):
            problems.append((place, "a function_call needs a call_id and a name"))
            return []
        arguments = _arguments(entry.get("arguments"), f"{place}.arguments", problems)
        call = ToolCall(id=entry["call_id"], name=entry["name"], arguments=arguments)
        return [Message(role="assistant", tool_calls=(call,))]
    if kind == "function_call_output":
        if not isinstance(entry.get("call_id"), str):
            problems.append((f"{place}.call_id", "a function_call_output needs the id of its call"))
            return []
        output = entry.get("output")
        text = (
            output if isinstance(output, str) else _parts_text(output, f"{place}.output", problems)
        )
        return [Message(role="tool", text=text, answers=entry["call_id"])]
    if kind == "reasoning":
        parts = [*(entry.get("summary") or ()), *(entry.get("content") or ())]
        texts = [
            part["text"]
            for part in parts
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
        shown = "\n".join(texts) or "(reasoning not readable: encrypted)"
        return [Message(role="assistant", thinking=shown)]
    problems.append(
        (f"{place}.type", f"unknown item type {kind!r}; items are {', '.join(RESPONSES_ITEMS)}")
    )
    return []


def _same_turn(previous: Message, item: Message) -> bool:
    """Whether a Responses item continues the assistant's turn in `previous` (its reasoning,
    then its text, then its calls: one block, as chat and Anthropic record a turn)."""
    if previous.role != "assistant" or item.role != "assistant":
        return False
    return bool(item.tool_calls) or (not previous.text and not previous.tool_calls)


def _joined(previous: Message, item: Message) -> Message:
    thinking = "\n".join(filter(None, [previous.thinking, item.thinking]))
    return previous.model_copy(
        update={
            "thinking": thinking,
            "text": previous.text or item.text,
            "tool_calls": previous.tool_calls + item.tool_calls,
        }
    )


def unanswered(messages: list[Message], places: list[str], verb: str = "answers") -> Problems:
    """A problem at `places[i]` for each tool result whose call is not earlier in the run (a
    tool result `verb`s its call: letta's tool return `returns` it)."""
    problems = []
    seen: set[str] = set()
    for message, place in zip(messages, places, strict=True):
        if message.answers is not None and message.answers not in seen:
            problems.append(
                (place, f"{verb} call {message.answers!r}, which is not earlier in the run")
            )
        seen.update(call.id for call in message.tool_calls)
    return problems


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

"""letta's message objects, each read twice over: what letta's extractors read of it
(`LettaMessage`) and the canonical Messages a rubric judging the run sees (`read_message`).

letta's client reads them from an agent as `letta_client.types.agents.Message`, told apart by
`message_type`; every problem is named by where it is (`messages[3].tool_call.arguments`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rubriclib.item import Message, ToolCall

MESSAGE_TYPES = (
    "system_message",
    "user_message",
    "reasoning_message",
    "hidden_reasoning_message",
    "tool_call_message",
    "tool_return_message",
    "assistant_message",
    "approval_request_message",
    "approval_response_message",
    "summary_message",
    "event_message",
)
"""letta's message objects (letta-evals 0.26's `LettaMessageUnion`)."""


@dataclass(frozen=True)
class LettaCall:
    """A tool call as letta records it: its arguments are the JSON text the model wrote (what
    letta's `tool_arguments` extractor returns)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class LettaMessage:
    """What letta's extractors read of one message: its type, an assistant message's content
    (flattened as letta's `flatten_content` does), a tool call message's calls (`tool_calls`,
    else `tool_call`: letta's order), a tool return's call id and return value."""

    kind: str
    content: str = ""
    calls: tuple[LettaCall, ...] = ()
    call_id: str | None = None
    returned: str | None = None


Problems = list[tuple[str, str]]
"""`(where, what is wrong)`, e.g. `("messages[3].tool_call.arguments", "is not JSON ...")`."""


def read_message(
    entry: Any, place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]] | None:
    """One of letta's message objects: what the extractors read, and its canonical messages."""
    if not isinstance(entry, Mapping):
        problems.append((place, f"must be a message (a mapping), not {type(entry).__name__}"))
        return None
    kind = entry.get("message_type")
    if kind not in MESSAGE_TYPES:
        shown = "no message_type" if kind is None else f"unknown message_type {kind!r}"
        problems.append(
            (f"{place}.message_type", f"{shown}; letta's are {', '.join(MESSAGE_TYPES)}")
        )
        return None
    return _READERS[kind](entry, place, problems)  # with problems, the run is refused


def _text(
    entry: Mapping[str, Any], key: str, place: str, problems: Problems, required: bool = True
) -> str:
    value = entry.get(key)
    if isinstance(value, str):
        return value
    if value is None and not required:
        return ""
    shown = "is required" if value is None else f"must be text, not {type(value).__name__}"
    problems.append((f"{place}.{key}", f"{shown} (a {entry['message_type']})"))
    return ""


def _parts(content: Any, at: str, problems: Problems, images: bool, separator: str) -> str:
    """Text content (the field at `at`), or content parts (`{type: text, text}`; on a user
    message and a tool return images too, named, never dropped), joined by `separator`."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        shown = (
            "is required"
            if content is None
            else f"must be text or a list of parts, not {type(content).__name__}"
        )
        problems.append((at, shown))
        return ""
    texts = []
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if (
            isinstance(part, Mapping)
            and kind in (None, "text")
            and isinstance(part.get("text"), str)
        ):
            texts.append(part["text"])
        elif images and kind == "image":
            texts.append("(image not shown)")
        else:
            allowed = "text and image parts" if images else "text parts ({type: text, text})"
            problems.append((f"{at}[{index}]", f"unknown content part; here: {allowed}"))
    return separator.join(texts)


def _assistant(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    # letta's flatten_content: text as is, parts' texts joined by a space
    text = _parts(entry.get("content"), f"{place}.content", problems, images=False, separator=" ")
    return LettaMessage("assistant_message", content=text), [Message(role="assistant", text=text)]


def _user(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    text = _parts(entry.get("content"), f"{place}.content", problems, images=True, separator="\n")
    return LettaMessage("user_message"), [Message(role="user", text=text)]


def _system(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    text = _text(entry, "content", place, problems)
    return LettaMessage("system_message"), [Message(role="system", text=text)]


def _reasoning(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    thinking = _text(entry, "reasoning", place, problems)
    return LettaMessage("reasoning_message"), [Message(role="assistant", thinking=thinking)]


def _hidden_reasoning(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    hidden = _text(entry, "hidden_reasoning", place, problems, required=False)
    state = entry.get("state")
    shown = hidden or f"(reasoning {state if isinstance(state, str) else 'hidden'})"
    return LettaMessage("hidden_reasoning_message"), [Message(role="assistant", thinking=shown)]


def _calls(entry: Mapping[str, Any], place: str, problems: Problems) -> list[tuple[str, LettaCall]]:
    """`tool_calls` when it holds any, else `tool_call` (letta's extractors read them so), each
    with where it is; a `tool_call` that is none of `tool_calls` is a problem, since letta would
    never read it."""
    many, one = entry.get("tool_calls"), entry.get("tool_call")
    if many is not None and not isinstance(many, list):
        kind = type(many).__name__
        problems.append((f"{place}.tool_calls", f"must be a list of tool calls, not {kind}"))
        return []
    raw = [(f"{place}.tool_calls[{n}]", call) for n, call in enumerate(many or ())]
    if not raw and one:
        raw = [(f"{place}.tool_call", one)]
    if not raw:
        problems.append((place, f"a {entry['message_type']} needs tool_call or tool_calls"))
        return []
    calls = []
    for at, call in raw:
        if not isinstance(call, Mapping) or not all(
            isinstance(call.get(key), str) for key in ("tool_call_id", "name", "arguments")
        ):
            problems.append((at, "a tool call needs text tool_call_id, name and arguments"))
            continue
        calls.append((at, LettaCall(call["tool_call_id"], call["name"], call["arguments"])))
    if (
        many
        and isinstance(one, Mapping)
        and one.get("tool_call_id") not in {call.id for _, call in calls}
    ):
        problems.append(
            (
                f"{place}.tool_call",
                f"call {one.get('tool_call_id')!r} is none of tool_calls: letta reads tool_calls "
                "(tool_call is the deprecated copy of one of them)",
            )
        )
    return calls


def _canonical(calls: list[tuple[str, LettaCall]], problems: Problems) -> tuple[ToolCall, ...]:
    """The calls with their arguments parsed: letta records JSON text, and text that is not
    JSON is a problem (the call is kept, so that its return is not reported too)."""
    parsed = []
    for at, call in calls:
        arguments: Any = call.arguments
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as error:
            problems.append(
                (f"{at}.arguments", f"is not JSON ({error.msg} at character {error.pos})")
            )
        parsed.append(ToolCall(id=call.id, name=call.name, arguments=arguments))
    return tuple(parsed)


def _tool_call(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    calls = _calls(entry, place, problems)
    canonical = _canonical(calls, problems)
    read = LettaMessage("tool_call_message", calls=tuple(call for _, call in calls))
    return read, [Message(role="assistant", tool_calls=canonical)]


def _approval_request(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    canonical = _canonical(_calls(entry, place, problems), problems)
    text = "(asks for approval before this call)"
    return LettaMessage("approval_request_message"), [
        Message(role="assistant", text=text, tool_calls=canonical)
    ]


def _with_output(text: str, entry: Mapping[str, Any]) -> str:
    """A tool's return value, then what it printed (`stdout`, `stderr`), when it did."""
    for stream in ("stdout", "stderr"):
        lines = entry.get(stream)
        if isinstance(lines, list) and lines:
            text += f"\n({stream})\n" + "\n".join(str(line).rstrip("\n") for line in lines)
    return text


def _returned(entry: Mapping[str, Any], place: str, problems: Problems) -> Message | None:
    """One tool return (a tool_return_message, or one of its `tool_returns`)."""
    call_id = entry.get("tool_call_id")
    if not isinstance(call_id, str):
        problems.append((f"{place}.tool_call_id", "a tool return needs the id of its call"))
        return None
    status = entry.get("status")
    if status not in (None, "success", "error"):
        problems.append((f"{place}.status", f"must be success or error, not {status!r}"))
        return None
    value = entry.get("tool_return")
    if isinstance(value, list):
        text = _parts(value, f"{place}.tool_return", problems, images=True, separator="\n")
    elif isinstance(value, str):
        text = value
    else:
        problems.append((f"{place}.tool_return", "a tool return needs its value (text)"))
        return None
    is_error = status == "error" or entry.get("is_err") is True
    return Message(role="tool", text=_with_output(text, entry), answers=call_id, is_error=is_error)


def _tool_return(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    main = _returned(entry, place, problems)
    if main is not None and not isinstance(entry.get("tool_return"), str):
        problems.append((f"{place}.tool_return", "must be text (a tool_return_message)"))
    messages = []
    extra = entry.get("tool_returns")
    if extra is not None and not isinstance(extra, list):
        problems.append((f"{place}.tool_returns", f"must be a list, not {type(extra).__name__}"))
    for index, returned in enumerate(extra or ()):
        at = f"{place}.tool_returns[{index}]"
        if not isinstance(returned, Mapping):
            problems.append(
                (at, f"must be a tool return (a mapping), not {type(returned).__name__}")
            )
            continue
        if (one := _returned(returned, at, problems)) is not None:
            messages.append(one)
    if main is not None and main.answers not in {m.answers for m in messages}:
        messages.insert(0, main)
    read = LettaMessage(
        "tool_return_message",
        call_id=entry.get("tool_call_id"),
        returned=entry.get("tool_return") if isinstance(entry.get("tool_return"), str) else None,
    )
    return read, messages


def _approval_response(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    """The user's answer to approval requests: each approval said, each tool return a tool
    message."""
    lines, messages = [], []
    reason = entry.get("reason")
    approvals = entry.get("approvals")
    if approvals is not None and not isinstance(approvals, list):
        problems.append((f"{place}.approvals", f"must be a list, not {type(approvals).__name__}"))
        approvals = []
    for index, approval in enumerate(approvals or ()):
        at = f"{place}.approvals[{index}]"
        if isinstance(approval, Mapping) and approval.get("type") == "tool":
            if (returned := _returned(approval, at, problems)) is not None:
                messages.append(returned)
        elif isinstance(approval, Mapping) and isinstance(approval.get("approve"), bool):
            said = "approved" if approval["approve"] else "denied"
            why = f": {approval['reason']}" if isinstance(approval.get("reason"), str) else ""
            lines.append(f"(approval) {said} call {approval.get('tool_call_id')}{why}")
        else:
            problems.append((at, "must be an approval {approve, tool_call_id} or a tool return"))
    if isinstance(entry.get("approve"), bool):
        said = "approved" if entry["approve"] else "denied"
        lines.insert(0, f"(approval) {said}{f': {reason}' if isinstance(reason, str) else ''}")
    if lines or not messages:
        messages.insert(0, Message(role="user", text="\n".join(lines) or "(approval)"))
    return LettaMessage("approval_response_message"), messages


def _summary(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    summary = _text(entry, "summary", place, problems)
    text = f"(summary of earlier messages)\n{summary}"
    return LettaMessage("summary_message"), [Message(role="system", text=text)]


def _event(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> tuple[LettaMessage, list[Message]]:
    kind = entry.get("event_type")
    data = json.dumps(entry.get("event_data"), ensure_ascii=False, sort_keys=True)
    text = f"(event: {kind})\n{data}"
    return LettaMessage("event_message"), [Message(role="system", text=text)]


_READERS: dict[
    str, Callable[[Mapping[str, Any], str, Problems], tuple[LettaMessage, list[Message]]]
] = {
    "system_message": _system,
    "user_message": _user,
    "reasoning_message": _reasoning,
    "hidden_reasoning_message": _hidden_reasoning,
    "tool_call_message": _tool_call,
    "tool_return_message": _tool_return,
    "assistant_message": _assistant,
    "approval_request_message": _approval_request,
    "approval_response_message": _approval_response,
    "summary_message": _summary,
    "event_message": _event,
}

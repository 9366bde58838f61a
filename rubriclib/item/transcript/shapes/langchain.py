"""LangChain and LangGraph messages: `messages_to_dict`'s `{type, data}`, a message's own dump
(`{type, content, ...}`), `dumpd`'s constructor envelope, and the role dicts LangChain accepts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubriclib.item.transcript.model import Message, Problems, Role, ToolCall
from rubriclib.item.transcript.parts import json_arguments, part_text, parts_text, thought

ROLES: dict[str, Role] = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "developer": "developer",
    "tool": "tool",
}
"""LangChain's message types and the role names it accepts for them, as roles here."""
MESSAGE_TYPES = ("human", "ai", "system", "tool")
THINKING_BLOCKS = ("thinking", "redacted_thinking", "reasoning")
CALL_BLOCKS = ("tool_use", "tool_call")
"""Content blocks that are calls: an AIMessage's `tool_calls` hold the same calls."""


def langchain_objects(values: list[Any]) -> str | None:
    """When `values` hold LangChain's message objects (langchain_core's `BaseMessage`, known
    by its classes' names: LangChain is never imported), the problem saying how to pass them:
    as `messages_to_dict` writes them, which is read."""
    names = list(dict.fromkeys(type(v).__name__ for v in values if _is_message_object(v)))
    if not names:
        return None
    return (
        f"LangChain message objects ({', '.join(names)}) are read as their dicts: pass "
        "langchain_core.messages.messages_to_dict(messages)"
    )


def _is_message_object(value: Any) -> bool:
    return any(
        kind.__name__ == "BaseMessage" and kind.__module__.startswith("langchain_core.")
        for kind in type(value).__mro__
    )


def langchain_sign(entry: Mapping[str, Any]) -> str | None:
    """What marks `entry` as LangChain's (a message type, a role alias, calls with `args`)."""
    if entry.get("lc") == 1 and entry.get("type") == "constructor":
        return "a constructor envelope ('lc': 1)"
    if isinstance(entry.get("data"), Mapping) and isinstance(entry.get("type"), str):
        return f"type {entry['type']!r} with data"
    if "role" not in entry and entry.get("type") in MESSAGE_TYPES:
        return f"type {entry['type']!r}"
    if entry.get("role") in ("human", "ai"):
        return f"role {entry['role']!r}"
    calls = entry.get("tool_calls")
    if isinstance(calls, list) and any(
        isinstance(call, Mapping) and "args" in call for call in calls
    ):
        return "tool_calls with args"
    return None


def langchain_message(entry: Mapping[str, Any], place: str, problems: Problems) -> list[Message]:
    """One LangChain message in any of its recorded forms."""
    fields, at = _fields(entry, place)
    key = "role" if "role" in fields else "type"
    kind = fields.get(key)
    role = ROLES.get(kind) if isinstance(kind, str) else None
    if role is None:
        shown = f"no {key}" if kind is None else f"unknown message {key} {kind!r}"
        problems.append((f"{at}.{key}", f"{shown}; LangChain's here are {', '.join(ROLES)}"))
        return []
    extra = fields.get("additional_kwargs")
    extra = {**fields, **extra} if isinstance(extra, Mapping) else fields
    if role == "system" and extra.get("__openai_role__") == "developer":
        role = "developer"
    text, thinking = _content(fields.get("content"), at, problems)
    if isinstance(extra.get("reasoning_content"), str):
        thinking = "\n".join(filter(None, [extra["reasoning_content"], thinking]))
    if isinstance(extra.get("refusal"), str):
        text = "\n".join(filter(None, [text, f"(refusal) {extra['refusal']}"]))
    if role != "tool":
        calls = _calls(fields, at, problems)
        return [Message(role=role, text=text, thinking=thinking, tool_calls=calls)]
    if not isinstance(fields.get("tool_call_id"), str):
        problems.append((f"{at}.tool_call_id", "a tool message needs the id of its call"))
        return []
    name = fields.get("name")
    return [
        Message(
            role="tool",
            text=text,
            answers=fields["tool_call_id"],
            tool_name=name if isinstance(name, str) else None,
            is_error=fields.get("status") == "error",
        )
    ]


def _fields(entry: Mapping[str, Any], place: str) -> tuple[Mapping[str, Any], str]:
    """A message's own fields and where they are: inside `data` (`messages_to_dict`) or
    `kwargs` (`dumpd`, its type from the class name), else the entry itself."""
    if isinstance(entry.get("data"), Mapping):
        return {"type": entry.get("type"), **entry["data"]}, f"{place}.data"
    if entry.get("lc") == 1 and isinstance(entry.get("kwargs"), Mapping):
        names = entry.get("id")
        name = str(names[-1]) if isinstance(names, list) and names else ""
        kind = name.removesuffix("Chunk").removesuffix("Message").lower()
        return {**entry["kwargs"], "type": kind}, f"{place}.kwargs"
    return entry, place


def _content(content: Any, at: str, problems: Problems) -> tuple[str, str]:
    """A message's text and thinking: content that is text, or a list of blocks (bare strings,
    parts, langchain-anthropic's thinking blocks, LangChain's reasoning blocks)."""
    if not isinstance(content, list):
        return parts_text(content, at, problems), ""
    texts: list[str] = []
    thinking: list[str] = []
    for index, block in enumerate(content):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if isinstance(block, str):
            texts.append(block)
        elif kind in THINKING_BLOCKS:
            thinking.append(thought(block))
        elif kind not in CALL_BLOCKS:
            texts.append(part_text(block, f"{at}.content[{index}]", problems))
    return "\n".join(texts), "\n".join(thinking)


def _calls(fields: Mapping[str, Any], at: str, problems: Problems) -> tuple[ToolCall, ...]:
    """An AIMessage's calls: its `tool_calls` (LangChain's `{name, args, id}` or OpenAI's
    `{id, function}`), then any call block in its content that they do not hold; a call
    LangChain could not parse (`invalid_tool_calls`) is a problem."""
    listed = [
        (f"{at}.tool_calls[{index}]", call)
        for index, call in enumerate(_list(fields, "tool_calls"))
    ]
    ids = {call.get("id") for _, call in listed if isinstance(call, Mapping)}
    content = _list(fields, "content")
    listed += [
        (f"{at}.content[{index}]", block)
        for index, block in enumerate(content)
        if isinstance(block, Mapping) and block.get("type") in CALL_BLOCKS
        if block.get("id") not in ids
    ]
    calls = [call for where, raw in listed if (call := _call(raw, where, problems))]
    for index, invalid in enumerate(_list(fields, "invalid_tool_calls")):
        error = invalid.get("error") if isinstance(invalid, Mapping) else None
        problems.append(
            (
                f"{at}.invalid_tool_calls[{index}]",
                "a call LangChain could not parse" + (f": {error}" if error else ""),
            )
        )
    return tuple(calls)


def _call(raw: Any, where: str, problems: Problems) -> ToolCall | None:
    """One call: LangChain's `{name, args, id}`, OpenAI's `{id, function}` or a content block
    (`tool_use`'s `input`, `tool_call`'s `args`)."""
    call = raw if isinstance(raw, Mapping) else {}
    function = call.get("function")
    if isinstance(function, Mapping):
        name = function.get("name")
        at = f"{where}.function.arguments"
        arguments = json_arguments(function.get("arguments"), at, problems)
    else:
        name, arguments = call.get("name"), call.get("args", call.get("input", {}))
    call_id = call.get("id") or ""  # none recorded: given one by `with_call_ids`
    if not isinstance(name, str) or not isinstance(call_id, str):
        problems.append((where, "a tool call needs a name (and an id, when it has one, is text)"))
        return None
    return ToolCall(id=call_id, name=name, arguments=arguments)


def _list(fields: Mapping[str, Any], key: str) -> list[Any]:
    value = fields.get(key)
    return value if isinstance(value, list) else []

"""OpenAI Chat Completions messages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubriclib.item.transcript.model import Message, Problems, ToolCall
from rubriclib.item.transcript.parts import json_arguments, parts_text, role_of


def chat_message(entry: Mapping[str, Any], place: str, problems: Problems) -> list[Message]:
    """One OpenAI Chat Completions message."""
    role = role_of(entry, place, ("system", "developer", "user", "assistant", "tool"), problems)
    text = parts_text(entry.get("content"), place, problems)
    if isinstance(entry.get("refusal"), str):
        text = "\n".join(filter(None, [text, f"(refusal) {entry['refusal']}"]))
    if role == "tool":
        call_id = entry.get("tool_call_id")
        if not isinstance(call_id, str):
            problems.append((f"{place}.tool_call_id", "a tool message needs the id of its call"))
            return []
        name = entry.get("name")
        tool_name = name if isinstance(name, str) and name else None
        return [Message(role="tool", text=text, answers=call_id, tool_name=tool_name)]
    calls = []
    for index, call in enumerate(entry.get("tool_calls") or ()):
        at = f"{place}.tool_calls[{index}]"
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            problems.append((f"{at}.function", "a tool call needs a function with a name"))
            continue
        arguments = json_arguments(function.get("arguments"), f"{at}.function.arguments", problems)
        call_id = call.get("id")
        calls.append(
            ToolCall(
                id=str(call_id) if call_id else "",  # given one by `with_call_ids`
                name=function["name"],
                arguments=arguments,
            )
        )
    if role is None:
        return []
    return [Message(role=role, text=text, tool_calls=tuple(calls))]

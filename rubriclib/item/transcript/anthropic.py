"""Anthropic Messages: content blocks, tool results inside user turns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubriclib.item.transcript.model import Message, Problems, ToolCall
from rubriclib.item.transcript.parts import parts_text, role_of

ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")


def anthropic_message(entry: Mapping[str, Any], place: str, problems: Problems) -> list[Message]:
    """One Anthropic message: its tool results become tool messages (in order), the rest one
    message of its role."""
    role = role_of(entry, place, ("system", "user", "assistant"), problems)
    content = entry.get("content")
    if not isinstance(content, list):
        text = parts_text(content, place, problems)
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
            result = parts_text(block.get("content"), at, problems)
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
            texts.append(parts_text([block], place, problems))
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

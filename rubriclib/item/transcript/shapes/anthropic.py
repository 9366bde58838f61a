"""Anthropic Messages: content blocks, tool results inside user turns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubriclib.item.transcript.model import Message, Problems, ToolCall
from rubriclib.item.transcript.parts import part_text, parts_text, role_of, thought

ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking", "redacted_thinking")
SDK_MESSAGE_KEYS = ("model", "stop_reason", "usage")
"""What an Anthropic SDK `Message` dumped has beside its role and content (and a Responses
`message` item never has); those and its other fields (id, container) are not read."""


def sdk_message(entry: Mapping[str, Any]) -> bool:
    """Whether `entry` is an Anthropic SDK `Message` dumped (`type: message`, `stop_reason`...)."""
    return entry.get("type") == "message" and any(key in entry for key in SDK_MESSAGE_KEYS)


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
        elif kind in ("thinking", "redacted_thinking"):
            thinking.append(thought(block))
        else:
            texts.append(part_text(block, at, problems))
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

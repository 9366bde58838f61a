"""OpenAI Responses API items; an assistant's reasoning, text and calls joined into one turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubriclib.item.transcript.model import Message, Problems, ToolCall
from rubriclib.item.transcript.parts import json_arguments, parts_text, role_of

RESPONSES_ITEMS = ("message", "function_call", "function_call_output", "reasoning")


def responses_item(entry: Mapping[str, Any], place: str, problems: Problems) -> list[Message]:
    """One OpenAI Responses API item (a message without `type` is a message)."""
    kind = entry.get("type", "message")
    if kind == "message":
        role = role_of(entry, place, ("system", "developer", "user", "assistant"), problems)
        text = parts_text(entry.get("content"), place, problems)
        return [Message(role=role, text=text)] if role else []
    if kind == "function_call":
        if not isinstance(entry.get("name"), str) or not isinstance(entry.get("call_id"), str):
            problems.append((place, "a function_call needs a call_id and a name"))
            return []
        arguments = json_arguments(entry.get("arguments"), f"{place}.arguments", problems)
        call = ToolCall(id=entry["call_id"], name=entry["name"], arguments=arguments)
        return [Message(role="assistant", tool_calls=(call,))]
    if kind == "function_call_output":
        if not isinstance(entry.get("call_id"), str):
            problems.append((f"{place}.call_id", "a function_call_output needs the id of its call"))
            return []
        output = entry.get("output")
        text = (
            output if isinstance(output, str) else parts_text(output, f"{place}.output", problems)
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


def same_turn(previous: Message, item: Message) -> bool:
    """Whether a Responses item continues the assistant's turn in `previous` (its reasoning,
    then its text, then its calls: one block, as chat and Anthropic record a turn)."""
    if previous.role != "assistant" or item.role != "assistant":
        return False
    return bool(item.tool_calls) or (not previous.text and not previous.tool_calls)


def joined(previous: Message, item: Message) -> Message:
    thinking = "\n".join(filter(None, [previous.thinking, item.thinking]))
    return previous.model_copy(
        update={
            "thinking": thinking,
            "text": previous.text or item.text,
            "tool_calls": previous.tool_calls + item.tool_calls,
        }
    )

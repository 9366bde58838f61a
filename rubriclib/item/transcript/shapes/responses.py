"""OpenAI Responses API items; an assistant's reasoning, text and calls joined into one turn."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubriclib.item.transcript.model import Message, Problems, ToolCall, TranscriptError
from rubriclib.item.transcript.parts import json_arguments, parts_text, role_of, thought

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
        return [Message(role="assistant", thinking=thought(entry))]
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


def responses_request(value: Mapping[str, Any], field: str) -> tuple[Any, Any, str]:
    """A Responses run recorded as its request's `{instructions, input}` (`input` text is one
    user message) or as one whole Response: its instructions, its items and where they are."""
    if value.get("object") == "response":
        return value.get("instructions"), value.get("output"), f"{field}.output"
    unknown = sorted(set(value) - {"instructions", "input"})
    if unknown:
        raise TranscriptError(
            [(field, f"unknown key {unknown[0]!r}; a Responses run has instructions, input")]
        )
    items = value.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    return value.get("instructions"), items, f"{field}.input"


def spliced(
    entries: list[tuple[str, Any]], instructions: tuple[str, Any] | None, problems: Problems
) -> tuple[list[tuple[str, Any]], tuple[str, Any] | None]:
    """Each whole Response (`object: response`) among `entries` replaced by its `output` items;
    the run's instructions (`(where, value)`: those given, else the first Response's), a problem
    at a Response whose instructions differ (a run is read with one set)."""
    items: list[tuple[str, Any]] = []
    for place, entry in entries:
        if not isinstance(entry, Mapping) or entry.get("object") != "response":
            items.append((place, entry))
            continue
        own = entry.get("instructions")
        if own is not None and instructions is None:
            instructions = (f"{place}.instructions", own)
        elif own is not None and instructions is not None and own != instructions[1]:
            problems.append(
                (f"{place}.instructions", f"differ from {instructions[0]}: a run has one set")
            )
        output = entry.get("output")
        if not isinstance(output, list):
            problems.append((f"{place}.output", "a Response's output must be a list of items"))
            continue
        items.extend((f"{place}.output[{index}]", item) for index, item in enumerate(output))
    return items, instructions

"""Pydantic AI's messages as `ModelMessagesTypeAdapter.dump_json(result.all_messages())` writes
them: requests (`kind: request`: system and user prompts, tool returns, retries sent to the
model, the run's instructions) and responses (`kind: response`: text, thinking, tool calls),
each a list of parts by `part_kind`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rubriclib.item.transcript.model import Message, Problems, ToolCall
from rubriclib.item.transcript.parts import json_arguments

KINDS = ("request", "response")
ERROR_OUTCOMES = ("failed", "retried")
"""A tool return's `outcome`s that reach the model as an error (pydantic_ai's own list)."""
MEDIA = {
    "image-url": "image",
    "audio-url": "audio",
    "video-url": "video",
    "document-url": "document",
}
"""A user prompt's media parts by `kind`, as they are named (`(image not shown)`)."""


def pydantic_ai_sign(entry: Mapping[str, Any]) -> str | None:
    """What marks `entry` as a Pydantic AI message (its `kind` beside `parts`), or None."""
    if entry.get("kind") in KINDS and "parts" in entry:
        return f"kind {entry['kind']!r} with parts"
    return None


def pydantic_ai_run(
    entries: list[tuple[str, Any]], problems: Problems
) -> tuple[list[Message], list[str]]:
    """The run's messages and where each is recorded. A request's `instructions` are shown as a
    system message where they are first given or change, not again at every request that
    repeats them."""
    messages: list[Message] = []
    places: list[str] = []
    instructions = None
    for place, entry in entries:
        if entry.get("kind") not in KINDS or not isinstance(entry.get("parts"), list):
            problems.append(
                (place, "must be a Pydantic AI message: kind request or response, with parts")
            )
            continue
        given = entry.get("instructions")
        if entry["kind"] == "request" and isinstance(given, str) and given != instructions:
            instructions = given
            messages.append(Message(role="system", text=given))
            places.append(f"{place}.instructions")
        read = (
            _response(entry, place, problems)
            if entry["kind"] == "response"
            else [
                (message, at)
                for at, part in _parts(entry, place)
                if (message := _request_part(part, at, problems))
            ]
        )
        for message, at in read:
            messages.append(message)
            places.append(at)
    return messages, places


def _parts(entry: Mapping[str, Any], place: str) -> list[tuple[str, Any]]:
    return [(f"{place}.parts[{index}]", part) for index, part in enumerate(entry["parts"])]


def _request_part(part: Any, at: str, problems: Problems) -> Message | None:
    """One part of a request as the message it is; a problem for a part not read."""
    kind = part.get("part_kind") if isinstance(part, Mapping) else None
    if kind == "system-prompt":
        return Message(role="system", text=_text(part.get("content")))
    if kind == "user-prompt":
        return Message(role="user", text=_user_content(part.get("content"), at, problems))
    if kind == "tool-return":
        outcome = part.get("outcome", "success")
        text = _text(part.get("content"))
        if outcome not in ("success", *ERROR_OUTCOMES):
            text = f"({outcome}) {text}"
        return _result(part, text, outcome in ERROR_OUTCOMES)
    if kind == "retry-prompt" and part.get("tool_name"):  # before 2.x: a tool's retry
        return _result(part, _text(part.get("content")), True)
    if kind in ("retry-prompt", "retry-feedback"):  # what Pydantic AI asked the model to fix
        return Message(role="user", text=_text(part.get("content")))
    problems.append((at, _unread(kind)))
    return None


def _result(part: Mapping[str, Any], text: str, is_error: bool) -> Message:
    return Message(
        role="tool",
        text=text,
        answers=str(part.get("tool_call_id") or ""),
        tool_name=part.get("tool_name"),
        is_error=is_error,
    )


def _response(
    entry: Mapping[str, Any], place: str, problems: Problems
) -> list[tuple[Message, str]]:
    """A response's parts as one assistant message: its texts, thinking and tool calls."""
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[ToolCall] = []
    for at, part in _parts(entry, place):
        kind = part.get("part_kind") if isinstance(part, Mapping) else None
        if kind == "text":
            texts.append(_text(part.get("content")))
        elif kind == "thinking":
            thinking.append(_text(part.get("content")) or "(redacted thinking)")
        elif kind == "tool-call":
            arguments = part.get("args")
            if isinstance(arguments, str):
                arguments = json_arguments(arguments, f"{at}.args", problems)
            calls.append(
                ToolCall(
                    id=str(part.get("tool_call_id") or ""),
                    name=str(part.get("tool_name", "")),
                    arguments={} if arguments is None else arguments,
                )
            )
        elif kind == "file":
            texts.append("(file not shown)")
        else:
            problems.append((at, _unread(kind)))
    message = Message(
        role="assistant",
        text="\n".join(texts),
        thinking="\n".join(thinking),
        tool_calls=tuple(calls),
    )
    return [(message, place)]


def _user_content(content: Any, at: str, problems: Problems) -> str:
    """A user prompt's text: its text, or its parts' (media named, never dropped)."""
    if not isinstance(content, list):
        return _text(content)
    shown = []
    for index, part in enumerate(content):
        kind = part.get("kind") if isinstance(part, Mapping) else None
        if isinstance(part, str):
            shown.append(part)
        elif kind == "text-content":
            shown.append(_text(part.get("content")))
        elif kind in MEDIA or kind == "binary":
            media = MEDIA.get(kind) or str(part.get("media_type", "file")).split("/")[0]
            shown.append(f"({media} not shown)")
        else:
            problems.append((f"{at}.content[{index}]", f"unknown user content kind {kind!r}"))
    return "\n".join(shown)


def _text(content: Any) -> str:
    """Text as written; anything else (a tool's returned object, a retry's errors) as JSON."""
    if content is None or isinstance(content, str):
        return content or ""
    return json.dumps(content, ensure_ascii=False)


def _unread(kind: Any) -> str:
    return (
        f"part_kind {kind!r} is not read (read: system-prompt, user-prompt, tool-return, "
        "retry-prompt, retry-feedback, text, thinking, tool-call, file)"
    )

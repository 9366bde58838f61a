"""inspect_ai's chat messages as JSON (a log's `messages`, or `ChatMessage.model_dump()`): roles
system, user, assistant and tool; content text or typed parts; tool calls with their arguments
as objects; a tool message's `tool_call_id`, `function` and `error`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rubriclib.item.transcript.model import (
    Message,
    Problems,
    ToolCall,
    Transcript,
    TranscriptError,
    paired_transcript,
)

ROLES = ("system", "user", "assistant", "tool")
NEEDS = {
    "text": ("text",),
    "reasoning": ("reasoning",),
    "tool_use": ("tool_type", "id", "name", "arguments"),
}
"""The texts each kind of content part cannot do without."""


def read_inspect(
    messages: Sequence[Any], field: str = "messages", warnings: Problems | None = None
) -> Transcript:
    """inspect's chat messages (dicts) as a Transcript of shape `inspect`, nothing silently
    dropped: reasoning is the message's thinking (a redacted one said to be), an image, audio,
    video, document or provider payload is named, a tool error is a tool result marked as one
    with inspect's error type and message, and a tool the provider ran itself (web search, MCP)
    is a call followed by its result. A run that cannot be read (a tool message whose call is
    not earlier in the run; a role or part inspect does not have) is a TranscriptError naming
    `field[N]`; a tool message naming another function than its call's is a warning, as
    `read_transcript` warns."""
    if not messages:
        raise TranscriptError([(field, "is empty: the sample has no messages (an agent run)")])
    problems: Problems = []
    read: list[Message] = []
    places: list[str] = []
    for index, message in enumerate(messages):
        place = f"{field}[{index}]"
        found = inspect_message(message, place, problems)
        read.extend(found)
        places.extend(place for _ in found)
    return paired_transcript(read, places, "inspect", problems, warnings)


def inspect_message(message: Any, place: str, problems: Problems) -> list[Message]:
    """One inspect message; a server-side tool use in an assistant's content adds its result
    after the message."""
    role = message.get("role") if isinstance(message, Mapping) else None
    if role not in ROLES:
        shown = "not a message" if not isinstance(message, Mapping) else f"unknown role {role!r}"
        problems.append((f"{place}.role", f"{shown}; roles are {', '.join(ROLES)}"))
        return []
    texts, thinking, used = _content(message.get("content"), place, problems)
    if role == "tool":
        return _tool_result(message, texts, thinking, place, problems)
    if role == "user" and message.get("tool_call_id"):
        called = message["tool_call_id"]
        texts.insert(0, f"(content for tool call {', '.join(map(str, called))})")
    calls = []
    for index, call in enumerate(message.get("tool_calls") or () if role == "assistant" else ()):
        at = f"{place}.tool_calls[{index}]"
        if not isinstance(call, Mapping) or not all(
            isinstance(call.get(key), str) for key in ("id", "function")
        ):
            problems.append((at, "a tool call needs an id and a function"))
            continue
        calls.append(
            ToolCall(id=call["id"], name=call["function"], arguments=call.get("arguments"))
        )
        if call.get("parse_error"):
            texts.append(f"(arguments of tool call {call['id']} not parsed) {call['parse_error']}")
    calls.extend(call for call, _ in used)
    read = Message(role=role, text="\n".join(texts), thinking=thinking, tool_calls=tuple(calls))
    return [read, *(result for _, result in used)]


def _tool_result(
    message: Mapping[str, Any], texts: list[str], thinking: str, place: str, problems: Problems
) -> list[Message]:
    """A tool message: its result, or the error inspect recorded for the call."""
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str) or not call_id:
        problems.append((f"{place}.tool_call_id", "a tool message needs the id of its call"))
        return []
    error = message.get("error")
    if isinstance(error, Mapping):  # inspect's type "unknown" is a plain ToolError
        kind = "" if error.get("type") == "unknown" else f": {error.get('type')}"
        texts.append(f"(error{kind}) {error.get('message')}")
    function = message.get("function")
    if function is not None and not isinstance(function, str):
        problems.append((f"{place}.function", f"must be text, not {type(function).__name__}"))
        return []
    result = Message(
        role="tool",
        text="\n".join(texts),
        thinking=thinking,
        answers=call_id,
        tool_name=function,
        is_error=error is not None,
    )
    return [result]


def _content(content: Any, place: str, problems: Problems) -> tuple[list[str], str, list[Any]]:
    """A message's content: its texts (other media named), its thinking, and the tools the
    provider ran itself, each a call and its result."""
    if isinstance(content, str):
        return ([content] if content else []), "", []
    if not isinstance(content, list):
        problems.append(
            (f"{place}.content", f"must be text or a list of content, not {type(content).__name__}")
        )
        return [], "", []
    texts: list[str] = []
    thinking: list[str] = []
    used: list[tuple[ToolCall, Message]] = []
    for index, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        lacks = [key for key in NEEDS.get(str(kind), ()) if not isinstance(part.get(key), str)]
        if lacks:
            problems.append((f"{place}.content[{index}].{lacks[0]}", f"a {kind} part needs text"))
        elif kind == "text":
            text = f"(refusal) {part['text']}" if part.get("refusal") else part["text"]
            cited = [_citation(citation) for citation in part.get("citations") or ()]
            texts.append("\n".join([text, f"(cited: {'; '.join(cited)})"]) if cited else text)
        elif kind == "reasoning":
            shown = "(reasoning redacted)" if part.get("redacted") else part["reasoning"]
            if part.get("summary") and part["summary"] != part["reasoning"]:
                shown = "\n".join(filter(None, [shown, f"(summary) {part['summary']}"]))
            thinking.append(shown)
        elif kind in ("image", "audio", "video"):
            source = str(part.get(kind))
            named = "" if source.startswith("data:") else f": {source}"
            texts.append(f"({kind} not shown{named})")
        elif kind == "document":
            texts.append(f"(document {part.get('filename') or part.get('mime_type')} not shown)")
        elif kind == "data":
            texts.append("(provider data not shown)")
        elif kind == "tool_use":
            used.append(_server_tool(part))
        else:
            problems.append((f"{place}.content[{index}]", f"unknown content type {kind!r}"))
    return texts, "\n".join(thinking), used


def _server_tool(part: Mapping[str, Any]) -> tuple[ToolCall, Message]:
    """A tool the provider ran itself (ContentToolUse): the call, and its result."""
    try:
        arguments = json.loads(part["arguments"])
    except (TypeError, ValueError):
        arguments = part["arguments"]  # kept as the provider recorded it
    context = part.get("context")
    ran = f"(run by the provider: {part['tool_type']}{f' on {context}' if context else ''})"
    texts = [ran, part.get("result") or ""]
    if part.get("error"):
        texts.append(f"(error) {part['error']}")
    result = Message(
        role="tool",
        text="\n".join(filter(None, texts)),
        answers=part["id"],
        is_error=bool(part.get("error")),
    )
    return ToolCall(id=part["id"], name=part["name"], arguments=arguments), result


def _citation(citation: Mapping[str, Any]) -> str:
    """What a citation points at: its URL, else its title, else the text it cites."""
    return str(citation.get("url") or citation.get("title") or citation.get("cited_text"))

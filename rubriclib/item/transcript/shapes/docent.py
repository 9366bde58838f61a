"""Docent's AgentRun as `AgentRun.model_dump_json()` writes it: several transcripts, each of
chat messages (system, user, assistant with reasoning and tool calls, tool with its error),
numbered `T0`, `T1`... in the order Docent numbers them (its AgentRunTree: transcript groups
depth first, siblings by `created_at`, the undated last), each a part of one run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from rubriclib.item.transcript.model import (
    Message,
    Problems,
    RunPart,
    ToolCall,
    Transcript,
    TranscriptError,
    paired_transcript,
)
from rubriclib.item.transcript.parts import part_text, role_of

ROLES = ("system", "user", "assistant", "tool")
SHORT = 200
"""Characters of a transcript's description, and of its metadata as JSON, its heading keeps."""
Listed = list[tuple[str, Mapping[str, Any]]]
"""`(where, entry)` for each transcript or transcript group of a run."""


def docent_sign(value: Any) -> bool:
    """Whether `value` is an AgentRun's dump (it holds `transcripts` or `transcript_groups`)."""
    return isinstance(value, Mapping) and bool({"transcripts", "transcript_groups"} & set(value))


def read_agent_run(
    value: Mapping[str, Any], field: str, warnings: Problems | None = None
) -> Transcript:
    """The run of an AgentRun dump: its transcripts in Docent's order, one part each, every
    message a block named as Docent names it (`T1B3`); a TranscriptError naming every problem.
    The run's own metadata is not shown: it is where Docent keeps scores and labels."""
    problems: Problems = []
    transcripts = _listed(value.get("transcripts"), f"{field}.transcripts", problems)
    groups = _listed(value.get("transcript_groups") or [], f"{field}.transcript_groups", problems)
    if not transcripts and not problems:
        problems.append((f"{field}.transcripts", "an AgentRun has at least one transcript"))
    if problems:
        raise TranscriptError(problems)
    messages: list[Message] = []
    places: list[str] = []
    parts: list[RunPart] = []
    for place, transcript in docent_order(transcripts, groups, problems):
        parts.append(RunPart(start=len(messages), heading=_heading(transcript)))
        listed = transcript.get("messages")
        if not isinstance(listed, list):
            problems.append((f"{place}.messages", "must be a list of messages"))
            continue
        for index, entry in enumerate(listed):
            if (message := _message(entry, f"{place}.messages[{index}]", problems)) is not None:
                messages.append(message)
                places.append(f"{place}.messages[{index}]")
    if not messages and not problems:
        problems.append((f"{field}.transcripts", "no transcript holds a message"))
    return paired_transcript(messages, places, "docent", problems, warnings, tuple(parts))


def _listed(value: Any, where: str, problems: Problems) -> Listed:
    """A list (or, as Docent still reads, a dict by id) of mappings, each with its place."""
    if isinstance(value, Mapping):  # Docent's older dump: transcripts by id
        entries = [(f"{where}.{key}", entry) for key, entry in value.items()]
    elif isinstance(value, list):
        entries = [(f"{where}[{index}]", entry) for index, entry in enumerate(value)]
    else:
        said = f"must be a list, not {type(value).__name__}"
        problems.append(
            (where, "missing: an AgentRun has a list of them" if value is None else said)
        )
        return []
    for place, entry in entries:
        if not isinstance(entry, Mapping):
            problems.append((place, f"must be a mapping, not {type(entry).__name__}"))
    return [(place, entry) for place, entry in entries if isinstance(entry, Mapping)]


def docent_order(transcripts: Listed, groups: Listed, problems: Problems) -> Listed:
    """The transcripts in the order Docent numbers them: depth first from the run through its
    groups, siblings by `created_at` (undated last, else as listed: groups, then transcripts).
    A transcript whose group leads nowhere (a missing parent, a loop) is a problem: Docent
    would leave it out."""
    group_ids = {_key(entry.get("id")) for _, entry in groups}
    children: dict[str | None, list[tuple[datetime, bool, str, Mapping[str, Any]]]] = {}
    for is_group, listed in ((True, groups), (False, transcripts)):
        for place, entry in listed:
            parent = _key(
                entry.get("parent_transcript_group_id" if is_group else "transcript_group_id")
            )
            if not is_group and parent not in group_ids:
                parent = None  # Docent puts a transcript of an unknown group under the run
            when = _created(entry.get("created_at"), f"{place}.created_at", problems)
            children.setdefault(parent, []).append((when, is_group, place, entry))

    def under(parent: str | None) -> list[tuple[datetime, bool, str, Mapping[str, Any]]]:
        return sorted(children.get(parent, []), key=lambda child: child[0])[::-1]

    ordered: Listed = []
    seen: set[str | None] = {None}
    stack = under(None)
    while stack:  # depth first, without recursion: groups may nest deeply
        _, is_group, place, entry = stack.pop()
        if not is_group:
            ordered.append((place, entry))
        elif (group := _key(entry.get("id"))) not in seen:
            seen.add(group)
            stack.extend(under(group))
    placed = {place for place, _ in ordered}
    problems.extend(
        (
            f"{place}.transcript_group_id",
            f"group {entry.get('transcript_group_id')!r} does not lead to the run (a group's "
            "parent is missing, or the groups' parents loop)",
        )
        for place, entry in transcripts
        if place not in placed
    )
    return ordered


def _key(value: Any) -> str | None:
    """An id as a key (whatever a file holds there)."""
    return value if value is None or isinstance(value, str) else repr(value)


def _created(value: Any, where: str, problems: Problems) -> datetime:
    """A `created_at` as a time to order by: the undated after every other, a zone's time in
    UTC (Docent compares them as written, and fails where it would mix the two)."""
    if value is None:
        return datetime.max
    try:
        when = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        when = None
    if when is None:
        problems.append((where, f"must be a time as ISO 8601 text, not {value!r}"[:200]))
        return datetime.max
    return when if when.tzinfo is None else when.astimezone(UTC).replace(tzinfo=None)


def _heading(transcript: Mapping[str, Any]) -> str:
    """A transcript's name (or id), its description and its metadata, each kept short."""
    name = transcript.get("name") or transcript.get("id") or "unnamed"
    said = [" ".join(str(name).split())]
    if isinstance(transcript.get("description"), str) and transcript["description"].strip():
        said.append(_short(" ".join(transcript["description"].split())))
    if isinstance(transcript.get("metadata"), Mapping) and transcript["metadata"]:
        written = json.dumps(transcript["metadata"], ensure_ascii=False, default=str)
        said.append(f"metadata {_short(written)}")
    return "; ".join(said)


def _short(text: str) -> str:
    return text if len(text) <= SHORT else text[: SHORT - 3] + "..."


def _message(entry: Any, place: str, problems: Problems) -> Message | None:
    """One Docent chat message; None (and a problem) when it cannot be read."""
    if not isinstance(entry, Mapping):
        problems.append((place, f"must be a message (a mapping), not {type(entry).__name__}"))
        return None
    role = role_of(entry, place, ROLES, problems)
    if "content" not in entry:
        problems.append((f"{place}.content", "missing: a message has content, text or parts"))
    text, thinking = _content(entry.get("content"), place, problems)
    if role == "tool":
        error = entry.get("error")
        if error is not None:
            said = error.get("message") if isinstance(error, Mapping) else None
            told = said if isinstance(said, str) else json.dumps(error, default=str)
            text = "\n".join(filter(None, [text, f"(error) {told}"]))
        call_id = entry.get("tool_call_id")
        function = entry.get("function")
        return Message(
            role="tool",
            text=text,
            answers=call_id if isinstance(call_id, str) and call_id else None,
            tool_name=function if isinstance(function, str) and function else None,
            is_error=error is not None,
        )
    calls = _calls(entry.get("tool_calls") or [], f"{place}.tool_calls", problems)
    if role is None:
        return None
    return Message(role=role, text=text, thinking=thinking, tool_calls=calls)


def _content(content: Any, place: str, problems: Problems) -> tuple[str, str]:
    """A message's text and its reasoning (Docent's `reasoning` parts, as it shows them)."""
    if content is None or isinstance(content, str):
        return content or "", ""
    if not isinstance(content, list):
        kind = type(content).__name__
        problems.append((f"{place}.content", f"must be text or a list of parts, not {kind}"))
        return "", ""
    texts: list[str] = []
    thoughts: list[str] = []
    for index, part in enumerate(content):
        if isinstance(part, Mapping) and part.get("type") == "reasoning":
            redacted = part.get("redacted") and part.get("summary")
            shown = part.get("summary") if redacted else part.get("reasoning")
            thoughts.append(str(shown) if shown else "(redacted thinking)")
        else:
            texts.append(part_text(part, f"{place}.content[{index}]", problems))
    return "\n".join(texts), "\n".join(thoughts)


def _calls(calls: Any, where: str, problems: Problems) -> tuple[ToolCall, ...]:
    """An assistant's tool calls (`function` names the tool; `arguments` a mapping)."""
    if not isinstance(calls, list):
        problems.append((where, f"must be a list of tool calls, not {type(calls).__name__}"))
        return ()
    read = []
    for index, call in enumerate(calls):
        at = f"{where}[{index}]"
        if not isinstance(call, Mapping) or not isinstance(call.get("function"), str):
            problems.append((f"{at}.function", "a tool call needs the name of its function"))
            continue
        call_id = call.get("id")
        read.append(
            ToolCall(
                id=call_id if isinstance(call_id, str) else "",  # given one by `with_call_ids`
                name=call["function"],
                arguments=call.get("arguments"),
            )
        )
    return tuple(read)

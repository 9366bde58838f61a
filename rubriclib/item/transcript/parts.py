"""What the recorded shapes share: a role checked, text content and its parts, arguments
recorded as a JSON string."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rubriclib.item.transcript.model import Problems


def role_of(
    entry: Mapping[str, Any], place: str, allowed: Sequence[str], problems: Problems
) -> Any:
    role = entry.get("role")
    if role not in allowed:
        shown = "no role" if role is None else f"unknown role {role!r}"
        problems.append((f"{place}.role", f"{shown}; roles here are {', '.join(allowed)}"))
        return None
    return role


def parts_text(content: Any, place: str, problems: Problems) -> str:
    """Text content, or text parts joined; an image or file part is named, never dropped."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        problems.append(
            (f"{place}.content", f"must be text or a list of parts, not {type(content).__name__}")
        )
        return ""
    return "\n".join(
        part_text(part, f"{place}.content[{index}]", problems) for index, part in enumerate(content)
    )


def part_text(part: Any, at: str, problems: Problems) -> str:
    """One content part's text (a problem at `at`, the part's own place, when it is unknown)."""
    kind = part.get("type") if isinstance(part, Mapping) else None
    if kind in ("text", "input_text", "output_text") and isinstance(part.get("text"), str):
        return str(part["text"])
    if kind == "refusal" and isinstance(part.get("refusal"), str):
        return f"(refusal) {part['refusal']}"
    if kind in (
        "image_url",
        "image",
        "input_image",
        "input_audio",
        "file",
        "input_file",
        "document",
    ):
        return f"({kind.replace('input_', '').replace('_url', '')} not shown)"
    problems.append((at, f"unknown content part {kind!r}"))
    return ""


def thought(block: Mapping[str, Any]) -> str:
    """A thinking or reasoning block as shown: Anthropic's `thinking` and `redacted_thinking`,
    a Responses `reasoning` item (its summary and content), LangChain's `reasoning` block."""
    kind = block.get("type")
    if kind == "thinking":
        return str(block.get("thinking", ""))
    if kind == "redacted_thinking":
        return "(redacted thinking)"
    if isinstance(block.get("reasoning"), str):
        return str(block["reasoning"])
    parts = [*(block.get("summary") or ()), *(block.get("content") or ())]
    texts = [
        part["text"]
        for part in parts
        if isinstance(part, Mapping) and isinstance(part.get("text"), str)
    ]
    return "\n".join(texts) or "(reasoning not readable: encrypted)"


def json_arguments(raw: Any, place: str, problems: Problems) -> Any:
    """Arguments recorded as a JSON string (OpenAI), parsed; not JSON is a problem."""
    if not isinstance(raw, str):
        problems.append((place, f"must be a JSON string, not {type(raw).__name__}"))
        return None
    try:
        return json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as error:
        problems.append((place, f"is not JSON ({error.msg} at character {error.pos})"))
        return None

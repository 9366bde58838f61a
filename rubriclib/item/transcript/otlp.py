"""OTLP JSON exports walked into flat records: each span's and log record's trace, span,
attributes and body, with where it sits in the export (standard library only)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from rubriclib.item.transcript.model import Problems

OTLP_KEYS = ("resourceSpans", "resourceLogs")
"""The top-level keys of an OTLP JSON export of traces, or of logs (events)."""
HEX = re.compile(r"[0-9a-fA-F]+")


@dataclass(frozen=True)
class Record:
    """A span or a log record: its ids (hex), attributes and body decoded to plain values."""

    place: str
    span: bool
    """A span, else a log record."""
    trace_id: str | None
    span_id: str | None
    name: str
    """A span's name, or a log record's event name."""
    attributes: dict[str, Any]
    body: Any
    start: int
    """A span's start (unix nanoseconds); 0 for a log record."""
    resource: dict[str, Any]


def is_export(value: Any) -> bool:
    """Whether `value` is an OTLP JSON export (of traces or of logs)."""
    return isinstance(value, Mapping) and any(key in value for key in OTLP_KEYS)


def records(document: Any, label: str, problems: Problems) -> Iterator[Record]:
    """Every span and log record of one export, in order; `label` starts every place."""
    if not is_export(document):
        problems.append(
            (label.rstrip(". :") or "export", f"an OTLP JSON export has {' or '.join(OTLP_KEYS)}")
        )
        return
    for kind, scopes, items in (
        ("resourceSpans", "scopeSpans", "spans"),
        ("resourceLogs", "scopeLogs", "logRecords"),
    ):
        for r, resource in _listed(document, kind, label, problems):
            at = f"{label}{kind}[{r}]"
            attributes = (resource.get("resource") or {}).get("attributes")
            resource_attributes = _attributes(attributes, f"{at}.resource.attributes", problems)
            for s, scope in _listed(resource, scopes, at, problems):
                for i, item in _listed(scope, items, f"{at}.{scopes}[{s}]", problems):
                    place = f"{at}.{scopes}[{s}].{items}[{i}]"
                    yield _record(
                        item, place, kind == "resourceSpans", resource_attributes, problems
                    )


def _listed(
    parent: Mapping[str, Any], key: str, at: str, problems: Problems
) -> Iterator[tuple[int, Mapping[str, Any]]]:
    value = parent.get(key) or []
    if not isinstance(value, list):
        problems.append(
            (f"{at}.{key}" if at else key, f"must be a list, not {type(value).__name__}")
        )
        return
    for index, entry in enumerate(value):
        if isinstance(entry, Mapping):
            yield index, entry
        else:
            where = f"{at}.{key}[{index}]" if at else f"{key}[{index}]"
            problems.append((where, f"must be a mapping, not {type(entry).__name__}"))


def _record(
    item: Mapping[str, Any], place: str, span: bool, resource: dict[str, Any], problems: Problems
) -> Record:
    attributes = _attributes(item.get("attributes"), f"{place}.attributes", problems)
    name = item.get("name") if span else item.get("eventName") or attributes.get("event.name")
    start = item.get("startTimeUnixNano", 0)
    return Record(
        place=place,
        span=span,
        trace_id=_id(item.get("traceId"), 16, f"{place}.traceId", problems),
        span_id=_id(item.get("spanId"), 8, f"{place}.spanId", problems),
        name=name if isinstance(name, str) else "",
        attributes=attributes,
        body=None if span else any_value(item.get("body"), f"{place}.body", problems),
        start=int(start) if isinstance(start, int | str) and str(start).isdigit() else 0,
        resource=resource,
    )


def _id(value: Any, size: int, place: str, problems: Problems) -> str | None:
    """A trace or span id as hex: OTLP JSON writes hex, protobuf's own JSON mapping base64."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and len(value) == 2 * size and HEX.fullmatch(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True) if isinstance(value, str) else b""
    except binascii.Error:
        raw = b""
    if len(raw) != size:
        problems.append((place, f"must be {size} bytes as hex (or base64), not {value!r}"))
        return None
    return raw.hex()


def _attributes(value: Any, place: str, problems: Problems) -> dict[str, Any]:
    """`[{key, value: AnyValue}]` (at `place`) as a mapping of plain values."""
    if value is None:
        return {}
    if not isinstance(value, list):
        problems.append((place, f"must be a list, not {type(value).__name__}"))
        return {}
    decoded = {}
    for index, pair in enumerate(value):
        key = pair.get("key") if isinstance(pair, Mapping) else None
        if not isinstance(key, str):
            problems.append((f"{place}[{index}]", "must be a {key, value} pair"))
            continue
        decoded[key] = any_value(pair.get("value"), f"{place}[{key}]", problems)
    return decoded


def any_value(value: Any, place: str, problems: Problems) -> Any:
    """An OTLP AnyValue (`{"stringValue": ...}`, arrays, key-value lists) as a plain value."""
    if value is None or value == {}:
        return None
    if not isinstance(value, Mapping) or len(value) != 1:
        problems.append((place, "must be an AnyValue (one of stringValue, intValue, ...)"))
        return None
    ((kind, inner),) = value.items()
    if kind in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        return inner
    if kind == "intValue":
        return int(inner) if str(inner).lstrip("-").isdigit() else inner
    if kind == "arrayValue":
        values = (inner or {}).get("values") or []
        return [any_value(entry, f"{place}[{i}]", problems) for i, entry in enumerate(values)]
    if kind == "kvlistValue":
        return _attributes((inner or {}).get("values") or [], place, problems)
    problems.append((place, f"unknown AnyValue {kind!r}"))
    return None

"""A rubric's output fields over many judgments: per field, what the judges filled in. An enum
string or a boolean is counted per value (every enum value, in the schema's order, zeros too);
an integer or number gives its mean, min and max; an array its items (total and mean per
judgment that gave it); an object or free string how many judgments filled it. Pure: a schema
and the judgments' `details.output` in, JSON-ready numbers out (`reports` formats them). A
labels rubric's labels are counted the same way (`label_counts`).

The outputs come from results files too, which are not trusted: a value of the wrong type is
not counted, and an enum string outside the schema's values is counted after them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

COUNTED_TYPES = frozenset({"boolean"})
"""Types counted per value whatever their schema says (a string is when it has an `enum`)."""
BOOLEAN_VALUES = ("true", "false")


def summarise_outputs(schema: Mapping[str, Any] | None, outputs: Iterable[Any]) -> dict[str, Any]:
    """`{"counted": N, "fields": {name: summary}}` over the `details.output` of each judgment
    that is a verdict (pass error results out: they have no output; a non-mapping, such as the
    None of a checklist-mode judgment, is not counted). `schema` is the rubric's `output:` map;
    None (the rubric was not found) reads each field's type from its first value, so no
    string is taken for an enum. Each summary has `type`, `kind` (`counts`, `numbers`,
    `items` or `filled`) and `given` (the judgments whose value has the field's type)."""
    filled = [output for output in outputs if isinstance(output, Mapping)]
    fields = dict(schema) if schema is not None else inferred_schema(filled)
    return {
        "counted": len(filled),
        "fields": {
            name: field_summary(field, [output[name] for output in filled if name in output])
            for name, field in fields.items()
        },
    }


def field_summary(schema: Mapping[str, Any], values: Sequence[Any]) -> dict[str, Any]:
    """One field over the values the judgments gave it (absent ones left out)."""
    kind = schema.get("type")
    if kind in COUNTED_TYPES or (kind == "string" and isinstance(schema.get("enum"), list)):
        order = BOOLEAN_VALUES if kind == "boolean" else [str(value) for value in schema["enum"]]
        named = [_counted_name(kind, value) for value in values]
        counted = [name for name in named if name is not None]
        return {
            "type": kind,
            "kind": "counts",
            "given": len(counted),
            "counts": value_counts(counted, order),
        }
    if kind in ("integer", "number"):
        return {"type": kind, "kind": "numbers", **number_stats(values)}
    if kind == "array":
        lengths = [len(value) for value in values if isinstance(value, list)]
        mean = sum(lengths) / len(lengths) if lengths else None
        return {
            "type": kind,
            "kind": "items",
            "given": len(lengths),
            "items": sum(lengths),
            "mean_items": mean,
        }
    given = sum(_is_type(str(kind), value) for value in values)
    return {"type": kind, "kind": "filled", "given": given}


def value_counts(values: Iterable[str], order: Sequence[str]) -> dict[str, int]:
    """How many of `values` are each of `order` (zeros kept, in that order), then any other
    value seen, in the order first seen."""
    counts = dict.fromkeys(order, 0)
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def label_counts(order: Iterable[str], labels: Iterable[Any]) -> dict[str, int]:
    """How many judgments gave each label (`details.label` of each verdict): the rubric's
    labels in its order, zeros kept, then any other label a results file holds, in the order
    first seen; a label that is not text (an untrusted file) is not counted."""
    return value_counts((label for label in labels if isinstance(label, str)), list(order))


def number_stats(values: Iterable[Any]) -> dict[str, Any]:
    """`given`, `mean`, `min` and `max` of the finite numbers among `values` (None for each
    statistic when there are none); a boolean is not a number."""
    numbers = [
        value
        for value in values
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    ]
    if not numbers:
        return {"given": 0, "mean": None, "min": None, "max": None}
    return {
        "given": len(numbers),
        "mean": sum(numbers) / len(numbers),
        "min": min(numbers),
        "max": max(numbers),
    }


def inferred_schema(outputs: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """Each field, in the order first seen, with the type of its first value: the schema
    of outputs whose rubric is not at hand."""
    fields: dict[str, dict[str, str]] = {}
    for output in outputs:
        for name, value in output.items():
            if isinstance(name, str) and name not in fields:
                fields[name] = {"type": _type_of(value)}
    return fields


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "string"


def _counted_name(kind: str, value: Any) -> str | None:
    """The name a counted value is counted under; None for a value of the wrong type."""
    if kind == "boolean":
        return ("true" if value else "false") if isinstance(value, bool) else None
    return value if isinstance(value, str) else None


def _is_type(kind: str, value: Any) -> bool:
    types: dict[str, type] = {"object": dict, "string": str}
    return isinstance(value, types.get(kind, object)) and value not in ("", {})

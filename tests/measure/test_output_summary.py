"""A rubric's output fields summed over many judgments: counts per enum value and boolean (every
value, in the schema's order, zeros too), number statistics over the judgments that gave one,
array items, filled objects and strings; values of the wrong type not counted; without a
schema, each field's type read from its values."""

from __future__ import annotations

from typing import Any

from rubriclib.measure import label_counts, summarise_outputs

SCHEMA: dict[str, Any] = {
    "severity": {"type": "string", "enum": ["high", "medium", "low"]},
    "confidence": {"type": "number", "optional": True},
    "attempts": {"type": "integer"},
    "escalate": {"type": "boolean"},
    "issues": {"type": "array", "items": {"type": "object", "properties": {}}},
    "note": {"type": "string"},
    "meta": {"type": "object", "properties": {"a": {"type": "string"}}},
}
OUTPUTS: list[Any] = [
    {"severity": "high", "confidence": 0.9, "attempts": 1, "escalate": True, "issues": [{}, {}],
     "note": "x", "meta": {"a": "b"}},
    {"severity": "high", "attempts": 3, "escalate": False, "issues": [], "note": "", "meta": {}},
    {"severity": "low", "confidence": 0.5, "attempts": 2, "escalate": False, "issues": [{}],
     "note": "y", "meta": {"a": "c"}},
    None,  # a judgment without output (checklist mode) is not counted
]  # fmt: skip


def test_each_kind_of_field_is_summed_in_the_schema_s_order() -> None:
    summary = summarise_outputs(SCHEMA, OUTPUTS)
    assert summary["counted"] == 3
    fields = summary["fields"]
    assert list(fields) == list(SCHEMA)
    assert fields["severity"] == {
        "type": "string",
        "kind": "counts",
        "given": 3,
        "counts": {"high": 2, "medium": 0, "low": 1},
    }
    assert list(fields["severity"]["counts"]) == ["high", "medium", "low"]
    assert fields["confidence"] == {
        "type": "number",
        "kind": "numbers",
        "given": 2,
        "mean": 0.7,
        "min": 0.5,
        "max": 0.9,
    }
    assert fields["attempts"] | {"mean": round(fields["attempts"]["mean"], 6)} == {
        "type": "integer",
        "kind": "numbers",
        "given": 3,
        "mean": 2.0,
        "min": 1,
        "max": 3,
    }
    assert fields["escalate"]["counts"] == {"true": 1, "false": 2}
    assert fields["issues"] == {
        "type": "array",
        "kind": "items",
        "given": 3,
        "items": 3,
        "mean_items": 1.0,
    }
    assert fields["note"] == {"type": "string", "kind": "filled", "given": 2}  # "" is not filled
    assert fields["meta"] == {"type": "object", "kind": "filled", "given": 2}


def test_nothing_counted_gives_zeros_and_no_statistics() -> None:
    fields = summarise_outputs(SCHEMA, [None, None])["fields"]
    assert fields["severity"]["counts"] == {"high": 0, "medium": 0, "low": 0}
    assert fields["confidence"] == {
        "type": "number",
        "kind": "numbers",
        "given": 0,
        "mean": None,
        "min": None,
        "max": None,
    }
    assert fields["issues"]["mean_items"] is None and fields["issues"]["items"] == 0


def test_values_of_the_wrong_type_are_not_counted_and_strange_enum_values_come_last() -> None:
    schema = {k: SCHEMA[k] for k in ("severity", "confidence", "escalate", "issues")}
    outputs = [
        {"severity": "urgent", "confidence": True, "escalate": "yes", "issues": "many"},
        {"severity": 3, "confidence": float("nan"), "escalate": True, "issues": [1]},
    ]
    fields = summarise_outputs(schema, outputs)["fields"]
    assert fields["severity"]["counts"] == {"high": 0, "medium": 0, "low": 0, "urgent": 1}
    assert fields["severity"]["given"] == 1
    assert fields["confidence"]["given"] == 0  # a boolean and a NaN are not numbers
    assert fields["escalate"] == {
        "type": "boolean",
        "kind": "counts",
        "given": 1,
        "counts": {"true": 1, "false": 0},
    }
    assert fields["issues"]["given"] == 1 and fields["issues"]["items"] == 1


def test_without_a_schema_each_field_s_type_is_read_from_its_first_value() -> None:
    summary = summarise_outputs(None, OUTPUTS)
    kinds = {name: (f["type"], f["kind"]) for name, f in summary["fields"].items()}
    assert kinds == {
        "severity": ("string", "filled"),  # no enum known: never taken for one
        "confidence": ("number", "numbers"),
        "attempts": ("number", "numbers"),
        "escalate": ("boolean", "counts"),
        "issues": ("array", "items"),
        "note": ("string", "filled"),
        "meta": ("object", "filled"),
    }
    assert summary["fields"]["severity"]["given"] == 3


def test_labels_are_counted_in_the_rubric_s_order_zeros_kept_others_after() -> None:
    given = ["bad", "good", "odd", "good", 3, None]  # a results file's: not text, not counted
    assert label_counts(["good", "ok", "bad"], given) == {"good": 2, "ok": 0, "bad": 1, "odd": 1}
    assert list(label_counts({"good": "pass", "bad": "fail"}, [])) == ["good", "bad"]

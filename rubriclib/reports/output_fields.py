"""A grader's output-field summary (`measure.summarise_outputs`) as text: one line per field,
the same words in the eval table, its JUnit properties and the HTML report's summary. Text is
raw here; each report makes it safe its own way (`printable`, `xml_safe`, text nodes)."""

from __future__ import annotations

from typing import Any


def output_heading(summary: dict[str, Any], judged: int) -> str:
    """`output fields over 3 of 4 judgments (judge errors have none)`."""
    return (
        f"output fields over {summary['counted']} of {judged} judgment(s) (judge errors have none)"
    )


def output_field_lines(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, what the judges filled in) for each field, in the schema's order:
    `severity`, `low 0, medium 1, high 3`."""
    return [
        (name, field_text(field, summary["counted"])) for name, field in summary["fields"].items()
    ]


def field_text(field: dict[str, Any], counted: int) -> str:
    """One field's summary in words; `(3 of 4 judgments)` when not every counted judgment gave
    it (an optional field, or a value of the wrong type in a results file)."""
    given = field["given"]
    if field["kind"] == "filled":
        return f"filled in {given} of {counted} judgment(s)"
    if not given:
        return "none given"
    if field["kind"] == "counts":
        text = ", ".join(f"{value} {count}" for value, count in field["counts"].items())
    elif field["kind"] == "numbers":
        low, high = _number(field["min"]), _number(field["max"])
        text = f"mean {field['mean']:.3f}, min {low}, max {high}"
    else:
        text = f"{field['items']} item(s), {field['mean_items']:.2f} per judgment"
    return text if given == counted else f"{text} ({given} of {counted} judgments)"


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"

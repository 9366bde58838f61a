"""Output fields in the reports: a grader's summary (`measure.summarise_outputs`) as text, one
line per field, the same words in the eval table, its JUnit properties and the HTML report;
and, for the HTML report, a grader's summary from its results lines and one judgment's fields
with their citations read as untrusted data. A labels rubric's label counts
(`measure.label_counts`) are worded here too, each label with the verdict it means. Text is
raw here; each report makes it safe its own way (`printable`, `xml_safe`, the page's text
nodes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rubriclib.judging import read_citation
from rubriclib.measure import label_counts, summarise_outputs
from rubriclib.reports.checklists import RubricFinder


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


def lines_output(lines: list[dict[str, Any]], find: RubricFinder) -> dict[str, Any] | None:
    """One grader's output fields over its results lines, for the HTML report: the summary
    (over the lines that are verdicts) and `texts`, [field, words] as the table words them.
    The schema is the rubrics' that judged (found by digest; fields of several versions
    merged, the first's first); where none is found, read from the values. None when
    neither a rubric nor a line has output fields."""
    schema: dict[str, Any] = {}
    for line in lines:
        rubric = find(line["result"]["details"]["rubric"])
        for name, field in ((rubric.output or {}) if rubric else {}).items():
            schema.setdefault(name, field)
    verdicts = [line for line in lines if line["verdict"] != "error"]
    outputs = [line["result"]["details"].get("output") for line in verdicts]
    if not schema and not any(isinstance(output, Mapping) for output in outputs):
        return None
    summary = summarise_outputs(schema or None, outputs)
    return {**summary, "texts": [list(pair) for pair in output_field_lines(summary)]}


def labels_text(counts: Mapping[str, int], labels: Mapping[str, str]) -> str:
    """A grader's label counts in words, each with the verdict it means:
    `resolved 2 (pass), partly-resolved 0 (fail)` (a label the rubric does not name, read
    from a results file, without one)."""
    return ", ".join(
        f"{label} {count}" + (f" ({labels[label]})" if label in labels else "")
        for label, count in counts.items()
    )


def lines_labels(lines: list[dict[str, Any]], find: RubricFinder) -> dict[str, Any] | None:
    """One grader's label counts over its results lines, for the HTML report: `counts` (in
    the order of the labels of the rubrics that judged, found by digest, the first's first;
    zeros kept) and `text`, worded as the eval table words them. A label no rubric found
    names takes the verdict of the first line that gave it. None when neither a rubric found
    nor a line has labels."""
    labels: dict[str, str] = {}
    for line in lines:
        rubric = find(line["result"]["details"]["rubric"])
        for label, verdict in ((rubric.labels or {}) if rubric else {}).items():
            labels.setdefault(label, verdict)
    given = [
        (line["result"]["details"].get("label"), line["verdict"])
        for line in lines
        if line["verdict"] != "error"
    ]
    for label, verdict in given:
        if isinstance(label, str):
            labels.setdefault(label, str(verdict))
    if not labels:
        return None
    counts = label_counts(labels, (label for label, _ in given))
    return {"counts": counts, "text": labels_text(counts, labels)}


def judged_fields(details: dict[str, Any]) -> dict[str, Any] | None:
    """A judgment's output fields for its detail panel, each object's `citations` read as
    citations are (any shape may arrive: each is shown, never an error); None without."""
    output = details.get("output")
    return _with_citations(output) if isinstance(output, dict) else None


def _with_citations(value: Any) -> Any:
    if isinstance(value, list):
        return [_with_citations(item) for item in value]
    if not isinstance(value, dict):
        return value
    read = {key: _with_citations(item) for key, item in value.items() if key != "citations"}
    if isinstance(value.get("citations"), list):
        read["citations"] = [read_citation(citation) for citation in value["citations"]]
    return read

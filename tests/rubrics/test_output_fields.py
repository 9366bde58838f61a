"""A rubric's `output:` fields: the schema subset read with file, line and field path for
every problem, the digest they join, and a judge's values checked against them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from rubriclib import RubricError, load_rubric
from rubriclib.cli import main
from rubriclib.rubrics.output_fields import required_fields, value_problems

HEADER = "name: triage\nversion: 1.0.0\nscale: pass-fail\ndescription: Triage.\n"
OUTPUT = """\
output:
  severity: {type: string, enum: [low, medium, high]}
  confidence: {type: number, minimum: 0, maximum: 1, optional: true}
  issues:
    type: array
    maxItems: 3
    items:
      type: object
      properties:
        description: {type: string, citations: true}
        kind: {type: string, enum: [policy, accuracy, tone]}
      required: [description, kind]
"""
SCHEMA = yaml.safe_load(OUTPUT)["output"]


def rubric_file(write_file: Callable[..., Path], output: str = OUTPUT) -> Path:
    return write_file("triage.md", f"---\n{HEADER}{output}---\n# Triage\n\nJudge it.\n")


def problems_of(path: Path) -> list[str]:
    with pytest.raises(RubricError) as caught:
        load_rubric(str(path))
    return [str(problem) for problem in caught.value.problems]


def test_output_fields_load_in_order_and_join_the_digest(
    write_file: Callable[..., Path],
) -> None:
    rubric = load_rubric(str(rubric_file(write_file)))
    assert list(rubric.output or {}) == ["severity", "confidence", "issues"]
    assert rubric.output == SCHEMA
    plain = load_rubric(str(rubric_file(write_file, output="")))
    assert plain.output is None and plain.digest != rubric.digest
    reordered = OUTPUT.replace(
        "  severity: {type: string, enum: [low, medium, high]}\n", ""
    ).replace("output:\n", "output:\n  severity: {type: string, enum: [low, medium, high]}\n", 1)
    assert load_rubric(str(rubric_file(write_file, reordered))).digest == rubric.digest
    swapped = OUTPUT.replace("enum: [low, medium, high]", "enum: [high, medium, low]")
    assert load_rubric(str(rubric_file(write_file, swapped))).digest != rubric.digest


@pytest.mark.parametrize(
    ("output", "field", "message"),
    [
        ("output: [severity]", "output", "valid dictionary"),
        ("output:\n  reason: {type: string}", "output.reason", "verdict tool's own argument"),
        ("output:\n  two words: {type: string}", "output.two words", "letters, digits and _"),
        ("output:\n  x: {type: date}", "output.x.type", "must be one of string, integer"),
        ("output:\n  x: {anyOf: [{type: string}]}", "output.x.anyOf", "not in the subset"),
        ("output:\n  x: {type: string, pattern: a+}", "output.x.pattern", "not a key of a string"),
        ("output:\n  x: {type: string, enum: [a, a]}", "output.x.enum", "distinct strings"),
        ("output:\n  x: {type: string, maxLength: 0}", "output.x.maxLength", "above 0"),
        ("output:\n  x: {type: integer, minimum: 1.5}", "output.x.minimum", "an integer"),
        ("output:\n  x: {type: number, minimum: 2, maximum: 1}", "output.x.maximum", "below"),
        ("output:\n  x: {type: boolean, optional: maybe}", "output.x.optional", "true or false"),
        ("output:\n  x: {type: array}", "output.x.items", "is required"),
        (
            "output:\n  x: {type: object, properties: {a: {type: string}}, required: [b]}",
            "output.x.required",
            "among the object's properties",
        ),
        (
            "output:\n  x:\n    type: object\n    properties:\n"
            "      a: {type: string, citations: true}\n      citations: {type: string}",
            "output.x.properties.citations",
            "rename it",
        ),
        (
            "output:\n  x: {type: array, items: {type: array, items: {type: array, items: "
            "{type: array, items: {type: string}}}}}",
            "output.x.items.items.items.items",
            "nests too deeply",
        ),
    ],
)
def test_each_schema_problem_names_its_line_and_field(
    write_file: Callable[..., Path], output: str, field: str, message: str
) -> None:
    path = rubric_file(write_file, output + "\n")
    problems = problems_of(path)
    assert len(problems) == 1, problems
    [problem] = problems
    assert problem.startswith(f"{path}:") and f": {field}: " in problem and message in problem


def test_every_problem_of_a_schema_comes_at_once(write_file: Callable[..., Path]) -> None:
    output = (
        "output:\n  a: {type: string, enum: []}\n  b: {type: integer, maximum: x}\n"
        "  c: {type: array, maxItems: -1, items: {type: nope}}\n"
    )
    path = rubric_file(write_file, output)
    fields = [problem.split(": ")[1] for problem in problems_of(path)]
    assert fields == [
        "output.a.enum",
        "output.b.maximum",
        "output.c.maxItems",
        "output.c.items.type",
    ]
    lines = [problem.split(": ")[0].rsplit(":", 1)[1] for problem in problems_of(path)]
    assert lines == ["7", "8", "9", "9"]  # the file opens with ---, then four header lines


GOOD = {
    "severity": "high",
    "issues": [
        {"description": "refunds promised", "kind": "policy", "citations": [{"quote": "x"}]},
        {"description": "wrong date", "kind": "accuracy"},
    ],
}


def test_values_that_fit_have_no_problems() -> None:
    assert required_fields(SCHEMA) == ["severity", "issues"]
    assert value_problems(SCHEMA, GOOD) == []
    assert value_problems(SCHEMA, {**GOOD, "confidence": 0.5, "issues": []}) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"severity": "urgent"}, "severity: 'urgent' is not one of low, medium, high"),
        ({"severity": None}, "severity: must be text, not None"),
        ({"confidence": 2}, "confidence: 2 is outside 0 to 1"),
        ({"confidence": True}, "confidence: must be a number, not True"),
        ({"extra": 1}, "extra: is not a field of this rubric's output"),
        ({"issues": [{"description": "d", "kind": "style"}]}, "issues[0].kind: 'style' is not"),
        ({"issues": [{"kind": "tone"}]}, "issues[0].description: is missing"),
        ({"issues": [{"description": "d", "kind": "tone", "why": "?"}]}, "issues[0].why: is not"),
        ({"issues": [GOOD["issues"][1]] * 4}, "issues: has 4 items, at most 3"),
        ({"issues": "none"}, "issues: must be a list, not 'none'"),
    ],
)
def test_values_that_break_the_schema_are_named_by_path(
    change: dict[str, Any], expected: str
) -> None:
    problems = value_problems(SCHEMA, {**GOOD, **change})
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_missing_required_fields_are_named_and_a_non_mapping_is_refused() -> None:
    assert value_problems(SCHEMA, {}) == ["severity: is missing", "issues: is missing"]
    assert value_problems(SCHEMA, ["high"]) == ["output: must be a mapping, not ['high']"]
    integer = {"n": {"type": "integer", "maximum": 3}}
    assert value_problems(integer, {"n": 2.0}) == ["n: must be an integer, not 2.0"]


def test_show_prints_the_output_fields(write_file: Callable[..., Path]) -> None:
    path = rubric_file(write_file)
    runner = CliRunner()
    text = runner.invoke(main, ["show", str(path)]).output
    assert "output:\n  severity:\n    type: string\n" in text
    assert text.index("output:") < text.index("# Triage")
    data = json.loads(runner.invoke(main, ["show", str(path), "--json"]).output)
    assert data["output"] == SCHEMA
    plain = json.loads(runner.invoke(main, ["show", "groundedness", "--json"]).output)
    assert plain["output"] is None

"""letta-evals rows read as letta reads them, on their own: the sample, its turns, what fills a
letta prompt, and every problem letta-evals would refuse a row or a prompt for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rubriclib.errors import Problem
from rubriclib.evals.letta.prompts import placeholders, template_error, template_problems
from rubriclib.evals.letta.rows import LettaSample, read_sample

WHERE = "data.jsonl:3"


def sample(raw: dict[str, Any], base_dir: Path = Path("."), csv: bool = False) -> LettaSample:
    found = read_sample(raw, WHERE, base_dir, csv)
    assert isinstance(found, LettaSample), found
    return found


def problems(raw: dict[str, Any], base_dir: Path = Path("."), csv: bool = False) -> list[str]:
    found = read_sample(raw, WHERE, base_dir, csv)
    assert isinstance(found, list), found
    return [f"{problem.field}: {problem.message}" for problem in found]


def test_a_row_becomes_the_item_a_rubric_sees() -> None:
    row = sample(
        {
            "input": "Say hi",
            "ground_truth": "hi",
            "rubric_vars": {"tone": "warm", "context": ["p1", "p2"]},
            "response": "hello",
        }
    )
    assert not row.per_turn and row.turns() == [row]
    item = row.item("r1", {"team": "a"})
    assert (item.input, item.reference, item.output, item.id) == ("Say hi", "hi", "hello", "r1")
    assert item.context is not None and "p1" in item.context and "p2" in item.context
    assert item.variables == {
        "tone": "warm",
        "context": "['p1', 'p2']",
        "input": "Say hi",
        "ground_truth": "hi",
        "submission": "hello",
    }


def test_prompt_is_the_fallback_for_input_and_a_top_level_context_wins() -> None:
    row = sample({"prompt": "q", "context": "top", "rubric_vars": {"context": "inner"}})
    assert (row.input, row.context, row.submission) == ("q", "top", None)
    assert row.item("r", {}).output == ""


def test_a_per_turn_row_is_one_sample_a_turn() -> None:
    row = sample({"input": ["a", "b"], "ground_truth": ["A", "B"], "submission": ["x", "y"]})
    assert row.per_turn
    assert [(t.input, t.ground_truth, t.submission) for t in row.turns()] == [
        ("a", "A", "x"),
        ("b", "B", "y"),
    ]
    whole = row.item("r", {})
    assert whole.output == "[Turn 0] x | [Turn 1] y"
    assert (whole.input, whole.reference) == ("user: a\nuser: b", "A\nB")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({}, ["input: is required"]),
        ({"input": []}, ["input: is an empty list: a row has at least one turn"]),
        ({"input": [1, "a"]}, ["input: must be text or a list of texts; this list holds int"]),
        (
            {"input": "q", "output": "a", "submission": "b"},
            ["output: given twice, as submission and output"],
        ),
        (
            {"input": "q", "ground_truth": ["a"]},
            ["ground_truth: cannot be a list when input is text (letta)"],
        ),
        (
            {"input": ["a", "b"], "ground_truth": ["A"]},
            [
                "ground_truth: has 1 item(s) but input has 2: per-turn grading needs one ground "
                "truth per turn"
            ],
        ),
        (
            {"input": ["a", "b"], "ground_truth": ["A", "B"], "submission": "x"},
            [
                "submission: a per-turn row (2 turns in input and ground_truth) needs a list of "
                "2 recorded submissions, one per turn; it has one text"
            ],
        ),
        (
            {"input": "q", "submission": ["x"]},
            [
                "submission: is a list, which only a per-turn row takes (input and ground_truth "
                "as lists)"
            ],
        ),
        ({"input": "q", "rubric_vars": [1]}, ["rubric_vars: must be an object of names, not list"]),
        (
            {"input": "q", "rubric": "r", "rubric_path": "r.txt"},
            ["rubric_path: give rubric or rubric_path, not both"],
        ),
    ],
)
def test_each_problem_letta_refuses_is_named(raw: dict[str, Any], expected: list[str]) -> None:
    assert problems(raw) == expected


def test_a_csv_row_reads_lists_and_rubric_vars_from_text() -> None:
    row = sample(
        {"input": ' ["a", "b"] ', "ground_truth": '["A","B"]', "submission": '["x","y"]'},
        csv=True,
    )
    assert row.per_turn and row.input == ["a", "b"]
    assert sample({"input": "  q ", "rubric_vars": '{"k": 1}'}, csv=True).rubric_vars == {"k": 1}
    assert sample({"input": "[not a list"}, csv=True).input == "[not a list"  # no closing ]
    assert problems({"input": "[a, b]"}, csv=True) == [
        "input: looks like a JSON list but is not valid JSON: Expecting value"
    ]
    assert problems({"input": "q", "rubric_vars": "{"}, csv=True)[0].startswith(
        "rubric_vars: is not valid JSON"
    )


def test_a_rows_own_rubric_file_is_read_inside_the_suite_folder_only(tmp_path: Path) -> None:
    (tmp_path / "own.txt").write_text("Own rubric: {submission}\n")
    row = sample({"input": "q", "rubric_path": "own.txt"}, tmp_path)
    assert row.rubric == "Own rubric: {submission}\n"
    assert row.rubric_source == f"file:{(tmp_path / 'own.txt').resolve()}"
    inline = sample({"input": "q", "rubric": "Inline {input}"})
    assert (inline.rubric, inline.rubric_source) == ("Inline {input}", f"prompt:{WHERE}")
    assert problems({"input": "q", "rubric_path": "../outside.txt"}, tmp_path) == [
        "rubric_path: leaves the suite's folder; rubriclib reads a row's rubric file only inside it"
    ]
    assert problems({"input": "q", "rubric_path": "gone.txt"}, tmp_path) == [
        f"rubric_path: {(tmp_path / 'gone.txt').resolve()}: does not exist"
    ]


def test_placeholders_are_the_names_a_template_fills() -> None:
    assert placeholders("{input} {a.b} {c[0]} {{literal}}") == {"input", "a", "c"}
    with pytest.raises(ValueError):
        placeholders("unmatched {")


def test_a_template_letta_cannot_fill_says_why() -> None:
    assert template_error("{input} and {{braces}}") is None
    assert "write {{ and }} for a brace" in (template_error("a } b") or "")
    assert template_error("{} {0}") == "uses {}, {0}: letta-evals fills placeholders by name only"
    assert template_error('Reply {"score": 1}') == (
        'uses {"score"...}, which letta-evals reads as a placeholder: write {{ and }} for '
        "literal braces"
    )


def test_template_problems_name_each_missing_variable_and_each_collision() -> None:
    row = sample({"input": "q", "rubric_vars": {"tone": "warm"}, "submission": "s"})
    assert template_problems("{input} {tone}", row, "quality", WHERE) == []
    assert template_problems("{tone} {style} {audience}", row, "quality", WHERE) == [
        Problem(
            WHERE, "rubric_vars.audience", "grader quality needs it (its prompt uses {audience})"
        ),
        Problem(WHERE, "rubric_vars.style", "grader quality needs it (its prompt uses {style})"),
    ]
    clash = sample({"input": "q", "rubric_vars": {"input": "x", "submission": "y"}})
    assert [p.field for p in template_problems("{input}", clash, "quality", WHERE)] == [
        "rubric_vars.input",
        "rubric_vars.submission",
    ]

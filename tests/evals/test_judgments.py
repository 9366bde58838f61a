"""What a dataset row asks of a grader, worked out before any request: the rubric (the
grader's, or a letta row's own), one judgment or one a turn, and the row problems that keep a
letta prompt from being filled."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rubriclib.evals.datasets import Row
from rubriclib.evals.formats import Eval, load_eval
from rubriclib.evals.judgments import letta_row_checker, row_judgments, row_rubric

SUITE = """\
name: letta-suite
dataset: dataset.jsonl
target: {kind: letta_code, model_handles: [openai/gpt-4.1-mini]}
graders:
  quality:
    kind: model_judge
    prompt_path: quality.txt
    model: letta-judge
reward: {kind: metric, metric_key: quality}
"""
PROMPT = "Q: {input}\nA: {submission}\nTone: {tone}\n"


def letta_eval(
    write_file: Callable[..., Path], rows: list[dict[str, Any]], prompt: str = PROMPT
) -> tuple[Eval, list[Row]]:
    write_file("quality.txt", prompt)
    write_file("dataset.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    ev = load_eval(write_file("suite.yaml", SUITE))
    return ev, list(ev.dataset.rows())


def test_a_plain_row_is_one_judgment_by_the_graders_rubric(
    library: Path, write_file: Callable[..., Path]
) -> None:
    write_file("rows.jsonl", '{"id": "r1", "output": "verdict:pass"}\n')
    ev = load_eval(
        write_file(
            "eval.yaml",
            "name: e\ndataset: rows.jsonl\ngraders: [{name: kw, rubric: keywords}]\n",
        )
    )
    [row] = ev.dataset.rows()
    [grader] = ev.graders
    [judgment] = row_judgments(row, grader)
    assert judgment.rubric is grader.rubric and judgment.item == row.item
    assert letta_row_checker(ev.graders) is None  # no letta prompt: nothing to check


def test_a_per_turn_row_is_one_judgment_a_turn(write_file: Callable[..., Path]) -> None:
    row_data = {"input": ["a?", "b?"], "ground_truth": ["A", "B"], "submission": ["x", "y"]}
    row_data["rubric_vars"] = {"tone": "dry"}
    ev, [row] = letta_eval(write_file, [row_data])
    [grader] = ev.graders
    parts = row_judgments(row, grader)
    assert [(p.item.input, p.item.reference, p.item.output) for p in parts] == [
        ("a?", "A", "x"),
        ("b?", "B", "y"),
    ]
    assert all(p.rubric is grader.rubric and p.item.id == row.id for p in parts)


def test_a_rows_own_rubric_replaces_the_graders_prompt(write_file: Callable[..., Path]) -> None:
    ev, rows = letta_eval(
        write_file,
        [
            {"input": "q", "rubric_vars": {"tone": "dry"}, "submission": "s"},
            {"input": "q", "rubric": "Own: {submission}", "submission": "s"},
        ],
    )
    [grader] = ev.graders
    plain, own = (row_rubric(row, grader) for row in rows)
    assert plain is grader.rubric
    assert own.body == "Own: {submission}" and own.template == "letta"
    assert own.source == f"prompt:{rows[1].where}" and own.digest != grader.rubric.digest
    assert own.system_prompt == grader.rubric.system_prompt


def test_the_checker_names_each_row_that_cannot_fill_the_prompt(
    write_file: Callable[..., Path],
) -> None:
    ev, rows = letta_eval(
        write_file,
        [
            {"input": "q", "rubric_vars": {"tone": "dry"}, "submission": "s"},
            {"input": "q", "submission": "s"},
            {"input": "q", "rubric": "Positional {}", "submission": "s"},
        ],
    )
    check = letta_row_checker(ev.graders)
    assert check is not None
    found = [[f"{p.field}: {p.message}" for p in check(row)] for row in rows]
    assert found == [
        [],
        ["rubric_vars.tone: grader quality needs it (its prompt uses {tone})"],
        ["rubric: uses {}: letta-evals fills placeholders by name only"],
    ]


def test_a_prompt_letta_cannot_fill_is_named_once_at_its_file(
    write_file: Callable[..., Path], tmp_path: Path
) -> None:
    rows = [{"input": f"q{n}", "submission": "s"} for n in range(3)]
    ev, read = letta_eval(write_file, rows, prompt="Positional {0}")
    check = letta_row_checker(ev.graders)
    assert check is not None
    found = [check(row) for row in read]
    assert [len(problems) for problems in found] == [1, 0, 0]
    [problem] = found[0]
    assert (problem.source, problem.field) == (
        str(tmp_path / "quality.txt"),
        "graders.quality",
    )

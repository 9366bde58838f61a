"""An eval made ready to run: load, dataset check, lock and batch refusals, before any request."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from rubriclib.errors import BatchRefused, EvalError, RubricError
from rubriclib.evals.setup import batch_refusals, prepare

EVAL = """\
name: demo
dataset: rows.jsonl
graders:
  - name: kw
    rubric: keywords
"""

ROWS = [{"id": f"r{n}", "output": f"verdict:pass {n}"} for n in range(5)]


@pytest.fixture
def eval_file(library: Path, write_file: Callable[..., Path]) -> Path:
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    return write_file("eval.yaml", EVAL)


def test_prepare_loads_and_counts_the_rows_and_judgments(eval_file: Path) -> None:
    ready = prepare(eval_file)
    assert ready.eval.name == "demo" and ready.rows == 5
    assert ready.judgments() == 5 and ready.judgments(limit=2) == 2


def test_prepare_names_every_bad_row(eval_file: Path, write_file: Callable[..., Path]) -> None:
    write_file("rows.jsonl", '{"id": "a", "output": "x"}\n{"id": "b"}\nnot json\n')
    with pytest.raises(EvalError) as raised:
        prepare(eval_file)
    assert len(raised.value.problems) == 2
    assert all("rows.jsonl" in str(problem) for problem in raised.value.problems)


def test_prepare_refuses_what_a_batch_cannot_carry(
    eval_file: Path, write_file: Callable[..., Path]
) -> None:
    panel = EVAL.replace(
        "    rubric: keywords\n",
        "    rubric: keywords\n    judges: [{model: a}, {model: b}]\n",
    )
    write_file("eval.yaml", panel)
    assert prepare(eval_file).eval.graders[0].panel is not None  # live: fine
    with pytest.raises(BatchRefused) as raised:
        prepare(eval_file, batch="--batch")
    [reason] = raised.value.reasons
    assert reason.startswith("--batch: grader kw: a judge panel cannot be judged through a batch")
    assert batch_refusals(prepare(eval_file).eval, "--batch") == [reason]


def test_prepare_frozen_refuses_a_rubric_the_lock_does_not_hold(eval_file: Path) -> None:
    with pytest.raises(RubricError, match="rubriclib.lock"):
        prepare(eval_file, frozen=True)
    assert prepare(eval_file).rows == 5  # not frozen: the lock is not asked

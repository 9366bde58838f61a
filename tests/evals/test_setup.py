"""An eval made ready to run: load, dataset check, lock and batch refusals, before any request;
then its judges, target and what the run needs, in one step."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from judge_server import JudgeServer
from results_lines import results_line

from rubriclib.errors import BatchRefused, EvalError, JudgeConfigError, RubricError
from rubriclib.evals.setup import batch_refusals, check_eval, prepare, ready_run

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


def test_prepare_loads_and_counts_the_rows(eval_file: Path) -> None:
    ready = prepare(eval_file)
    assert ready.eval.name == "demo" and ready.rows == 5
    assert ready.planned_rows() == 5 and ready.planned_rows(limit=2) == 2


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


def test_check_eval_checks_a_loaded_eval_as_prepare_does(
    eval_file: Path, write_file: Callable[..., Path]
) -> None:
    from rubriclib.evals.formats import load_eval

    assert check_eval(load_eval(eval_file)).rows == 5
    write_file("rows.jsonl", '{"id": "a"}\n')
    with pytest.raises(EvalError, match="rows.jsonl"):
        check_eval(load_eval(eval_file))


def test_ready_run_works_out_what_the_run_needs(
    eval_file: Path, endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUBRICLIB_CONCURRENCY", "3")
    monkeypatch.setenv("RUBRICLIB_MAX_PROMPT_TOKENS", "900")
    ready = ready_run(prepare(eval_file), model="m1", limit=2)
    assert (ready.rows, ready.limit, ready.judgments) == (2, 2, 2)
    assert ready.judges["kw"].model == "m1" and ready.target is None
    judge = next(iter(ready.judges.values()))
    assert (ready.concurrency, judge.max_prompt_tokens) == (3, 900)
    assert ready.out is None and not ready.kept
    whole = ready_run(prepare(eval_file), concurrency=7)
    assert (whole.rows, whole.limit, whole.judgments, whole.concurrency) == (5, None, 5, 7)
    batched = whole.through({"kw": ready.judges["kw"]}, 40)
    assert batched.judges["kw"].model == "m1" and batched.concurrency == 40
    assert batched.requests_per_minute is None and batched.rows == 5


def test_ready_run_with_resume_keeps_the_lines_that_still_match(
    eval_file: Path, endpoint: JudgeServer
) -> None:
    ready = ready_run(prepare(eval_file), model="m1")
    digest = ready.eval.graders[0].rubric.digest
    out = eval_file.parent / "results.jsonl"

    def line(row: str, model: str) -> str:
        return json.dumps(results_line(row, "kw", "pass", digest=digest, model=model))

    out.write_text(line("r0", "m1") + "\n" + line("r1", "another model") + "\n")
    resumed = ready_run(prepare(eval_file), model="m1", out=out, resume=True)
    assert list(resumed.kept) == [("r0", "kw")] and resumed.out == out and resumed.resume
    forced = ready_run(prepare(eval_file), model="m1", out=out, force=True)
    assert not forced.kept and not forced.resume  # replacing: none kept


def test_ready_run_refuses_to_replace_results_unless_forced(
    eval_file: Path, endpoint: JudgeServer
) -> None:
    out = eval_file.parent / "results.jsonl"
    out.write_text(json.dumps(results_line("r0", "kw", "error")) + "\n")
    before = out.read_bytes()
    with pytest.raises(EvalError) as refused:
        ready_run(prepare(eval_file), out=out)
    assert str(refused.value) == (
        f"{out}: out: already holds results; pass resume=True to continue it or force=True to "
        "replace it"
    )
    with pytest.raises(ValueError, match="resume and force: choose one"):
        ready_run(prepare(eval_file), out=out, resume=True, force=True)
    assert out.read_bytes() == before and endpoint.requests == []
    out.write_text("\n")  # nothing but whitespace: nothing to lose
    assert ready_run(prepare(eval_file), out=out).out == out


def test_ready_run_reads_the_key_after_the_checks(
    eval_file: Path, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUDGE_KEY", raising=False)
    write_file("eval.yaml", EVAL + "judge: {api_key_env: JUDGE_KEY}\n")
    prepared = prepare(eval_file)  # no key needed to check
    with pytest.raises(JudgeConfigError, match="JUDGE_KEY is not set"):
        ready_run(prepared)
    monkeypatch.setenv("JUDGE_KEY", "sk-judge")
    assert ready_run(prepared).judges["kw"].api_key == "sk-judge"

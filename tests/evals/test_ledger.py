"""The ledger of an eval run: rows read once, results kept and combined, and what an interrupt
leaves missing taken from it, never from a second read of the dataset."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import VALID_RUBRIC, cited_result, keyword_responder
from judge_server import JudgeServer

from rubriclib.evals.datasets import Dataset, Row
from rubriclib.evals.formats import GraderEntry, load_eval
from rubriclib.evals.judgments import Judgment, Judgments
from rubriclib.evals.ledger import Ledger
from rubriclib.evals.run import EvalReport, run_ready
from rubriclib.evals.setup import check_eval, ready_run
from rubriclib.item import Item
from rubriclib.judging.engine import Interrupted
from rubriclib.judging.result import GradeResult
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric
from rubriclib.settings import JudgeSettings

EVAL = "{name: ledger, dataset: rows.jsonl, graders: [{name: first, rubric: R}, {name: second, rubric: R}]}"


def row(name: str, task: str = "t") -> Row:
    return Row(1, f"rows.jsonl:{name}", Item(output="o", id=name, metadata={"task": task}))


@pytest.fixture
def rubric(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("tiny.md", VALID_RUBRIC)))


@pytest.fixture
def graders(rubric: Rubric) -> list[GraderEntry]:
    settings = JudgeSettings()
    return [GraderEntry("all", rubric, settings), GraderEntry("only_t", rubric, settings, task="t")]


def test_rows_are_numbered_as_read_and_judged_when_every_grader_has_a_result(
    graders: list[GraderEntry],
) -> None:
    ledger = Ledger(iter([row("a"), row("b", task="u")]), graders, {})
    read = list(ledger.each_row())
    assert [(r.id, [g.name for g in gs]) for r, gs in read] == [
        ("a", ["all", "only_t"]),
        ("b", ["all"]),
    ]
    assert ledger.read == 2 and ledger.rows_judged == 0
    assert ledger.settle(read[1][0], graders[0]) == 2 and ledger.rows_judged == 1
    assert ledger.settle(read[0][0], graders[1]) == 1 and ledger.rows_judged == 1
    assert ledger.missing() == [("a", "all")]


def test_a_kept_line_is_counted_as_resumed(graders: list[GraderEntry], rubric: Rubric) -> None:
    kept = cited_result(rubric, "pass")
    ledger = Ledger(iter([row("a")]), graders, {("a", "all"): {"result": kept.model_dump()}})
    [(read, _)] = ledger.each_row()
    assert ledger.kept(read, graders[0]) == kept and ledger.kept(read, graders[1]) is None
    assert ledger.resumed == 1


def test_a_row_judged_in_parts_is_one_result_once_every_part_is_in(
    graders: list[GraderEntry], rubric: Rubric
) -> None:
    ledger = Ledger(iter([row("a")]), graders, {})
    [(read, _)] = ledger.each_row()
    item = read.item
    turns = Judgments(rubric, (Judgment(rubric, item), Judgment(rubric, item)))
    one = Judgments(rubric, (Judgment(rubric, item),))
    assert len(list(ledger.planned(read, graders[0], turns))) == 2  # jobs 0 and 1
    assert len(list(ledger.planned(read, graders[1], one))) == 1  # job 2
    assert ledger.finished(1, cited_result(rubric, "fail")) is None
    alone = cited_result(rubric, "pass")
    assert ledger.finished(2, alone) == (read, graders[1], alone)
    done = ledger.finished(0, cited_result(rubric, "pass"))
    assert done is not None and done[:2] == (read, graders[0])
    combined = done[2]
    assert combined.verdict == "fail" and combined.reason.startswith("1/2 turns passed")
    assert [turn["verdict"] for turn in combined.details["turns"]] == ["pass", "fail"]


def test_missing_reads_only_the_rows_left_unread(graders: list[GraderEntry]) -> None:
    pulled: list[str] = []

    def rows() -> Iterator[Row]:
        for name in ("a", "b", "c"):
            pulled.append(name)
            yield row(name, task="t" if name != "c" else "u")

    ledger = Ledger(rows(), graders, {})
    reading = ledger.each_row()
    first, _ = next(reading)
    ledger.settle(first, graders[0])
    assert ledger.missing() == [("a", "only_t"), ("b", "all"), ("b", "only_t"), ("c", "all")]
    assert pulled == ["a", "b", "c"] and ledger.read == 1


def test_an_interrupted_run_reads_the_dataset_once_and_lists_what_it_missed(
    write_file: Callable[..., Path], endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint.responder = keyword_responder(delay=0.05)
    rows = [{"id": f"x{n}", "output": f"verdict:pass {n}"} for n in range(12)]
    write_file("rows.jsonl", "".join(json.dumps(one) + "\n" for one in rows))
    rubric = write_file("tiny.md", VALID_RUBRIC)
    ev = load_eval(write_file("eval.yaml", EVAL.replace("R}", f"{rubric}}}")))
    ready = ready_run(check_eval(ev), concurrency=1)
    reads = []
    real_rows = Dataset.rows

    def counted(dataset: Dataset) -> Iterator[Row]:
        reads.append(dataset)
        return real_rows(dataset)

    monkeypatch.setattr(Dataset, "rows", counted)

    async def interrupted_after_three() -> tuple[int, EvalReport]:
        interrupt = Interrupted()
        task = asyncio.current_task()
        assert task is not None
        seen: list[GradeResult] = []

        def stop(result: GradeResult) -> None:
            seen.append(result)
            if len(seen) == 3:
                interrupt.signal = "SIGINT"
                task.cancel()

        report = await run_ready(ready, keep_cases=True, on_result=stop, interrupt=interrupt)
        return len(seen), report

    seen, report = asyncio.run(interrupted_after_three())
    assert len(reads) == 1
    assert report.interrupted == "SIGINT" and report.cases is not None
    judged_pairs = {(r, g) for r, g, _ in report.cases}
    everything = {(one["id"], g) for one in rows for g in ("first", "second")}
    assert len(judged_pairs) == seen == 3
    assert set(report.not_judged) == everything - judged_pairs
    assert len(report.not_judged) == 21
    assert report.rows < 12 and report.rows_judged == 1

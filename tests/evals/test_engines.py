"""A run's engine (`run_ready(..., engine=)`) and what the Ray engine does without Ray: a job
sent as a row its worker reads back into the same item, one TableJudge per grader made from the
grader's own settings, and a run Ray fails ending with an error result for every judgment it
did not give back, never a crash. Real Ray: tests/integrations/test_ray_engine.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import judged
from judge_server import JudgeServer

from rubriclib.evals.ray_engine import RayEngine, actors_for, job_row
from rubriclib.evals.run import run_ready
from rubriclib.evals.setup import prepare, ready_run
from rubriclib.evals.tables.table_judge import row_item
from rubriclib.item import Item
from rubriclib.judging import Job

RUN = json.loads((Path(__file__).parent.parent / "data" / "runs" / "openai_chat.json").read_text())
EVAL = """\
name: kw
dataset: rows.jsonl
judge: {model: judge-model}
graders:
  - name: words
    rubric: keywords
  - name: again
    rubric: keywords
  - name: warm
    rubric: keywords
    judge: {temperature: 0.5, votes: 3}
"""


@pytest.fixture
def eval_file(library: Path, write_file: Callable[..., Path]) -> Path:
    rows = [{"id": f"r{n}", "output": f"verdict:pass {n}"} for n in range(3)]
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    return write_file("eval.yaml", EVAL)


def test_a_job_sent_to_a_worker_is_read_back_as_the_same_item(eval_file: Path) -> None:
    rubric = prepare(eval_file).eval.graders[0].rubric
    item = Item(output="done", input="q", context="c", reference="r", transcript=RUN, id=7)
    row = job_row(12, Job(rubric, item), 1)
    assert (row["job"], row["judge"], row["id"]) == (12, 1, "7")
    fields = {name: value for name, value in row.items() if name not in ("job", "judge")}
    again = row_item(0, {name: value for name, value in fields.items() if value is not None})
    assert again == item.model_copy(update={"id": "7"})  # the id is never sent to a judge


def test_graders_that_judge_alike_share_a_table_judge_made_from_their_settings(
    eval_file: Path, endpoint: JudgeServer
) -> None:
    ready = ready_run(prepare(eval_file), concurrency=3)
    tables = list(RayEngine(ready)._tables.values())
    assert len(tables) == 2  # words and again judge alike
    assert [table.identity[2] for table in tables] == [1, 3]  # warm's 3 votes
    assert tables[1].settings.temperature == 0.5
    assert {(table.pacing, table.concurrency) for table in tables} == {("batch", 3)}


def test_the_actors_split_the_run_s_cap_evenly_and_keep_it_whole() -> None:
    assert [actors_for(16, cpus) for cpus in (1, 2, 3, 8, 64)] == [1, 2, 2, 8, 16]
    assert [actors_for(concurrency, 4) for concurrency in (1, 3, 6, 7)] == [1, 3, 3, 1]


def test_a_run_ray_fails_gives_every_judgment_it_did_not_return_an_error(
    eval_file: Path, endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready = ready_run(prepare(eval_file), out=eval_file.parent / "results.jsonl")
    engine = RayEngine(ready)

    async def one_then_lost(judges: Any, rows: list[dict[str, Any]]) -> AsyncIterator[Any]:
        yield rows[0]["job"], judged(ready.eval.graders[0].rubric, "pass")
        raise RuntimeError("ray::MapWorker failed\n  File x\nActorDiedError: the actor died")

    monkeypatch.setattr(engine, "_judged", one_then_lost)
    report = asyncio.run(run_ready(ready, engine=engine))
    lines = [json.loads(line) for line in (eval_file.parent / "results.jsonl").open()]
    assert len(lines) == 9 and report.rows_judged == 3  # 3 rows x 3 graders, each once
    assert [line["verdict"] for line in lines].count("pass") == 1
    errors = {line["result"]["reason"] for line in lines if line["verdict"] == "error"}
    assert errors == {"not judged: the Ray job failed: ActorDiedError: the actor died"}
    assert report.status == "undecided" and endpoint.request_count == 0

"""`eval --engine ray`: an eval's judgments made on a Ray cluster; everything else about the run
(its rows, graders, `--resume`, results file, report and gate) is the local run's own
(`run.run_ready`, given `RayEngine` as its engine). The judgments are one Ray Data pass: a
Dataset of the jobs' items, `map_batches` of each grader's `TableJudge` (a column says whose
row it is) in a pool of actors of half a CPU (so a 2-core node keeps a CPU for Ray Data's own
tasks), each keeping an even share of the run's in-flight cap and requests a minute (its own
pace: no request waits on a round trip to a limiter actor, as with `pacing="ray"`), the
results streamed back a batch at a time (`iter_batches`) and
recorded as they come, so an interrupt keeps what came back. What the Ray path cannot honour
is refused (`ray_refusals`) before Ray starts. ray is imported only when a run starts."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import threading
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from rubriclib.errors import JudgeConfigError, Problem
from rubriclib.evals.plan import max_prompt_tokens
from rubriclib.evals.tables.columns import rows_where
from rubriclib.evals.tables.table_judge import TableJudge
from rubriclib.item import Item
from rubriclib.judging import GradeResult, not_judged

if TYPE_CHECKING:
    from rubriclib.evals.formats import Eval
    from rubriclib.evals.setup import ReadyRun
    from rubriclib.judging import Job

ACTOR_CPUS = 0.5
"""CPUs each judging actor asks for: it mostly waits for the judge. Two actors of a whole CPU
each take both CPUs of a 2-core node and leave Ray Data's other tasks none: the run hangs."""
EXTRA = ("ray", "pandas", "pyarrow")
"""What `pip install 'rubriclib[ray]'` brings that a Ray run needs."""


def ray_refusals(ev: Eval) -> list[Problem]:
    """What in an eval the Ray engine cannot run, one problem each, naming the key (checked
    before Ray starts and before any request)."""
    where = str(ev.path)
    why = "--engine ray cannot run"
    problems = []
    if ev.target is not None:
        problems.append(
            Problem(
                where,
                "target",
                f"{why} a target model (outputs written first, by {ev.target.model}); "
                "use --engine local, or judge recorded outputs",
            )
        )
    if ev.shape == "letta":
        problems.append(
            Problem(
                where,
                "graders",
                f"{why} a letta-evals file (rows judged turn by turn and combined as letta "
                "scores them); use --engine local",
            )
        )
        return problems
    for grader in ev.graders:
        at = f"graders.{grader.name}"
        if grader.panel is not None:
            problems.append(
                Problem(where, f"{at}.panel", f"{why} a judge panel yet; use --engine local")
            )
        elif grader.rubric.text is None:
            problems.append(
                Problem(
                    where,
                    f"{at}.prompt",
                    f"{why} a judge prompt (a rubric file's text is what its workers get); "
                    "give the grader a rubric file, or use --engine local",
                )
            )
    return problems


def ray_missing() -> str | None:
    """The first of the ray extra's packages not installed here, if one is not."""
    return next((name for name in EXTRA if importlib.util.find_spec(name) is None), None)


class RayEngine:
    """A run's judgments made on Ray (`run.Engine`): one TableJudge per grader (graders with
    the same rubric and judge share one), all in one pass (one actor pool to start, not one a
    grader), each actor at its share of the run's pace, results as they come.
    `start` connects to the cluster (a local one when no address is given) before the run;
    `close` lets it go."""

    def __init__(self, ready: ReadyRun, address: str | None = None) -> None:
        self.address = address
        self.concurrency = ready.concurrency
        self._ready = ready
        self.actors = 1
        self._tables = self._table_judges()  # a setting that cannot be used: refused now

    def _table_judges(self) -> dict[tuple[str, int], TableJudge]:
        """One TableJudge per grader judging differently (graders with the same rubric and
        judge share one), each actor's share of the run's pace: the cap and the requests a
        minute split evenly among the actors, so together they keep the run's."""
        ready = self._ready
        limit = max_prompt_tokens(ready.eval)  # as the run's own judges hold their prompts
        per_minute = ready.requests_per_minute
        tables: dict[tuple[str, int], TableJudge] = {}
        for grader in ready.eval.graders:
            tables.setdefault(
                (grader.rubric.digest, id(ready.judges[grader.name])),
                TableJudge(
                    grader.rubric,
                    concurrency=self.concurrency // self.actors,
                    requests_per_minute=per_minute / self.actors if per_minute else None,
                    cache=ready.cache if isinstance(ready.cache, bool) else str(ready.cache),
                    max_prompt_tokens=limit,
                    **ready.settings[grader.name].model_dump(exclude_none=True),
                ),
            )
        return tables

    def start(self) -> None:
        """Connect to the cluster at `address` (else start a local one); JudgeConfigError when
        it cannot. The key is never handed over: Ray logs a job's runtime_env on every node, so
        each worker reads its key from its own environment (a local cluster's is this one's)."""
        # No Ray call of a thread still reading results once the run let Ray go may start a
        # cluster of its own (read when ray is first imported).
        os.environ.setdefault("RAY_ENABLE_AUTO_CONNECT", "0")
        import ray
        import ray.data

        logging.getLogger("ray.data").setLevel(logging.WARNING)  # no line per Dataset run
        try:
            ray.init(
                address=self.address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level="WARNING",
            )
        except Exception as error:  # ConnectionError, ValueError, RuntimeError: Ray's choice
            where = f"the Ray cluster at {self.address}" if self.address else "a local Ray"
            raise JudgeConfigError(f"--engine ray: cannot start {where}: {error}") from None
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        context.print_on_execution_start = False
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.actors = actors_for(self.concurrency, cpus)
        self._tables = self._table_judges()

    def close(self) -> None:
        """Let the cluster go (a local one stops). An interrupted run's results reader may
        still wait on Ray: what it then logs is no news."""
        import ray

        logging.getLogger("ray.data").setLevel(logging.CRITICAL)
        ray.shutdown()

    async def __call__(self, jobs: Iterator[Job]) -> AsyncIterator[tuple[int, GradeResult]]:
        """Each job's `(index, result)`, in the order they come back; if Ray fails the run,
        each job it did not judge gets an error result, never a crash."""
        judges = list(self._tables)
        numbers = {key: number for number, key in enumerate(judges)}
        waiting: dict[int, Job] = {}
        rows = []
        for index, job in enumerate(jobs):
            waiting[index] = job
            rows.append(job_row(index, job, numbers[job.rubric.digest, id(job.judge)]))
        if not rows:
            return
        try:
            async for index, result in self._judged([self._tables[key] for key in judges], rows):
                del waiting[index]
                yield index, result
        except Exception as error:  # Ray gave up (an actor that kept dying, a lost cluster)
            said = str(error).strip().splitlines() or [type(error).__name__]
            cause = f"the Ray job failed: {said[-1][:300]}"  # a worker's error: its last line
            for index, job in waiting.items():
                yield index, not_judged(job.rubric, job.judge.model, cause)  # type: ignore[union-attr]

    async def _judged(
        self, judges: list[TableJudge], rows: list[dict[str, Any]]
    ) -> AsyncIterator[tuple[int, GradeResult]]:
        """`rows` judged in the actor pool (each by the judge its `judge` column numbers),
        each result as its batch comes back."""
        import ray.data
        from ray.data import ActorPoolStrategy

        dataset = ray.data.from_items(rows).map_batches(
            JudgingActor,
            fn_constructor_args=(judges,),
            compute=ActorPoolStrategy(size=self.actors),
            num_cpus=ACTOR_CPUS,
            batch_format="pyarrow",
            batch_size=max(16, 8 * self.concurrency // self.actors),  # a small tail each
        )
        async for batch in streamed(dataset):
            for index, text in zip(batch["job"], batch["result"], strict=True):
                yield index, GradeResult.model_validate_json(text)


def actors_for(concurrency: int, cpus: int) -> int:
    """A run's judging actors: as many as the cluster has CPUs, at most `concurrency`, and a
    divisor of it, so each keeps an even share of the cap and together exactly the run's."""
    most = max(1, min(concurrency, cpus))
    return max(n for n in range(1, most + 1) if concurrency % n == 0)


class JudgingActor:
    """A Ray actor judging batches with the TableJudges it was given (pickled: each rubric's
    text and digest and the settings, never the key), each row by the one its `judge` column
    numbers, giving back only each row's job and whole result."""

    def __init__(self, judges: list[TableJudge]) -> None:
        self.judges = judges

    def __call__(self, batch: Any) -> Any:
        import pyarrow

        numbers = batch.column("judge").to_pylist()
        parts = [
            judge(rows_where(batch, [number == mine for number in numbers]))
            for mine, judge in enumerate(self.judges)
            if mine in numbers
        ]
        return pyarrow.concat_tables(part.select(["job", "result"]) for part in parts)


def job_row(index: int, job: Job, judge: int) -> dict[str, Any]:
    """A job as a row of the Dataset: its index, the number of the judge it asks, and its
    item's fields, every column in every row (text or None: one type a column), the run as
    JSON."""
    item = job.item
    assert isinstance(item, Item), "a target's outputs are refused (ray_refusals)"
    run = None if item.transcript is None else item.transcript.model_dump(mode="json")
    return {
        "job": index,
        "judge": judge,
        "id": None if item.id is None else str(item.id),
        "output": item.output,
        "input": item.input,
        "context": item.context,
        "reference": item.reference,
        "baseline": item.baseline,
        "transcript": None if run is None else json.dumps(run),
    }


async def streamed(dataset: Any) -> AsyncIterator[dict[str, list[Any]]]:
    """A Dataset's batches as they come (read in a thread of their own, so the run's loop,
    and an interrupt, never wait on Ray); leaving early leaves the rest unread."""
    loop = asyncio.get_running_loop()
    arrived: asyncio.Queue[dict[str, list[Any]] | BaseException | None] = asyncio.Queue()
    left = threading.Event()

    def hand(value: dict[str, list[Any]] | BaseException | None) -> None:
        if not left.is_set():
            try:
                loop.call_soon_threadsafe(arrived.put_nowait, value)
            except RuntimeError:  # the loop closed meanwhile: nobody waits
                left.set()

    def read() -> None:
        try:
            for batch in dataset.iter_batches(batch_format="pyarrow", batch_size=None):
                if left.is_set():
                    return
                hand({name: batch.column(name).to_pylist() for name in ("job", "result")})
        except BaseException as error:  # noqa: BLE001 - handed to the run, which decides
            hand(error)
        else:
            hand(None)

    threading.Thread(target=read, name="rubriclib-ray-results", daemon=True).start()
    try:
        while (value := await arrived.get()) is not None:
            if isinstance(value, BaseException):
                raise value
            yield value
    finally:
        left.set()

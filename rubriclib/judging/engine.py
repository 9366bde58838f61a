"""Many judgments: one lazy, bounded stream that every multi-judgment path uses.

`judge_stream` pulls jobs from an iterator as workers free up (memory holds the work in flight,
not the work pending), yields `(index, result)` as each judgment finishes, and makes every
request of the run wait on the run's one `Pacer` for its endpoint and key (`Pacing`), whichever
grader, panel member, vote or checklist item sends it: a 429 slows everything the run sends
there, and an endpoint that cannot serve the run at all (bad key, unknown model, nothing
listening) stops it, every job for it not yet judged getting an error result at once.
`interruptible` turns SIGINT/SIGTERM into a clean stop and a report written whole, however many
signals come.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass
from typing import Any

from rubriclib.item import Item, ItemError, NoOutput, TranscriptError, as_item
from rubriclib.judging.endpoints.pacer import Pacing, RunPacing
from rubriclib.judging.grader import Grader
from rubriclib.judging.result import GradeResult, not_judged
from rubriclib.rubrics import Rubric, load_rubric


@dataclass(frozen=True)
class Job:
    """One judgment to make: a rubric, an item, which trial of it this is (from 1), and the
    grader to ask when it is not the stream's own (an eval's graders may use several).

    `item` may also be a coroutine function that produces the Item (a target model writing
    the output first), given the run's Pacing so that its requests wait on the run's pacers as
    the judgments' do; NoOutput from it makes the judgment an error naming the cause."""

    rubric: Rubric
    item: Item | Callable[[Pacing], Awaitable[Item]]
    trial: int = 1
    judge: Grader | None = None


async def judge_stream(
    grader: Grader,
    jobs: Iterable[Job],
    *,
    concurrency: int = 8,
    requests_per_minute: float | None = None,
    pacing: Pacing | None = None,
) -> AsyncIterator[tuple[int, GradeResult]]:
    """Judge every job, `concurrency` judgments at once, yielding `(index, result)` as each
    finishes; the requests to each endpoint and key wait on `pacing`'s pacer for it (by default
    the run's own: `concurrency` requests in flight, `requests_per_minute` starts a minute). A
    caller running several streams as one run (align's folds) passes one `pacing` to each.

    Exactly one result per job, whatever fails; jobs are pulled lazily from `jobs`. Closing the
    stream early (or cancelling its consumer) cancels the judgments in flight.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    run_pacing = pacing or RunPacing(concurrency, requests_per_minute)
    source: Iterator[tuple[int, Job]] = enumerate(jobs)
    finished: asyncio.Queue[tuple[int, GradeResult] | BaseException | None] = asyncio.Queue(
        maxsize=concurrency
    )

    async def work() -> None:
        for index, job in source:  # next() never awaits, so workers share the iterator safely
            asked = job.judge or grader
            await finished.put((index, await _judge_one(asked, job, run_pacing)))

    async def run_workers() -> None:
        try:
            await asyncio.gather(*(work() for _ in range(concurrency)))
        except Exception as error:  # the job iterator itself failed: hand it to the consumer
            await finished.put(error)
            return
        await finished.put(None)

    runner = asyncio.create_task(run_workers())
    try:
        while (entry := await finished.get()) is not None:
            if isinstance(entry, BaseException):
                raise entry
            yield entry
    finally:
        runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await runner


@dataclass(frozen=True)
class RunInfo:
    """What a run was and how it ended, beside its judgments."""

    judge_model: str
    endpoint: str
    """The judge endpoint as scheme://host[:port]/path, never with credentials."""
    started: float
    """time.time() when the run started."""
    finished: float
    planned: int
    """Judgments the run set out to make; fewer were made when it was interrupted."""
    interrupted: str | None = None
    """The signal that stopped the run early ("SIGINT", "SIGTERM"), or None."""


async def judge_all(
    grader: Grader,
    jobs: Iterable[Job],
    planned: int,
    *,
    concurrency: int = 8,
    requests_per_minute: float | None = None,
    on_judgment: Callable[[], None] | None = None,
    interrupt: Interrupted | None = None,
    pacing: Pacing | None = None,
) -> tuple[dict[int, GradeResult], RunInfo]:
    """Every job's result by its index, through `judge_stream` (paced by `pacing` when given),
    and the run's RunInfo (`planned` jobs). When `interrupt` records a signal, the run stops and
    what was judged until then comes back (goldens and calibration runs)."""
    results: dict[int, GradeResult] = {}
    started = time.time()
    try:
        stream = judge_stream(
            grader,
            jobs,
            concurrency=concurrency,
            requests_per_minute=requests_per_minute,
            pacing=pacing,
        )
        async for index, result in stream:
            results[index] = result
            if on_judgment is not None:
                on_judgment()
    except asyncio.CancelledError:
        if interrupt is None or interrupt.signal is None:
            raise
        asyncio.current_task().uncancel()  # type: ignore[union-attr]
    info = RunInfo(
        judge_model=grader.model,
        endpoint=grader.endpoint,
        started=started,
        finished=time.time(),
        planned=planned,
        interrupted=interrupt.signal if interrupt is not None else None,
    )
    return results, info


async def agrade_many(
    grader: Grader,
    rubric: Rubric | str,
    items: Iterable[Item | Mapping[str, Any]],
    *,
    concurrency: int = 8,
    requests_per_minute: float | None = None,
) -> list[GradeResult]:
    """Every item judged by `grader` through `judge_stream`: one result per item, in input
    order (what `Judge.agrade_many` and `Panel.agrade_many` do). Items are pulled lazily; a bad
    one stops the pulling, the items before it finish, and an ItemError carries their results."""
    resolved = load_rubric(rubric) if isinstance(rubric, str) else rubric
    bad: list[TypeError | TranscriptError] = []

    def jobs() -> Iterator[Job]:  # pulled as workers free up: a generator stays lazy
        for index, item in enumerate(items):
            try:
                checked = as_item(item, f"items[{index}]")
            except (TypeError, TranscriptError) as error:
                bad.append(error)  # no item after it is pulled; those before finish
                return
            yield Job(resolved, checked)

    results: dict[int, GradeResult] = {}
    stream = judge_stream(
        grader, jobs(), concurrency=concurrency, requests_per_minute=requests_per_minute
    )
    async for index, result in stream:
        results[index] = result
    ordered = [results[index] for index in sorted(results)]
    if bad:
        raise ItemError(str(bad[0]), ordered)
    return ordered


async def _judge_one(grader: Grader, job: Job, pacing: Pacing) -> GradeResult:
    if (dead := pacing.pacer(grader.pace_key).dead) is not None:
        return not_judged(job.rubric, grader.model, dead)
    try:
        item = job.item if isinstance(job.item, Item) else await job.item(pacing)
        return await grader.agrade_item(job.rubric, item, trial=job.trial, pacing=pacing)
    except NoOutput as error:
        return not_judged(job.rubric, grader.model, f"no output: {error}")
    except Exception as error:  # never lose a judgment, whatever went wrong
        return not_judged(job.rubric, grader.model, f"unexpected {type(error).__name__}")


STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted:
    """Which signal stopped a run, if any (see `interruptible`)."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self._stop: Callable[[], object] | None = None

    def _note(self, number: int, frame: object) -> None:
        """The handler: the first signal is recorded and stops the run; later ones do nothing.
        It stays installed until the command ends: replacing it here would leave a signal that
        arrived meanwhile pending for a handler that is gone, which CPython raises as
        "OSError: Signal 15 ignored due to race condition" in whatever code runs next."""
        if self.signal is not None:
            return
        self.signal = signal.Signals(number).name
        if self._stop is not None:
            self._stop()

    @contextlib.contextmanager
    def cancelling_current_task(self) -> Iterator[Interrupted]:
        """While inside (in a coroutine), the first signal cancels the current task: it catches
        the CancelledError, keeps what it has, and reads `.signal` to report."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._stop = lambda: loop.call_soon_threadsafe(task.cancel)
        if self.signal is not None:  # it came before the run began: stop at the first await
            task.cancel()
        try:
            yield self
        finally:
            self._stop = None


@contextlib.contextmanager
def interruptible() -> Iterator[Interrupted]:
    """While inside (a command: its run and its report), SIGINT and SIGTERM never kill the
    process: the first is recorded and stops the run, later ones are ignored (until the exit it
    causes), so the report is written whole and once."""
    stopped = Interrupted()
    previous = {number: signal.signal(number, stopped._note) for number in STOPPING_SIGNALS}
    try:
        yield stopped
    finally:
        if stopped.signal is None:
            for number, handler in previous.items():
                signal.signal(number, handler)
        else:
            _ignore_from_now()


def _ignore_from_now() -> None:
    """SIG_IGN for the stopping signals until the process ends (unlike a Python handler, it
    outlasts finalization). They are blocked meanwhile: `signal.signal` first runs the handler
    of any signal already caught, and one arriving during the switch waits in the kernel, where
    SIG_IGN discards it, instead of becoming the race CPython reports as an OSError."""
    block = getattr(signal, "pthread_sigmask", None)  # POSIX only
    if block is not None:
        block(signal.SIG_BLOCK, STOPPING_SIGNALS)
    for number in STOPPING_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    if block is not None:
        block(signal.SIG_UNBLOCK, STOPPING_SIGNALS)

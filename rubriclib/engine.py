"""Many judgments: one lazy, bounded stream that every multi-judgment path uses.

`judge_stream` pulls jobs from an iterator as workers free up (memory holds the work in flight,
not the work pending), yields `(index, result)` as each judgment finishes, and shares one
`Pacer` between all requests of the run: a 429 slows the whole run, and an endpoint that cannot
serve the run at all (bad key, unknown model, nothing listening) stops it, every job not yet
judged getting an error result at once. `interruptible` turns SIGINT/SIGTERM into a clean stop
and a report written whole, however many signals come.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rubriclib.item import Item, NoOutput
from rubriclib.judge import EndpointUnusable, Judge
from rubriclib.result import GradeResult, not_judged
from rubriclib.rubric import Rubric

CONNECTION_FAILURES_TO_STOP = 3
"""Connection failures in a row (no HTTP answer between them) after which a run stops sending."""


@dataclass(frozen=True)
class Job:
    """One judgment to make: a rubric, an item, which trial of it this is (from 1), and the
    judge to ask when it is not the stream's own (an eval's graders may use several).

    `item` may also be a coroutine function that produces the Item (a target model writing
    the output first); NoOutput from it makes the judgment an error naming the cause."""

    rubric: Rubric
    item: Item | Callable[[], Awaitable[Item]]
    trial: int = 1
    judge: Judge | None = None


class Pacer:
    """The run's shared pace: how many requests may be in flight, when to pause, when to stop.

    Additive increase, multiplicative decrease: a 429 halves the requests allowed in flight and
    pauses every new request for the server's Retry-After; each success adds back a little, so
    the run recovers over about one round per request regained. An optional requests-per-minute
    cap spaces request starts evenly.
    """

    def __init__(
        self, judge: Judge, concurrency: int, requests_per_minute: float | None = None
    ) -> None:
        self.ceiling = concurrency
        self.allowed = float(concurrency)
        self.in_flight = 0
        self.dead: str | None = None
        self._interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next_start = 0.0
        self._paused_until = 0.0
        self._connection_failures = 0
        self._judge = judge
        self._changed = asyncio.Condition()

    async def acquire(self) -> None:
        """Wait for a slot; raises EndpointUnusable once the run has stopped sending."""
        async with self._changed:
            while True:
                if self.dead is not None:
                    raise EndpointUnusable(self.dead)
                now = time.monotonic()
                wait = max(self._paused_until, self._next_start) - now
                if wait <= 0 and self.in_flight < int(self.allowed):
                    break
                timeout = wait if wait > 0 else None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout)
            self.in_flight += 1
            self._next_start = max(now, self._next_start) + self._interval

    async def release(self, reply: Any) -> None:
        """Give back a slot and learn from what the request got back."""
        kind, detail = self._judge.endpoint_signal(reply)
        async with self._changed:
            self.in_flight -= 1
            if kind == "connection":
                self._connection_failures += 1
                if self._connection_failures >= CONNECTION_FAILURES_TO_STOP:
                    self._stop(detail)
            else:
                self._connection_failures = 0
            if kind == "unusable":
                self._stop(detail)
            elif kind == "rate_limited":
                self.allowed = max(1.0, self.allowed / 2)
                pause = float(detail)
                self._paused_until = max(self._paused_until, time.monotonic() + pause)
            elif kind == "ok":
                self.allowed = min(float(self.ceiling), self.allowed + 1 / self.allowed)
            self._changed.notify_all()

    def _stop(self, cause: str) -> None:
        if self.dead is None:
            self.dead = cause


async def judge_stream(
    judge: Judge,
    jobs: Iterable[Job],
    *,
    concurrency: int = 8,
    requests_per_minute: float | None = None,
) -> AsyncIterator[tuple[int, GradeResult]]:
    """Judge every job, `concurrency` at once, yielding `(index, result)` as each finishes.

    Exactly one result per job, whatever fails; jobs are pulled lazily from `jobs`. Closing the
    stream early (or cancelling its consumer) cancels the judgments in flight.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    pacers: dict[str, Pacer] = {}  # one per endpoint: each keeps its own pace and fail-fast

    def pacer_of(asked: Judge) -> Pacer:
        if asked.endpoint not in pacers:
            pacers[asked.endpoint] = Pacer(asked, concurrency, requests_per_minute)
        return pacers[asked.endpoint]

    source: Iterator[tuple[int, Job]] = enumerate(jobs)
    finished: asyncio.Queue[tuple[int, GradeResult] | BaseException | None] = asyncio.Queue(
        maxsize=concurrency
    )

    async def work() -> None:
        for index, job in source:  # next() never awaits, so workers share the iterator safely
            asked = job.judge or judge
            await finished.put((index, await _judge_one(asked, job, pacer_of(asked))))

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


async def judge_all(
    judge: Judge,
    jobs: Iterable[Job],
    *,
    concurrency: int = 8,
    requests_per_minute: float | None = None,
    on_judgment: Callable[[], None] | None = None,
    interrupt: Interrupted | None = None,
) -> dict[int, GradeResult]:
    """Every job's result by its index, through `judge_stream`. When `interrupt` records a
    signal, the run stops and what was judged until then comes back."""
    results: dict[int, GradeResult] = {}
    try:
        stream = judge_stream(
            judge, jobs, concurrency=concurrency, requests_per_minute=requests_per_minute
        )
        async for index, result in stream:
            results[index] = result
            if on_judgment is not None:
                on_judgment()
    except asyncio.CancelledError:
        if interrupt is None or interrupt.signal is None:
            raise
        asyncio.current_task().uncancel()  # type: ignore[union-attr]
    return results


async def _judge_one(judge: Judge, job: Job, pacer: Pacer) -> GradeResult:
    if pacer.dead is not None:
        return not_judged(job.rubric, judge.model, pacer.dead)
    try:
        item = job.item if isinstance(job.item, Item) else await job.item()
        return await judge.agrade_item(job.rubric, item, trial=job.trial, pacer=pacer)
    except NoOutput as error:
        return not_judged(job.rubric, judge.model, f"no output: {error}")
    except Exception as error:  # never lose a judgment, whatever went wrong
        return not_judged(job.rubric, judge.model, f"unexpected {type(error).__name__}")


STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted:
    """Which signal stopped a run, if any (see `interruptible`)."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self._stop: Callable[[], object] | None = None

    def _note(self, number: int, frame: object) -> None:
        if self.signal is not None:
            return
        self.signal = signal.Signals(number).name
        for ignored in STOPPING_SIGNALS:  # SIG_IGN, unlike a Python handler, outlasts finalization
            signal.signal(ignored, signal.SIG_IGN)
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

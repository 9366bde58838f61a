"""A judgment as steps, and the two drivers that run them.

A Judge writes each judgment once, as a generator of steps (`Send` a request body, `Wait`
before a retry, run judgments `Together`); `drive` runs the steps with the SDK's sync client
and `time.sleep` (`Judge.grade`), `adrive` with a Transport, `asyncio.sleep` and the run's Pacer
(`Judge.agrade_item`; `Judge.grade` too through an injected Transport, by `run_to_end`). So
retries, quirk fallbacks and the corrective turn are written once. A request that is not a
judgment (a target's: `request_steps`) is steps too, run by the same drivers.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from rubriclib.judging.result import GradeResult

if TYPE_CHECKING:
    from rubriclib.judging.endpoints.failures import SignalKind
    from rubriclib.judging.endpoints.pacer import Pacer
    from rubriclib.judging.endpoints.transport import Transport

T = TypeVar("T")


@dataclass(frozen=True)
class Send:
    """Step: POST this Chat Completions body, waiting at most `timeout` seconds; the driver
    sends back the reply's bytes or the exception. `custom_id` names the request: its cache key
    (endpoint, body, trial and vote), a batch request's custom_id."""

    body: dict[str, Any]
    timeout: float
    custom_id: str


@dataclass(frozen=True)
class Wait:
    """Step: wait before the next try."""

    seconds: float


@dataclass(frozen=True)
class Together:
    """Step: run these judgments' steps (a checklist's items), at once where the driver can;
    the driver sends back their results, in order."""

    judgments: tuple[Steps, ...]


Steps = Generator[Send | Wait | Together, Any, GradeResult]
"""A judgment's steps; the driver sends back each request's reply (bytes or the exception),
or the results of the judgments run together."""

Outcome = TypeVar("Outcome")
"""What steps end with: a judgment's GradeResult, a plain request's reply (`request_steps`)."""


@dataclass(frozen=True)
class _Done(Generic[Outcome]):
    """Steps that have taken their last one, and what they ended with."""

    result: Outcome


def _next_step(
    steps: Generator[Send | Wait | Together, Any, Outcome], reply: Any
) -> Send | Wait | Together | _Done[Outcome]:
    """The step a judgment takes once sent `reply`, or `_Done` when it has ended: how both
    drivers advance it."""
    try:
        return steps.send(reply)
    except StopIteration as done:
        return _Done(done.value)


def drive(
    steps: Generator[Send | Wait | Together, Any, Outcome], post: Callable[..., bytes]
) -> Outcome:
    """Run a judgment's steps one after another, sending with `post(body, timeout=...)` (the
    SDK's sync client) and waiting with `time.sleep`."""
    reply: Any = None
    while not isinstance(step := _next_step(steps, reply), _Done):
        reply = _reply(step, post)
    return step.result


def _reply(step: Send | Wait | Together, post: Callable[..., bytes]) -> Any:
    """What `drive` sends back for one step."""
    if isinstance(step, Wait):
        time.sleep(step.seconds)
        return None
    if isinstance(step, Together):
        return [drive(judgment, post) for judgment in step.judgments]
    try:
        return post(step.body, timeout=step.timeout)
    except Exception as error:  # every failure becomes data for the judgment
        return error


def run_to_end(start: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`start()` run to its end from sync code, in an event loop of its own (a worker thread's
    when this thread already runs one, as a notebook's does): how `grade` drives a judgment
    through an injected Transport exactly as `agrade` does, and how every sync form of an async
    run (`run_eval`, `test_goldens`, `calibrate`, `align`) runs it."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False  # run it outside this handler: its errors are not raised "during" it
    else:
        running = True
    if not running:
        return asyncio.run(start())
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, start()).result()


async def adrive(
    steps: Generator[Send | Wait | Together, Any, Outcome],
    transport: Transport,
    pacer: Pacer | None,
    signal: Callable[[Any], tuple[SignalKind, Any]],
) -> Outcome:
    """Run a judgment's (or a plain request's) steps through `transport`, waiting with
    `asyncio.sleep`, judgments `Together` at once; each request waits for `pacer` (the run's,
    if any) and tells it what its outcome says about the endpoint (`signal`)."""
    reply: Any = None
    while not isinstance(step := _next_step(steps, reply), _Done):
        reply = await _areply(step, transport, pacer, signal)
    return step.result


async def _areply(
    step: Send | Wait | Together,
    transport: Transport,
    pacer: Pacer | None,
    signal: Callable[[Any], tuple[SignalKind, Any]],
) -> Any:
    """What `adrive` sends back for one step."""
    if isinstance(step, Wait):
        await asyncio.sleep(step.seconds)
        return None
    if isinstance(step, Together):
        together: list[Awaitable[GradeResult]] = [
            adrive(judgment, transport, pacer, signal) for judgment in step.judgments
        ]
        return list(await asyncio.gather(*together))
    return await send(step, transport, pacer, signal)


async def send(
    step: Send,
    transport: Transport,
    pacer: Pacer | None,
    signal: Callable[[Any], tuple[SignalKind, Any]],
) -> Any:
    """One request's reply (bytes) or the exception, waiting on `pacer` when given and telling
    it what the outcome says about the endpoint (`signal`)."""
    try:
        if pacer is not None:
            await pacer.acquire()
        try:
            reply: Any = await transport.post(
                step.body, timeout=step.timeout, custom_id=step.custom_id
            )
        except Exception as error:  # every failure becomes data for the judgment
            reply = error
        if pacer is not None:
            await pacer.release(signal(reply))
        return reply
    except Exception as error:
        return error

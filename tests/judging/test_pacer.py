"""The pace a run shares between its requests: slots in flight, halving on a 429 and regaining
on success, the server's Retry-After, a requests-per-minute cap, and stopping at a dead endpoint."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from rubriclib.judging.endpoints.failures import EndpointUnusable
from rubriclib.judging.endpoints.pacer import CONNECTION_FAILURES_TO_STOP, Pacer


async def one_request(pacer: Pacer, signal: tuple[str, Any]) -> None:
    await pacer.acquire()
    await pacer.release(signal)  # type: ignore[arg-type]


def test_no_more_requests_in_flight_than_allowed() -> None:
    async def scenario() -> None:
        pacer = Pacer(2)
        await pacer.acquire()
        await pacer.acquire()
        third = asyncio.ensure_future(pacer.acquire())
        await asyncio.sleep(0.05)
        assert not third.done() and pacer.in_flight == 2
        await pacer.release(("ok", None))
        await asyncio.wait_for(third, 1.0)
        assert pacer.in_flight == 2

    asyncio.run(scenario())


def test_a_429_halves_what_is_allowed_down_to_one() -> None:
    async def scenario() -> None:
        pacer = Pacer(8)
        allowed = []
        for _ in range(4):
            await one_request(pacer, ("rate_limited", 0))
            allowed.append(pacer.allowed)
        assert allowed == [4.0, 2.0, 1.0, 1.0]

    asyncio.run(scenario())


def test_successes_regain_slowly_and_never_pass_the_ceiling() -> None:
    async def scenario() -> None:
        pacer = Pacer(4)
        await one_request(pacer, ("rate_limited", 0))
        await one_request(pacer, ("ok", None))
        assert pacer.allowed == pytest.approx(2.5)  # 2 + 1/2: one slot over about 2 successes
        for _ in range(20):
            await one_request(pacer, ("ok", None))
        assert pacer.allowed == 4.0

    asyncio.run(scenario())


def test_a_429_pauses_every_new_request_for_its_retry_after() -> None:
    async def scenario() -> float:
        pacer = Pacer(4)
        await one_request(pacer, ("rate_limited", 0.3))
        started = time.monotonic()
        await pacer.acquire()
        return time.monotonic() - started

    assert 0.25 <= asyncio.run(scenario()) < 2.0


def test_failures_with_an_answer_change_nothing() -> None:
    async def scenario() -> None:
        pacer = Pacer(4)
        for _ in range(5):
            await one_request(pacer, ("failed", "HTTP 500"))
        assert (pacer.allowed, pacer.in_flight, pacer.dead) == (4.0, 0, None)

    asyncio.run(scenario())


def test_requests_per_minute_space_the_starts() -> None:
    async def scenario() -> float:
        pacer = Pacer(10, requests_per_minute=600)  # one start every 0.1 s
        started = time.monotonic()
        for _ in range(4):
            await one_request(pacer, ("ok", None))
        return time.monotonic() - started

    assert 0.28 <= asyncio.run(scenario()) < 2.0


def test_an_unusable_endpoint_stops_the_run_with_its_cause() -> None:
    async def scenario() -> None:
        pacer = Pacer(4)
        waiting = [asyncio.ensure_future(pacer.acquire()) for _ in range(5)]
        await asyncio.sleep(0.01)
        await pacer.release(("unusable", "HTTP 401: bad key"))
        await pacer.release(("unusable", "HTTP 404: later cause"))
        assert pacer.dead == "HTTP 401: bad key"  # the first cause is the one told
        with pytest.raises(EndpointUnusable, match="HTTP 401: bad key"):
            await asyncio.wait_for(waiting[4], 1.0)
        with pytest.raises(EndpointUnusable):
            await pacer.acquire()

    asyncio.run(scenario())


def test_connection_failures_stop_the_run_only_when_in_a_row() -> None:
    async def scenario() -> None:
        pacer = Pacer(4)
        for _ in range(CONNECTION_FAILURES_TO_STOP - 1):
            await one_request(pacer, ("connection", "refused"))
        await one_request(pacer, ("failed", "HTTP 500"))  # an answer: the count starts again
        for _ in range(CONNECTION_FAILURES_TO_STOP - 1):
            await one_request(pacer, ("connection", "refused"))
        assert pacer.dead is None
        await one_request(pacer, ("connection", "refused"))
        assert pacer.dead == "refused"

    asyncio.run(scenario())

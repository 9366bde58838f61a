"""The pace a run keeps per endpoint: how many requests may be in flight, when to pause, and
when to stop sending to an endpoint that cannot serve the run (`Pacer`), and the run's registry
of them, one per endpoint and key (`Pacing`, `RunPacing`; see `engine`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Hashable
from typing import Any, Protocol

from rubriclib.judging.endpoints.failures import EndpointUnusable, SignalKind

CONNECTION_FAILURES_TO_STOP = 3
"""Connection failures in a row (no HTTP answer between them) after which a run stops sending."""


class Pacer:
    """The run's shared pace: how many requests may be in flight, when to pause, when to stop.

    Additive increase, multiplicative decrease: a 429 halves the requests allowed in flight and
    pauses every new request for the server's Retry-After; each success adds back a little, so
    the run recovers over about one round per request regained. An optional requests-per-minute
    cap spaces request starts evenly.
    """

    def __init__(self, concurrency: int, requests_per_minute: float | None = None) -> None:
        self.ceiling = concurrency
        self.allowed = float(concurrency)
        self.in_flight = 0
        self.dead: str | None = None
        self.requests_per_minute = requests_per_minute
        """The run's cap on request starts a minute at this endpoint (None: none)."""
        self._interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next_start = 0.0
        self._paused_until = 0.0
        self._connection_failures = 0
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

    async def release(self, signal: tuple[SignalKind, Any]) -> None:
        """Give back a slot and learn from what the request got back: the sender's reading of
        its outcome (`Endpoint.signal`: the kind, with the seconds to pause for
        `rate_limited`, or the cause for `unusable` and `connection`)."""
        kind, detail = signal
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


class Pacing(Protocol):
    """Who a run's requests wait on: one Pacer per endpoint and key (`Grader.pace_key`), the
    same for every request the run sends there, whichever grader, panel member, vote, checklist
    item or optimizer call sends it. The seam a run on several machines replaces with one
    limiter its workers share."""

    def pacer(self, key: Hashable) -> Pacer:
        """The one Pacer of the endpoint and key `key` names, for the whole run."""
        ...


class RunPacing:
    """A run's Pacing in one process: each endpoint and key gets, on first use, a Pacer allowing
    `concurrency` requests in flight and `requests_per_minute` starts a minute."""

    def __init__(self, concurrency: int, requests_per_minute: float | None = None) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.concurrency = concurrency
        self.requests_per_minute = requests_per_minute
        self._pacers: dict[Hashable, Pacer] = {}

    def pacer(self, key: Hashable) -> Pacer:
        if key not in self._pacers:
            self._pacers[key] = Pacer(self.concurrency, self.requests_per_minute)
        return self._pacers[key]

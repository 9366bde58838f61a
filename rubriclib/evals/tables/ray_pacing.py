"""One pace for every actor of a Ray job: the run's Pacers (one per endpoint and key: in
flight, 429 halving, Retry-After, requests a minute, the stop) kept in one Ray actor, which every
TableJudge made with `pacing="ray"` waits on before each request. ray is imported only here,
and only when such a judge judges.

The keeper outlives any one actor of the job (it is detached: made by whichever actor asks
first, it would otherwise die with that one), and each slot it gives is a lease: a slot whose
holder died mid-request comes back when the lease runs out (the request's timeout and a
margin). Once nothing is held or awaited for a while (IDLE_SECONDS), the keeper ends itself."""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Hashable
from typing import Any

from rubriclib.judging import EndpointUnusable, Pacer, RunPacing

LEASE_MARGIN = 30.0
"""Seconds a slot is kept past its request's timeout before it is taken back."""
IDLE_SECONDS = 300.0
"""Seconds with nothing held or awaited after which a job's keeper ends (by default)."""
NAMESPACE = "rubriclib"
"""The Ray namespace the keepers are named in (each by its job, cap and pace)."""
TICK = 1.0
"""Seconds between the keeper's looks at its leases."""


class PaceKeeper:
    """The Ray actor (async, no CPU) that holds a job's Pacers: what `RunPacing` is in one
    process, asked over Ray. A waiting `acquire` waits in the actor, so the cap holds across
    every actor asking; each slot is a named lease, given back by `release` or, once it runs
    out, by `expire` (its holder died)."""

    def __init__(
        self, concurrency: int, requests_per_minute: float | None, idle_seconds: float
    ) -> None:
        self._pacing = RunPacing(concurrency, requests_per_minute)
        self._idle_seconds = idle_seconds
        self._leases: dict[str, tuple[Hashable, float]] = {}
        self._names = (f"{uuid.uuid4().hex[:8]}-{n}" for n in itertools.count())
        self._waiting = 0
        self._last_asked = time.monotonic()
        self._watch: asyncio.Task[None] | None = None

    async def acquire(self, key: Hashable, lease_seconds: float) -> tuple[str | None, str | None]:
        """Wait for a slot at `key`'s Pacer: the lease's name (unique across keepers), or why
        the run stopped sending there (and no lease)."""
        self._start_watching()
        pacer = self._pacing.pacer(key)
        self._waiting += 1
        try:
            await pacer.acquire()
        except EndpointUnusable:
            return None, pacer.dead
        finally:
            self._waiting -= 1
            self._last_asked = time.monotonic()
        lease = next(self._names)
        self._leases[lease] = (key, time.monotonic() + lease_seconds)
        return lease, None

    async def release(self, key: Hashable, lease: str, signal: tuple[Any, Any]) -> str | None:
        """Give back the lease's slot with what the request got back (nothing, if the lease ran
        out first); why the run stopped sending to `key`, if it did."""
        self._last_asked = time.monotonic()
        pacer = self._pacing.pacer(key)
        if self._leases.pop(lease, None) is not None:
            await pacer.release(signal)
        return pacer.dead

    async def expire(self) -> int:
        """Take back the slots whose leases ran out (their holders died mid-request): a request
        whose outcome was never told. How many."""
        now = time.monotonic()
        ended = [lease for lease, (_, until) in self._leases.items() if until <= now]
        for lease in ended:
            key, _ = self._leases.pop(lease)
            await self._pacing.pacer(key).release(("failed", None))
        return len(ended)

    def idle(self) -> bool:
        """Nothing held or awaited for `idle_seconds`: the job is done with this keeper."""
        quiet = time.monotonic() - self._last_asked
        return not self._leases and not self._waiting and quiet >= self._idle_seconds

    def _start_watching(self) -> None:
        if self._watch is None:
            self._watch = asyncio.get_running_loop().create_task(self._look_after())

    async def _look_after(self) -> None:
        while not self.idle():
            await asyncio.sleep(TICK)
            await self.expire()
        import ray

        ray.kill(ray.get_runtime_context().current_actor, no_restart=True)


class SharedPacer(Pacer):
    """A Pacer whose state is the PaceKeeper's: acquire and release ask it (about 2 ms each on
    one node); `dead` is what it last said. Each slot is held as a lease of `lease_seconds`."""

    def __init__(self, pacing: RayPacing, key: Hashable, lease_seconds: float) -> None:
        super().__init__(1)
        self._pacing, self._key, self._lease_seconds = pacing, key, lease_seconds
        self._leases: list[str] = []

    async def acquire(self) -> None:
        if self.dead is None:
            lease, self.dead = await self._pacing.ask("acquire", self._key, self._lease_seconds)
            if lease is not None:
                self._leases.append(lease)
        if self.dead is not None:
            raise EndpointUnusable(self.dead)

    async def release(self, signal: tuple[Any, Any]) -> None:
        # Slots are alike: give back the oldest lease this process holds at the endpoint.
        lease = self._leases.pop(0)
        self.dead = await self._pacing.ask("release", self._key, lease, signal)


class RayPacing:
    """A run's Pacing on Ray: each endpoint and key's Pacer shared through the job's
    PaceKeeper (the detached actor named for the job, the cap and the pace, made by the first
    to ask; made again if it ended after `idle_seconds` of nothing asked). A slot is leased
    for `lease_seconds`: a request's timeout and LEASE_MARGIN."""

    def __init__(
        self,
        concurrency: int,
        requests_per_minute: float | None,
        lease_seconds: float,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        import ray

        job = ray.get_runtime_context().get_job_id()
        self._name = f"rubriclib-pacing-{job}-{concurrency}-{requests_per_minute}"
        self._made = (concurrency, requests_per_minute, idle_seconds)
        self._lease_seconds = lease_seconds
        self._keeper = self._find_keeper()
        self._pacers: dict[Hashable, SharedPacer] = {}

    def pacer(self, key: Hashable) -> Pacer:
        if key not in self._pacers:
            self._pacers[key] = SharedPacer(self, key, self._lease_seconds)
        return self._pacers[key]

    async def ask(self, method: str, *arguments: Any) -> Any:
        """The keeper's answer to `method`; a keeper that ended (idle, or as this asked) is
        made again, once."""
        import ray

        try:
            return await getattr(self._keeper, method).remote(*arguments)
        except ray.exceptions.RayActorError:
            self._keeper = self._find_keeper()
            return await getattr(self._keeper, method).remote(*arguments)

    def _find_keeper(self) -> Any:
        import ray

        keeper = ray.remote(num_cpus=0)(PaceKeeper)
        options = keeper.options(
            name=self._name, namespace=NAMESPACE, get_if_exists=True, lifetime="detached"
        )
        return options.remote(*self._made)

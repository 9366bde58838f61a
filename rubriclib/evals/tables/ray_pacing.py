"""One pace for every actor of a Ray job: the run's Pacers (one per endpoint and key: in
flight, 429 halving, Retry-After, requests a minute, the stop) kept in one Ray actor, which every
TableJudge made with `pacing="ray"` waits on before each request. ray is imported only here,
and only when such a judge judges."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from rubriclib.judging import EndpointUnusable, Pacer, RunPacing


class PaceKeeper:
    """The Ray actor (async, no CPU) that holds a job's Pacers: what `RunPacing` is in one
    process, asked over Ray. A waiting `acquire` waits in the actor, so the cap holds across
    every actor asking."""

    def __init__(self, concurrency: int, requests_per_minute: float | None) -> None:
        self._pacing = RunPacing(concurrency, requests_per_minute)

    async def acquire(self, key: Hashable) -> str | None:
        """Wait for a slot at `key`'s Pacer; why the run stopped sending there, if it did."""
        pacer = self._pacing.pacer(key)
        try:
            await pacer.acquire()
        except EndpointUnusable:
            return pacer.dead
        return None

    async def release(self, key: Hashable, signal: tuple[Any, Any]) -> str | None:
        """Give back the slot with what the request got back; why the run stopped, if it did."""
        pacer = self._pacing.pacer(key)
        await pacer.release(signal)
        return pacer.dead


class SharedPacer(Pacer):
    """A Pacer whose state is the PaceKeeper's: acquire and release ask it (about 2 ms each on
    one node); `dead` is what it last said."""

    def __init__(self, keeper: Any, key: Hashable) -> None:
        super().__init__(1)
        self._keeper, self._key = keeper, key

    async def acquire(self) -> None:
        if self.dead is None:
            self.dead = await self._keeper.acquire.remote(self._key)
        if self.dead is not None:
            raise EndpointUnusable(self.dead)

    async def release(self, signal: tuple[Any, Any]) -> None:
        self.dead = await self._keeper.release.remote(self._key, signal)


class RayPacing:
    """A run's Pacing on Ray: each endpoint and key's Pacer shared through the job's
    PaceKeeper (the actor named for the job, the cap and the pace, made by the first to ask)."""

    def __init__(self, concurrency: int, requests_per_minute: float | None) -> None:
        import ray

        job = ray.get_runtime_context().get_job_id()
        name = f"rubriclib-pacing-{job}-{concurrency}-{requests_per_minute}"
        keeper = ray.remote(num_cpus=0)(PaceKeeper)
        self._keeper = keeper.options(name=name, get_if_exists=True).remote(
            concurrency, requests_per_minute
        )
        self._pacers: dict[Hashable, SharedPacer] = {}

    def pacer(self, key: Hashable) -> Pacer:
        if key not in self._pacers:
            self._pacers[key] = SharedPacer(self._keeper, key)
        return self._pacers[key]

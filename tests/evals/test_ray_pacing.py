"""The PaceKeeper's leases, without Ray (on Ray: tests/integrations/test_ray.py): a slot whose
holder died comes back when its lease runs out, a late release frees nothing twice, and the
keeper is idle only once nothing is held or awaited."""

from __future__ import annotations

import asyncio

from rubriclib.evals.tables.ray_pacing import PaceKeeper


async def started(
    keeper: PaceKeeper, lease_seconds: float
) -> asyncio.Task[tuple[str | None, str | None]]:
    """An acquire, running; given a moment to take a free slot if there is one."""
    task = asyncio.create_task(keeper.acquire("endpoint", lease_seconds))
    await asyncio.sleep(0.02)
    return task


def test_a_slot_whose_holder_died_comes_back_when_its_lease_runs_out() -> None:
    async def scenario() -> None:
        keeper = PaceKeeper(2, None, idle_seconds=60)
        died = [await keeper.acquire("endpoint", 0.05) for _ in range(2)]  # never released
        waiting = await started(keeper, 10)
        assert not waiting.done()
        assert await keeper.expire() == 0  # not yet run out
        await asyncio.sleep(0.05)
        assert await keeper.expire() == 2
        lease, dead = await asyncio.wait_for(waiting, 1)
        assert lease is not None and dead is None
        assert lease not in {name for name, _ in died}
        # the holder's release, late: its slot was already taken back, so nothing more is freed
        assert await keeper.release("endpoint", str(died[0][0]), ("ok", None)) is None
        second = await started(keeper, 10)
        third = await started(keeper, 10)
        assert second.done() and not third.done()
        third.cancel()

    asyncio.run(scenario())


def test_a_released_slot_is_given_back_once_and_its_lease_forgotten() -> None:
    async def scenario() -> None:
        keeper = PaceKeeper(1, None, idle_seconds=60)
        lease, _ = await keeper.acquire("endpoint", 0.01)
        assert await keeper.release("endpoint", str(lease), ("ok", None)) is None
        await asyncio.sleep(0.02)
        assert await keeper.expire() == 0
        held = await started(keeper, 10)
        assert held.done()
        assert not (await started(keeper, 10)).done()

    asyncio.run(scenario())


def test_the_keeper_is_idle_only_with_nothing_held_or_awaited_for_its_idle_seconds() -> None:
    async def scenario() -> None:
        keeper = PaceKeeper(1, None, idle_seconds=0.05)
        lease, _ = await keeper.acquire("endpoint", 10)
        waiting = await started(keeper, 10)
        await asyncio.sleep(0.06)
        assert not keeper.idle()  # one held, one awaited
        await keeper.release("endpoint", str(lease), ("ok", None))
        second, _ = await waiting
        await keeper.release("endpoint", str(second), ("ok", None))
        assert not keeper.idle()  # just asked
        await asyncio.sleep(0.06)
        assert keeper.idle()

    asyncio.run(scenario())


def test_an_endpoint_the_run_stopped_sending_to_gives_no_lease() -> None:
    async def scenario() -> None:
        keeper = PaceKeeper(1, None, idle_seconds=60)
        lease, _ = await keeper.acquire("endpoint", 10)
        stopped = await keeper.release("endpoint", str(lease), ("unusable", "HTTP 401"))
        assert stopped == "HTTP 401"
        assert await keeper.acquire("endpoint", 10) == (None, "HTTP 401")

    asyncio.run(scenario())

"""The one engine for many judgments: order, one result each, lazy pull, shared pace, fail-fast."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, error_reply, tool_reply

from rubriclib import Item, Rubric, RubricError
from rubriclib.judging.engine import Interrupted, Job, interruptible, judge_all, judge_stream
from rubriclib.judging.judge import Judge


def by_output(delays: dict[str, float] | None = None) -> Callable[[dict[str, Any]], Reply]:
    """Pass outputs containing 'good', fail the rest; sleep per output to scramble finish order."""

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        for marker, delay in (delays or {}).items():
            if marker in user:
                time.sleep(delay)
        name = "set_grade_pass" if "good" in user else "set_grade_fail"
        return tool_reply(name, {"reason": user.rsplit("```", 2)[-2].strip()})

    return respond


def test_grade_many_keeps_input_order_one_result_each(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.responder = by_output({"slow": 0.2})
    items = [Item(output="slow good 0"), {"output": "bad 1"}, Item(output="good 2", id=7)]
    results = judge.grade_many(rubric, items, concurrency=3)
    assert [r.verdict for r in results] == ["pass", "fail", "pass"]
    assert [r.reason for r in results] == ["slow good 0", "bad 1", "good 2"]
    assert judge_server.max_in_flight <= 3


def test_grade_many_and_a_panel_work_from_code_already_running_an_event_loop(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    """A notebook runs an event loop: the sync forms judge in a loop of their own there
    (`asyncio.run` inside a running loop raised RuntimeError)."""
    from rubriclib import Panel

    judge_server.responder = by_output()
    panel = Panel([judge])

    async def notebook_cell() -> list[str]:
        many = judge.grade_many(rubric, [{"output": "good"}, {"output": "bad"}])
        both = panel.grade_many(rubric, [{"output": "good"}])
        one = panel.grade(rubric, output="bad")
        return [result.verdict for result in [*many, *both, one]]

    assert asyncio.run(notebook_cell()) == ["pass", "fail", "pass", "fail"]


def test_the_stream_yields_as_judgments_finish(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    # The slow one is answered only once the other two were (and 0.3 s more), so it finishes
    # last however loaded the machine is.
    answer, others = by_output(), threading.Semaphore(0)

    def respond(body: dict[str, Any]) -> Reply:
        if "slow" not in body["messages"][1]["content"]:
            others.release()
            return answer(body)
        assert others.acquire(timeout=30) and others.acquire(timeout=30)
        time.sleep(0.3)
        return answer(body)

    judge_server.responder = respond
    jobs = [Job(rubric, Item(output=text)) for text in ("slow good", "bad", "good")]

    async def collect() -> list[int]:
        return [index async for index, _ in judge_stream(judge, jobs, concurrency=3)]

    order = asyncio.run(collect())
    assert sorted(order) == [0, 1, 2] and order[-1] == 0  # the slow one finishes last


def test_judge_all_gives_every_result_by_index_and_the_run_info(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.responder = by_output()
    jobs = [Job(rubric, Item(output=text)) for text in ("good 0", "bad 1")]
    before = time.time()
    results, info = asyncio.run(judge_all(judge, jobs, planned=2))
    assert {index: result.verdict for index, result in results.items()} == {0: "pass", 1: "fail"}
    assert (info.judge_model, info.endpoint) == (judge.model, judge.endpoint)
    assert before <= info.started <= info.finished and info.planned == 2
    assert info.interrupted is None


def test_jobs_are_pulled_lazily(judge: Judge, judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.responder = by_output()
    pulled = itertools.count()

    def endless() -> Iterator[Job]:
        for number in itertools.count():
            next(pulled)
            yield Job(rubric, Item(output=f"good {number}"))

    async def first_five() -> list[int]:
        taken = []
        async for index, _ in judge_stream(judge, endless(), concurrency=4):
            taken.append(index)
            if len(taken) == 5:
                break
        return taken

    assert len(asyncio.run(first_five())) == 5
    # in flight (4) + finished but not yet consumed (queue of 4) + one each worker is holding
    assert next(pulled) <= 5 + 4 + 4 + 4


def test_a_failing_job_source_is_raised_not_swallowed(judge: Judge, rubric: Rubric) -> None:
    def broken() -> Iterator[Job]:
        yield Job(rubric, Item(output="x"))
        raise ValueError("row 2 is bad")

    async def drain() -> None:
        async for _ in judge_stream(judge, broken(), concurrency=2):
            pass

    with pytest.raises(ValueError, match="row 2 is bad"):
        asyncio.run(drain())


def test_a_429_slows_the_whole_run(judge_server: JudgeServer, rubric: Rubric) -> None:
    arrivals: list[tuple[float, int]] = []
    lock = threading.Lock()
    limited = threading.Event()

    def respond(body: dict[str, Any]) -> Reply:
        with lock:
            arrivals.append((time.monotonic(), judge_server.in_flight))
            first = not limited.is_set()
            limited.set()
        if first:
            return error_reply(429, "slow down", {"Retry-After": "0.5"})
        time.sleep(0.05)
        return tool_reply("set_grade_pass", {"reason": "ok"})

    judge_server.responder = respond
    judge = Judge(base_url=judge_server.url, api_key=SECRET_KEY, backoff_base=0.001)
    started = time.monotonic()
    results = judge.grade_many(rubric, [{"output": f"o{i}"} for i in range(24)], concurrency=8)
    assert [r.verdict for r in results] == ["pass"] * 24
    limited_at = arrivals[0][0]
    # The first 8 were all sent before the 429 came back (on a loaded machine they can reach
    # the server tens of milliseconds apart); every request after them started after it.
    later = arrivals[8:]
    # Requests that started after the 429 waited out its Retry-After, and fewer ran at once:
    # 8 halved to 4, grown back to 5 by the first wave's 7 successes, plus at most one the
    # server still counts while writing its reply (on a loaded machine the client has sent its
    # next request by then).
    assert all(at - limited_at >= 0.45 for at, _ in later)
    assert max(in_flight for _, in_flight in later[:8]) <= 6
    assert max(in_flight for _, in_flight in later) < 8
    assert time.monotonic() - started >= 0.5


def test_a_requests_per_minute_cap_spaces_requests(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    arrivals: list[float] = []
    respond = by_output()

    def timed(body: dict[str, Any]) -> Reply:
        arrivals.append(time.monotonic())
        return respond(body)

    judge_server.responder = timed
    items = [{"output": f"good {i}"} for i in range(5)]
    judge.grade_many(rubric, items, concurrency=5, requests_per_minute=600)
    gaps = [later - earlier for earlier, later in itertools.pairwise(sorted(arrivals))]
    # 600 a minute: one start every 0.1 s (the first request's arrival is late: it opens the
    # connection, so the gap after it can look short)
    assert len(gaps) == 4 and min(gaps[1:]) >= 0.08


def test_a_closed_port_ends_a_big_run_in_seconds(rubric: Rubric) -> None:
    judge = Judge(base_url="http://127.0.0.1:9/v1", api_key=SECRET_KEY, timeout=2)
    started = time.monotonic()
    results = judge.grade_many(rubric, [{"output": str(i)} for i in range(1000)], concurrency=8)
    assert time.monotonic() - started < 10
    assert len(results) == 1000 and all(r.verdict == "error" for r in results)
    unsent = [r for r in results if r.reason.startswith("not judged: cannot connect")]
    assert len(unsent) >= 990
    assert all(r.details["judge"]["attempts"] == 0 for r in unsent)


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_dead_key_or_model_stops_sending(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, status: int
) -> None:
    judge_server.responder = lambda body: error_reply(status, f"no: key {SECRET_KEY} refused")
    results = judge.grade_many(rubric, [{"output": str(i)} for i in range(200)], concurrency=4)
    assert len(judge_server.requests) <= 4
    assert all(r.verdict == "error" for r in results)
    unsent = [r for r in results if r.reason.startswith(f"not judged: HTTP {status}")]
    assert len(unsent) >= 196
    assert all(SECRET_KEY not in r.model_dump_json() for r in results)


def test_a_dead_key_stops_only_its_own_judge_at_a_shared_endpoint(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    def reply(body: dict[str, Any]) -> Reply:
        if body["model"] == "dead-key":
            return error_reply(401, "invalid api key")
        return tool_reply("set_grade_pass", {"reason": "ok"})

    judge_server.responder = reply
    dead = Judge(model="dead-key", base_url=judge_server.url, api_key="sk-dead", max_retries=0)
    alive = Judge(model="live-key", base_url=judge_server.url, api_key="sk-live", max_retries=0)
    jobs = [Job(rubric, Item(output=str(i)), judge=(dead, alive)[i % 2]) for i in range(40)]
    results, _ = asyncio.run(judge_all(dead, jobs, len(jobs), concurrency=2))
    verdicts = [results[i].verdict for i in range(40)]
    assert verdicts[1::2] == ["pass"] * 20
    assert verdicts[0::2] == ["error"] * 20
    assert sum(body["model"] == "dead-key" for body in judge_server.requests) <= 2
    assert dead.pace_key != alive.pace_key and "sk-" not in repr(dead.pace_key)


def test_grade_takes_a_reference_and_checks_its_arguments(
    judge: Judge, judge_server: JudgeServer
) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "ok"}))
    result = judge.grade("groundedness@^1", output="x", context="x")
    assert result.details["rubric"]["name"] == "groundedness"
    with pytest.raises(RubricError, match="no rubric named"):
        judge.grade("groundednes", output="x")
    with pytest.raises(TypeError, match=r"grade.output: must be text, not dict"):
        judge.grade("groundedness", output={"a": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"items\[1\].output: is required"):
        judge.grade_many("groundedness", [{"output": "a", "context": "a"}, {"context": "b"}])
    sent = len(judge_server.requests)  # item 0's: a bad item is refused before its own request
    with pytest.raises(TypeError, match=r"items\[0\].outptu: unknown key"):
        judge.grade_many("groundedness", [{"outptu": "a"}])
    assert sent > 1 and len(judge_server.requests) == sent


def test_agrade_many_is_the_async_form(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.responder = by_output()
    results = asyncio.run(judge.agrade_many(rubric, [{"output": "good"}, {"output": "bad"}]))
    assert [r.verdict for r in results] == ["pass", "fail"]
    assert judge.grade_many(rubric, []) == []


@pytest.fixture
def signal_handlers() -> Iterator[None]:
    """Give back this process's SIGINT and SIGTERM handlers, whatever a test left."""
    kept = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    yield
    for number, handler in kept.items():
        signal.signal(number, handler)


async def stopped_by_signals(interrupt: Interrupted, *sent: signal.Signals) -> str:
    with interrupt.cancelling_current_task():
        try:
            for number in sent:
                os.kill(os.getpid(), number)
            await asyncio.sleep(5)
            return "not stopped"
        except asyncio.CancelledError:
            return "stopped"


def test_the_first_signal_stops_the_run_and_later_ones_change_nothing(
    signal_handlers: None,
) -> None:
    with interruptible() as interrupt:
        assert asyncio.run(stopped_by_signals(interrupt, signal.SIGTERM, signal.SIGINT)) == (
            "stopped"
        )
        os.kill(os.getpid(), signal.SIGINT)  # while the report is written: no KeyboardInterrupt
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.01)
    assert interrupt.signal == "SIGTERM"
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # until the exit it causes


def test_a_signal_before_the_run_stops_it_at_once(signal_handlers: None) -> None:
    with interruptible() as interrupt:
        os.kill(os.getpid(), signal.SIGINT)
        assert asyncio.run(stopped_by_signals(interrupt)) == "stopped"
    assert interrupt.signal == "SIGINT"


def test_a_run_with_no_signal_gives_the_handlers_back(signal_handlers: None) -> None:
    before = signal.getsignal(signal.SIGINT)
    with interruptible() as interrupt:
        assert signal.getsignal(signal.SIGINT) != before
    assert signal.getsignal(signal.SIGINT) == before and interrupt.signal is None


def test_grade_many_pulls_a_generator_as_it_judges(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    pulled = 0
    seen_at_first_request: list[int] = []

    def respond(body: dict[str, Any]) -> Reply:
        if not seen_at_first_request:
            seen_at_first_request.append(pulled)
        return by_output()(body)

    def items() -> Iterator[dict[str, str]]:
        nonlocal pulled
        for number in range(4000):
            pulled += 1
            yield {"output": f"good {number}"}

    judge_server.responder = respond
    results = judge.grade_many(rubric, items(), concurrency=4)
    assert len(results) == 4000 and seen_at_first_request[0] <= 8


def test_a_bad_item_in_a_generator_stops_the_run_and_keeps_what_was_judged(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    from rubriclib.item import ItemError

    judge_server.responder = by_output()

    def items() -> Iterator[dict[str, Any]]:
        for number in range(10):
            yield {"output": f"good {number}"} if number != 5 else {"output": {"a": 1}}

    with pytest.raises(TypeError, match=r"items\[5\].output: must be text, not dict") as caught:
        judge.grade_many(rubric, items(), concurrency=2)
    assert isinstance(caught.value, ItemError)
    assert [r.reason for r in caught.value.results] == [f"good {n}" for n in range(5)]
    assert len(judge_server.requests) == 5  # items 0-4 judged; none after the bad one

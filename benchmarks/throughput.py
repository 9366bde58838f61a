"""Judgments per second at 16 and 64 in flight, against a judge that answers after 200 ms.

The same 256 groundedness judgments go through rubriclib's `grade_many`, a bare openai SDK loop
(semaphore + gather), and the LLM judges of autoevals, openevals and letta-evals when they are
installed (`pip install -e '.[bench]'`). Each run is timed as a user would run it: client
creation included, after one untimed warm-up per contender. The latency limit N * L / C is the
fastest any client can be; `limit/wall` is the share of it reached. Then a cached rerun counts
the requests it sends (expected: none). Run with `make bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import openai  # noqa: E402
from bench_server import Responder, served  # noqa: E402
from judge_server import JudgeServer  # noqa: E402
from openai.types.chat import ChatCompletionMessageFunctionToolCall  # noqa: E402

from rubriclib import Item, load_rubric, render  # noqa: E402
from rubriclib.judging.asking.request import verdict_tools  # noqa: E402
from rubriclib.judging.judge import Judge  # noqa: E402

JUDGMENTS = 256
LATENCY = 0.2
CONCURRENCIES = (16, 64)
TARGET_LIMIT_SHARE_AT_16 = 0.95
TARGET_VS_SDK_AT_64 = 1.25
QUESTION = "When did Apollo 11 land on the Moon?"
CONTEXT = "Apollo 11 landed on the Moon on 20 July 1969."

Contender = Callable[[str, Sequence[Item], int], int]
"""Judge every item against the base URL, so many in flight; returns how many got a verdict."""


def items(count: int) -> list[Item]:
    """`count` short groundedness items, each output a little different."""
    return [
        Item(output=f"Apollo 11 landed in 1969 (item {i}).", context=CONTEXT) for i in range(count)
    ]


def rubriclib_grade_many(url: str, batch: Sequence[Item], concurrency: int) -> int:
    judge = Judge(model="m", base_url=url, api_key="bench")  # the cache is off by default
    results = judge.grade_many("groundedness", batch, concurrency=concurrency)
    return sum(result.verdict != "error" for result in results)


async def gathered(
    batch: Sequence[Item], concurrency: int, judge_one: Callable[[Item], Awaitable[bool]]
) -> int:
    """`judge_one` over every item, at most `concurrency` at once: the usual asyncio loop."""
    gate = asyncio.Semaphore(concurrency)

    async def bounded(item: Item) -> bool:
        async with gate:
            return await judge_one(item)

    return sum(await asyncio.gather(*(bounded(item) for item in batch)))


def bare_sdk(url: str, batch: Sequence[Item], concurrency: int) -> int:
    async def run() -> int:
        client = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
        rubric = load_rubric("groundedness")
        tools: Any = verdict_tools(rubric, "required")

        async def judge_one(item: Item) -> bool:
            messages: Any = render(rubric, item.output, context=item.context)
            reply = await client.chat.completions.create(
                model="m",
                messages=messages,
                tools=tools,
                tool_choice="required",
                temperature=0.0,
                max_tokens=1024,
            )
            calls = reply.choices[0].message.tool_calls or []
            return (
                bool(calls)
                and isinstance(calls[0], ChatCompletionMessageFunctionToolCall)
                and calls[0].function.name == "set_grade_pass"
            )

        try:
            return await gathered(batch, concurrency, judge_one)
        finally:
            await client.close()

    return asyncio.run(run())


def autoevals_factuality(url: str, batch: Sequence[Item], concurrency: int) -> int:
    """autoevals' Factuality classifier (one `select_choice` tool call), client set by `init`."""
    from autoevals import init
    from autoevals.llm import Factuality

    async def run() -> int:
        client = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
        init(client=client)
        scorer = Factuality(model="m")

        async def judge_one(item: Item) -> bool:
            score = await scorer.eval_async(
                output=item.output, expected=item.context, input=QUESTION
            )
            return score.score is not None

        try:
            return await gathered(batch, concurrency, judge_one)
        finally:
            await client.close()

    return asyncio.run(run())


def openevals_groundedness(url: str, batch: Sequence[Item], concurrency: int) -> int:
    """openevals' RAG groundedness judge on an OpenAI client (json_schema structured output)."""
    from openevals.llm import create_async_llm_as_judge
    from openevals.prompts import RAG_GROUNDEDNESS_PROMPT

    async def run() -> int:
        client: Any = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
        evaluator: Any = create_async_llm_as_judge(
            prompt=RAG_GROUNDEDNESS_PROMPT, judge=client, model="m"
        )

        async def judge_one(item: Item) -> bool:
            result = await evaluator(outputs=item.output, context=item.context)
            return result["score"] is not None

        try:
            return await gathered(batch, concurrency, judge_one)
        finally:
            await client.close()

    return asyncio.run(run())


LETTA_RUBRIC = """Score 1.0 when every factual claim in the submission is supported by the
source, 0.0 otherwise.
Question: {input}
Source: {ground_truth}
Submission: {submission}"""


def letta_evals_rubric(url: str, batch: Sequence[Item], concurrency: int) -> int:
    """letta-evals' RubricGrader (json_schema output) on a one-message trajectory; it reads
    OPENAI_BASE_URL and OPENAI_API_KEY from the environment."""
    from letta_client.types.agents import AssistantMessage
    from letta_evals.graders.rubric import RubricGrader
    from letta_evals.models import Sample

    async def run() -> int:
        with environment(OPENAI_BASE_URL=url, OPENAI_API_KEY="bench"):
            grader = RubricGrader(prompt=LETTA_RUBRIC, model="m", max_retries=0)

        async def judge_one(item: Item) -> bool:
            sample = Sample(id=0, input=QUESTION, ground_truth=item.context)
            said = AssistantMessage(
                id="message-0", date="2026-01-01T00:00:00Z", content=item.output
            )
            result, _ = await grader.grade(sample, [[said]])
            return "Error during grading" not in (result.rationale or "")

        try:
            return await gathered(batch, concurrency, judge_one)
        finally:
            await grader.client.close()

    return asyncio.run(run())


@contextlib.contextmanager
def environment(**values: str) -> Iterator[None]:
    """Set environment variables for the block, then restore them."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


CONTENDERS: dict[str, tuple[str | None, Contender]] = {
    "rubriclib grade_many": (None, rubriclib_grade_many),
    "bare openai SDK": (None, bare_sdk),
    "autoevals Factuality": ("autoevals", autoevals_factuality),
    "openevals groundedness": ("openevals", openevals_groundedness),
    "letta-evals RubricGrader": ("letta_evals", letta_evals_rubric),
}
"""name -> (the module that must be importable, or None; the contender)."""


def importable(module: str | None) -> bool:
    if module is None:
        return True
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def throughput(repeats: dict[int, int]) -> None:
    available = {name: run for name, (module, run) in CONTENDERS.items() if importable(module)}
    missing = [name for name, (module, _) in CONTENDERS.items() if not importable(module)]
    limits = openai._constants.DEFAULT_CONNECTION_LIMITS
    print(
        f"== Throughput: {JUDGMENTS} groundedness judgments, the judge answers each after "
        f"{LATENCY * 1000:.0f} ms (median of "
        + ", ".join(f"{runs} runs at {concurrency}" for concurrency, runs in repeats.items())
        + ")"
    )
    print(
        f"openai {openai.__version__}: default connection pool max_connections="
        f"{limits.max_connections}, max_keepalive_connections={limits.max_keepalive_connections}"
        f" (not a cap at {max(CONCURRENCIES)} in flight)"
    )
    print(f"(load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    batch = items(JUDGMENTS)
    with served(LATENCY) as server:
        for run in available.values():  # warm up: imports, first-use model building
            run(server.url, batch[:8], 8)
        for concurrency in CONCURRENCIES:
            limit = JUDGMENTS * LATENCY / concurrency
            walls: dict[str, list[float]] = {name: [] for name in available}
            valid: dict[str, int] = {}
            in_flight: dict[str, int] = {}
            for _ in range(repeats[concurrency]):  # interleaved: drift hits every contender alike
                for name, run in available.items():
                    server.stats()
                    started = time.perf_counter()
                    valid[name] = run(server.url, batch, concurrency)
                    walls[name].append(time.perf_counter() - started)
                    in_flight[name] = int(server.stats()["max_in_flight"])
            wall = {name: statistics.median(times) for name, times in walls.items()}
            sdk = wall["bare openai SDK"]
            print(
                f"\n{concurrency} in flight: latency limit {JUDGMENTS} x {LATENCY:g} s / "
                f"{concurrency} = {limit:.2f} s"
            )
            print(
                f"  {'':26} {'wall s':>7} {'judgm./s':>9} {'limit/wall':>11} {'vs SDK':>7} "
                f"{'verdicts':>9} {'max in flight':>14}"
            )
            for name in available:
                print(
                    f"  {name:26} {wall[name]:7.2f} {JUDGMENTS / wall[name]:9.1f} "
                    f"{limit / wall[name]:11.2f} {sdk / wall[name]:6.2f}x "
                    f"{valid[name]:>5}/{JUDGMENTS} {in_flight[name]:>14}"
                )
            for name in missing:
                print(f"  {name:26} not installed (pip install -e '.[bench]')")
            ours = wall["rubriclib grade_many"]
            if concurrency == 16:
                print(
                    f"  target: rubriclib >= {TARGET_LIMIT_SHARE_AT_16:.2f} of the limit: "
                    f"{limit / ours:.2f} ({verdict(limit / ours >= TARGET_LIMIT_SHARE_AT_16)})"
                )
            if concurrency == 64:
                print(
                    f"  target: rubriclib >= {TARGET_VS_SDK_AT_64:.2f}x the bare SDK: "
                    f"{sdk / ours:.2f}x ({verdict(sdk / ours >= TARGET_VS_SDK_AT_64)})"
                )


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def cached_rerun() -> None:
    """Judge 256 items with a verdict cache, then again with a new Judge: count the requests."""
    print(f"\n== Cached rerun: {JUDGMENTS} judgments, then the same again from the cache")
    batch = items(JUDGMENTS)
    with JudgeServer(latency=LATENCY) as server, tempfile.TemporaryDirectory() as folder:
        server.responder = Responder()
        timings = []
        for _ in range(2):
            judge = Judge(model="m", base_url=server.url, api_key="bench", cache=folder)
            sent_before = len(server.requests)
            started = time.perf_counter()
            results = judge.grade_many("groundedness", batch, concurrency=64)
            timings.append((time.perf_counter() - started, len(server.requests) - sent_before))
            assert all(result.verdict == "pass" for result in results)
    (first, first_sent), (rerun, rerun_sent) = timings
    print(f"  first run: {first:6.2f} s, {first_sent} requests")
    expected = verdict(not rerun_sent)
    print(f"  rerun:     {rerun:6.2f} s, {rerun_sent} requests (expected 0: {expected})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeats",
        type=int,
        nargs=len(CONCURRENCIES),
        default=[3, 5],
        help="runs per figure (median) at each concurrency; the short runs at 64 are noisier",
    )
    options = parser.parse_args()
    os.environ.setdefault("LANGSMITH_TRACING", "false")  # openevals: never trace anywhere
    throughput(dict(zip(CONCURRENCIES, options.repeats, strict=True)))
    cached_rerun()


if __name__ == "__main__":
    main()

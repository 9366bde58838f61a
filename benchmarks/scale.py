"""Time per judgment and peak memory of `judge_stream` at a small and a large size.

Each size runs in a fresh child process (so peak RSS is its own) that streams jobs from a
generator through `rubriclib.judging.engine.judge_stream(judge, jobs, concurrency=64)`,
dropping every result, against a judge that answers at once. Both should be flat: the same
time per judgment at both sizes, and memory that holds the work in flight, not the work done.
Run with `make bench`; `--large N` picks the large size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any

from bench_server import served

from rubriclib import Item, load_rubric
from rubriclib.judging.engine import Job, judge_stream
from rubriclib.judging.judge import Judge
from rubriclib.rubrics.rubric import Rubric

SMALL = 500
SMALL_RUNS = 3
"""The small size is quick and so noisy: its figures are those of the median of three runs,
one before the large size and two after."""
LARGE = 50_000
CONCURRENCY = 64
WARM_UP = 256
TARGET_PEAK_MB = 150
CONTEXT = "Apollo 11 landed on the Moon on 20 July 1969."


def jobs(rubric: Rubric, count: int) -> Iterator[Job]:
    """`count` jobs, made one at a time as the engine asks for them."""
    for index in range(count):
        yield Job(rubric, Item(output=f"Apollo 11 landed in 1969 (item {index}).", context=CONTEXT))


def memory_mb(field: str) -> float:
    """A memory figure of this process from /proc, in MB: VmRSS (now) or VmHWM (peak)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux: the peak


async def stream(judge: Judge, rubric: Rubric, count: int) -> tuple[int, list[float]]:
    """Judge `count` jobs, keeping nothing but the number of errors and the time at which each
    tenth of them was done (to see whether judgments get slower as the stream goes on)."""
    errors = done = 0
    tenths: list[float] = []
    tenth = max(count // 10, 1)
    async for _, result in judge_stream(judge, jobs(rubric, count), concurrency=CONCURRENCY):
        errors += result.verdict == "error"
        done += 1
        if done % tenth == 0:
            tenths.append(time.perf_counter())
    return errors, tenths


def measure(url: str, count: int) -> dict[str, Any]:
    """In a child: warm up, then time `count` judgments; peak RSS covers the whole process."""
    judge = Judge(model="m", base_url=url, api_key="bench")
    rubric = load_rubric("groundedness")

    async def run() -> dict[str, Any]:
        await stream(judge, rubric, WARM_UP)  # connections, first-use model building
        before = memory_mb("VmRSS")
        started, cpu_started = time.perf_counter(), time.process_time()
        errors, tenths = await stream(judge, rubric, count)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        await judge.aclose()
        ends = [started, *tenths]
        per_tenth = [(end - start) * 1000 / max(count // 10, 1) for start, end in pairwise(ends)]
        return {
            "seconds": seconds,
            "cpu": cpu,
            "errors": errors,
            "rss_before_mb": before,
            "tenths_ms": per_tenth,
        }

    figures = asyncio.run(run())
    figures["peak_rss_mb"] = memory_mb("VmHWM")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=LARGE, help=f"large size (default {LARGE})")
    parser.add_argument("--small", type=int, default=SMALL, help=f"small size (default {SMALL})")
    parser.add_argument("--child", nargs=2, metavar=("URL", "COUNT"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        url, count = options.child
        print(json.dumps(measure(url, int(count))))
        return
    sizes = (options.small, options.large)
    print(
        f"== Scale: judge_stream at {CONCURRENCY} in flight, jobs from a generator, results "
        f"dropped, a judge that answers at once; {sizes[0]:,} vs {sizes[1]:,} judgments"
    )
    print(f"  (load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    measured: dict[int, list[dict[str, Any]]] = {count: [] for count in sizes}
    with served(0.0) as server:
        # small runs before and after the large one, so a change of load hits both sizes
        for count in (sizes[0], sizes[1], *[sizes[0]] * (SMALL_RUNS - 1)):
            child = [sys.executable, __file__, "--child", server.url, str(count)]
            done = subprocess.run(child, capture_output=True, text=True, check=True)
            measured[count].append(json.loads(done.stdout))
    figures = {
        count: sorted(runs, key=lambda figure: figure["seconds"])[len(runs) // 2]
        for count, runs in measured.items()
    }
    print(
        f"  {'judgments':>10} {'wall s':>8} {'ms/judgment':>12} {'CPU ms/judgm.':>14} "
        f"{'errors':>7} {'RSS before MB':>14} {'peak RSS MB':>12}"
    )
    for count, figure in figures.items():
        print(
            f"  {count:>10,} {figure['seconds']:8.1f} {figure['seconds'] * 1000 / count:12.3f} "
            f"{figure['cpu'] * 1000 / count:14.3f} {figure['errors']:>7.0f} "
            f"{figure['rss_before_mb']:14.1f} {figure['peak_rss_mb']:12.1f}"
        )
    small, large = (figures[count]["seconds"] / count for count in sizes)
    peak = figures[sizes[1]]["peak_rss_mb"]
    print(f"  time per judgment, large / small: {large / small:.2f}x (target: flat, ~1.00x)")
    tenths = figures[sizes[1]]["tenths_ms"]
    print(
        f"  ms/judgment by tenth of the {sizes[1]:,} stream: "
        + " ".join(f"{value:.2f}" for value in tenths)
        + f" (second half / first half: {sum(tenths[5:]) / sum(tenths[:5]):.2f}x)"
    )
    print(
        f"  peak RSS at {sizes[1]:,}: {peak:.0f} MB (target < {TARGET_PEAK_MB} MB: "
        f"{'met' if peak < TARGET_PEAK_MB else 'NOT met'})"
    )


if __name__ == "__main__":
    main()

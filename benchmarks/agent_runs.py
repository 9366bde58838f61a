"""1,000 agent runs of real size judged through `rubriclib eval` at 64 in flight, the judge
answering each after 200 ms.

The runs are `synthetic_runs.py`'s (OpenAI chat messages with tool calls, a 6,000-character
policy as the system message, 15 KB median, 40 KB max), one per line of a JSONL dataset,
judged by the built-in `task-completion`.

1. Rendering CPU per run, in this process: reading a row into an Item (its run into the
   canonical model), `item_messages` (the prompt each judgment sends, the run cut once in it),
   `run_details` (the result's `details.transcript`, from that same cut) and `estimated_tokens`
   (the size a judge checks each prompt it rendered against `max_prompt_tokens` by, before
   sending it). Median of five rounds over every run.
2. `rubriclib eval` in a child process, after one untimed warm-up eval there (imports, first-use
   model building: start-up is `startup.py`'s figure), timed from the command's call to its
   return: the dataset checked, every run judged at 64 in flight, each result appended to
   `--out`, the report printed. The latency limit N * L / C is the fastest any client can be;
   `limit/wall` is the share of it reached (median of three runs); `check s` is the command's
   first step (every row read and checked before any request) timed again on its own, the part
   of the wall that is not judging. Peak RSS (VmHWM) covers the
   whole child; the same eval over 250 runs shows whether memory grows with the dataset (it
   should not: the dataset is streamed). The server's CPU per request is shown beside: it
   shares the machine's cores with the client.

Run with `make bench`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench_server import served
from scale import memory_mb
from synthetic_runs import runs, size_of
from throughput import LATENCY, verdict

from rubriclib import Item, load_rubric
from rubriclib.judging.prompt.agent_run import cut_run, run_details
from rubriclib.judging.prompt.render import DEFAULT_MAX_PROMPT_TOKENS, item_messages

RUNS = 1_000
SMALL = 250
CONCURRENCY = 64
REPEATS = 3
"""Timed evals at RUNS (median); at SMALL, one before them and one after."""
WARM_UP = 64
TARGET_LIMIT_SHARE = 0.9
RUBRIC = "task-completion"
EVAL_FILE = f"""\
name: agent-runs-bench
dataset: runs.jsonl
judge:
  model: m
graders:
  - name: completed
    rubric: {RUBRIC}
"""


def dataset_lines(made: Sequence[list[dict[str, Any]]]) -> list[str]:
    """One JSONL row per run: its id and the run as `transcript`."""
    return [
        json.dumps({"id": f"run-{index:04d}", "transcript": run}) for index, run in enumerate(made)
    ]


def per_run_ms(action: Callable[[Any], object], inputs: Sequence[Any], rounds: int = 5) -> float:
    """Median CPU milliseconds per input of `action` over `rounds` passes over every input."""
    times = []
    for _ in range(rounds):
        started = time.process_time()
        for value in inputs:
            action(value)
        times.append((time.process_time() - started) * 1000 / len(inputs))
    return statistics.median(times)


def rendering(lines: Sequence[str]) -> None:
    """Reading and rendering CPU per run, in this process."""
    from rubriclib.evals.datasets import parse_row
    from rubriclib.judging.asking.request import estimated_tokens

    rubric = load_rubric(RUBRIC)
    rows = [json.loads(line) for line in lines]

    def read(raw: dict[str, Any]) -> Item:
        row = parse_row(raw, 1, "runs.jsonl:1")
        assert not isinstance(row, list), row
        return row.item

    items = [read(raw) for raw in rows]
    rendered = [item_messages(rubric, item)[0] for item in items]
    prompts = [messages[1]["content"] for messages in rendered]
    limit = DEFAULT_MAX_PROMPT_TOKENS
    cuts = [cut_run(item.transcript, limit) for item in items if item.transcript is not None]
    figures = {
        "json.loads of the row": per_run_ms(json.loads, lines),
        "row read into an Item (datasets.parse_row)": per_run_ms(read, rows),
        "item_messages (the prompt)": per_run_ms(lambda item: item_messages(rubric, item), items),
        "run_details (details.transcript)": per_run_ms(run_details, cuts),
        "estimated_tokens (the judge's size check)": per_run_ms(
            lambda messages: estimated_tokens(rubric, messages), rendered
        ),
    }
    print(
        f"\nRendering CPU per run ({len(items):,} runs, median of 5 rounds; user messages "
        f"{statistics.median(map(len, prompts)):,.0f} characters median, "
        f"{max(map(len, prompts)):,} max, at max_prompt_tokens {limit:,}):"
    )
    for name, ms in figures.items():
        print(f"  {name:44} {ms:7.3f} ms")


def measure(url: str, folder: str, count: int) -> dict[str, Any]:
    """In a child: one warm-up eval, then `rubriclib eval` over `count` runs, timed; what it
    cost, what it wrote, and the process's peak RSS; then, apart, the time the command's first
    step takes (`prepare`: every row read and checked before any request)."""
    from rubriclib.cli import main
    from rubriclib.evals.setup import prepare

    os.environ.update(
        OPENAI_BASE_URL=url, OPENAI_API_KEY="bench", RUBRICLIB_CACHE_DIR=f"{folder}/cache"
    )
    os.chdir(folder)

    def command(dataset: str, out: str) -> None:
        arguments = ["eval", "eval.yaml", "--dataset", dataset, "--out", out, "--no-cache"]
        arguments += ["--force"]  # the warm-up's results file is the last child's: replace it
        arguments += ["--concurrency", str(CONCURRENCY), "--format", "json"]
        sink = io.StringIO()
        with (
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(sink),
            contextlib.suppress(SystemExit),  # its exit code: the errors column says it
        ):
            main(arguments, standalone_mode=False)

    command("warm-up-runs.jsonl", "warm-up-results.jsonl")
    before = memory_mb("VmRSS")
    out = f"results-{count}-{time.time_ns()}.jsonl"
    started, cpu_started = time.perf_counter(), time.process_time()
    command(f"runs-{count}.jsonl", out)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak = memory_mb("VmHWM")
    lines = Path(out).read_text().splitlines()
    verdicts = [json.loads(line)["result"]["verdict"] for line in lines]
    check_started = time.perf_counter()
    prepare("eval.yaml", f"runs-{count}.jsonl")
    return {
        "seconds": seconds,
        "check_seconds": time.perf_counter() - check_started,
        "cpu": cpu,
        "results": len(verdicts),
        "errors": verdicts.count("error"),
        "rss_before_mb": before,
        "peak_rss_mb": peak,
    }


def evals(folder: str, sizes: tuple[int, int], repeats: int) -> None:
    large, small = sizes
    print(
        f"\n`rubriclib eval` at {CONCURRENCY} in flight, the judge answering after "
        f"{LATENCY * 1000:.0f} ms (in a child, after a warm-up eval; {large:,} runs: median of "
        f"{repeats}):"
    )
    print(f"  (load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs)")
    measured: dict[int, list[dict[str, Any]]] = {large: [], small: []}
    with served(LATENCY) as server:
        for count in (small, *[large] * repeats, small):  # small before and after: same load
            child = [sys.executable, __file__, "--child", server.url, folder, str(count)]
            before = server.stats()
            done = subprocess.run(child, capture_output=True, text=True, check=True)
            after = server.stats()
            figures = json.loads(done.stdout)
            figures["max_in_flight"] = int(after["max_in_flight"])
            served_requests = after["requests"] - before["requests"]  # the warm-up's too
            figures["server_ms"] = (after["cpu_seconds"] - before["cpu_seconds"]) * 1000
            figures["server_ms"] /= served_requests
            measured[count].append(figures)
    print(
        f"  {'runs':>6} {'limit s':>8} {'wall s':>7} {'limit/wall':>11} {'check s':>8} "
        f"{'CPU ms/run':>11} "
        f"{'server CPU ms/req.':>18} {'results':>8} {'errors':>7} {'max in flight':>14} "
        f"{'RSS before MB':>14} {'peak RSS MB':>12}"
    )
    chosen = {}
    for count in (small, large):
        figure = sorted(measured[count], key=lambda f: f["seconds"])[len(measured[count]) // 2]
        chosen[count] = figure
        limit = count * LATENCY / CONCURRENCY
        print(
            f"  {count:>6,} {limit:8.2f} {figure['seconds']:7.2f} "
            f"{limit / figure['seconds']:11.2f} {figure['check_seconds']:8.2f} "
            f"{figure['cpu'] * 1000 / count:11.3f} "
            f"{figure['server_ms']:18.3f} {figure['results']:>8} {figure['errors']:>7} "
            f"{figure['max_in_flight']:>14} "
            f"{figure['rss_before_mb']:14.1f} {figure['peak_rss_mb']:12.1f}"
        )
    limit = large * LATENCY / CONCURRENCY
    share = limit / chosen[large]["seconds"]
    judging = limit / (chosen[large]["seconds"] - chosen[large]["check_seconds"])
    if large % CONCURRENCY:
        floor = -(-large // CONCURRENCY) * LATENCY
        print(
            f"  ({large:,} / {CONCURRENCY} is not whole: no client can beat ceil(N / C) * L = "
            f"{floor:.2f} s, {limit / floor:.2f} of the limit)"
        )
    print(
        f"  target: >= {TARGET_LIMIT_SHARE:.2f} of the latency limit at {large:,} runs: "
        f"{share:.2f} ({verdict(share >= TARGET_LIMIT_SHARE)}; {judging:.2f} without the "
        "dataset check)"
    )
    grown = chosen[large]["peak_rss_mb"] - chosen[small]["peak_rss_mb"]
    dataset = os.path.getsize(Path(folder) / f"runs-{large}.jsonl") / 1e6
    print(
        f"  peak RSS at {large:,} runs minus at {small:,}: {grown:+.1f} MB (the {large:,}-run "
        f"dataset is {dataset:.1f} MB: it is streamed, not held)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs judged (default {RUNS})")
    parser.add_argument("--small", type=int, default=SMALL, help=f"the memory check's {SMALL}")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="timed evals at --runs")
    parser.add_argument("--child", nargs=3, metavar=("URL", "FOLDER", "N"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        url, folder, count = options.child
        print(json.dumps(measure(url, folder, int(count))))
        return
    made = runs(max(options.runs, WARM_UP))
    sizes = sorted(size_of(run) for run in made)
    calls = [sum(len(message.get("tool_calls") or ()) for message in run) for run in made]
    print(
        f"== Agent runs: {options.runs:,} synthetic runs (synthetic_runs.py, seeded), "
        f"{statistics.median(sizes) / 1000:.1f} KB median, {sizes[-1] / 1000:.1f} KB max, "
        f"{statistics.median(calls):g} tool calls median ({min(calls)}-{max(calls)}), "
        f"{statistics.median(len(run) for run in made):g} messages median; rubric {RUBRIC}"
    )
    lines = dataset_lines(made)
    rendering(lines[: options.runs])
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "eval.yaml").write_text(EVAL_FILE)
        Path(folder, "warm-up-runs.jsonl").write_text("\n".join(lines[-WARM_UP:]) + "\n")
        for count in (options.runs, options.small):
            Path(folder, f"runs-{count}.jsonl").write_text("\n".join(lines[:count]) + "\n")
        evals(folder, (options.runs, options.small), options.repeats)


if __name__ == "__main__":
    main()

"""`rubriclib eval --engine ray` against `--engine local`, side by side, and a Ray worker killed
mid-run.

The CLI runs as a child in the ray venv (`make integrations` makes it; `--python` names
another with `rubriclib[ray]`):

    .venv/bin/python benchmarks/ray_engine.py                        # 100,000 and 20,000 rows
    .venv/bin/python benchmarks/ray_engine.py --rows 5000 --kill-rows 2000

`compare`: one eval file of ROWS rows and one grader, judged against the latency server (its
own process, answering each request after LATENCY s) by `--engine local` and by `--engine ray`
on a local cluster the run starts (its start-up included), both at the same total in-flight cap
(`--concurrency`: on Ray, each judging actor keeps an even share of it). Printed: wall time each and
their ratio, the requests each sent (equal: nothing judged twice), and the driver's peak memory
(`resource.getrusage` of the rubriclib process itself: not Ray's raylet, object store or actors).

`kill`: KILL_ROWS rows judged on Ray against the keyword judge (a verdict that follows the row)
while one judging actor's process (a descendant of this run's driver, never another Ray's on the
machine) is killed with SIGKILL once a fifth of the results are written. Ray restarts it and
judges its batch again; every row must still have exactly one result and the right verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench_server import served  # noqa: E402
from conftest import KEYWORD_RUBRIC, keyword_responder  # noqa: E402
from judge_server import JudgeServer  # noqa: E402
from ray_cluster import judging_actors  # noqa: E402

LATENCY = 0.2
CONCURRENCY = 16
RAY_PYTHON = Path(__file__).resolve().parent.parent / ".integrations" / "ray" / "bin" / "python"
# The CLI, reporting its own peak memory (KiB on Linux) to PEAK_FILE as it exits.
CLI = """\
import atexit, os, resource, sys
from pathlib import Path
atexit.register(lambda: Path(os.environ["PEAK_FILE"]).write_text(
    str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))
from rubriclib.cli import main
sys.exit(main())
"""
EVAL = """\
name: ray-bench
dataset: rows.jsonl
judge: {model: bench-model}
graders:
  - name: words
    rubric: keywords.md
"""


def write_eval(folder: Path, rows: int) -> Path:
    """An eval of `rows` rows (a third fail by keyword) and the keyword rubric, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "keywords.md").write_text(KEYWORD_RUBRIC)
    with (folder / "rows.jsonl").open("w") as handle:
        for n in range(rows):
            said = "fail" if n % 3 == 0 else "pass"
            handle.write(json.dumps({"id": f"r{n}", "output": f"verdict:{said} row {n}"}) + "\n")
    (folder / "eval.yaml").write_text(EVAL)
    return folder / "eval.yaml"


def environment(url: str, folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RUBRICLIB_"))}
    root = str(Path(__file__).resolve().parent.parent)
    return env | {
        "OPENAI_BASE_URL": url,
        "OPENAI_API_KEY": "bench",
        "PEAK_FILE": str(folder / "peak"),
        "PYTHONPATH": root + os.pathsep + env.get("PYTHONPATH", ""),
    }


def start_eval(
    python: str, folder: Path, engine: str, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """`rubriclib eval` on the eval in `folder` with `engine`, in `python`."""
    arguments = ["eval", "eval.yaml", "--out", f"{engine}.jsonl", "--no-cache"]
    arguments += ["--concurrency", str(CONCURRENCY), "--engine", engine]
    with (folder / f"{engine}.log").open("wb") as log:
        return subprocess.Popen(  # noqa: S603 - our own CLI
            [python, "-c", CLI, *arguments], cwd=folder, env=env, stdout=log, stderr=log
        )


def finished(process: subprocess.Popen[bytes], folder: Path, engine: str) -> None:
    code = process.wait()
    if code != 0:
        log = (folder / f"{engine}.log").read_text(errors="replace")
        raise SystemExit(f"--engine {engine} exited {code}:\n{log[-3000:]}")


def compare(python: str, rows: int) -> None:
    print(
        f"== {rows:,} rows, one grader, the judge answering after {LATENCY * 1000:.0f} ms, "
        f"{CONCURRENCY} in flight in all (load average {os.getloadavg()[0]:.2f} on "
        f"{os.cpu_count()} CPUs)"
    )
    figures = {}
    with tempfile.TemporaryDirectory() as temporary, served(LATENCY) as server:
        folder = Path(temporary)
        write_eval(folder, rows)
        env = environment(server.url, folder)
        for engine in ("local", "ray"):
            before = server.stats()["requests"]
            started = time.perf_counter()
            finished(start_eval(python, folder, engine, env), folder, engine)
            wall = time.perf_counter() - started
            lines = (folder / f"{engine}.jsonl").read_text().splitlines()
            peak = int((folder / "peak").read_text()) / 1024
            figures[engine] = (wall, server.stats()["requests"] - before, len(lines), peak)
    limit = rows * LATENCY / CONCURRENCY
    print(f"  latency limit: {rows:,} x {LATENCY:g} s / {CONCURRENCY} = {limit:.1f} s")
    print(
        f"  {'':14} {'wall s':>8} {'limit/wall':>11} {'requests':>9} {'lines':>8} {'peak MiB':>9}"
    )
    for engine, (wall, sent, lines, peak) in figures.items():
        name = f"--engine {engine}"
        print(f"  {name:14} {wall:8.1f} {limit / wall:11.2f} {sent:9,} {lines:8,} {peak:9.0f}")
    (local, *_), (ray, *_) = figures["local"], figures["ray"]
    equal = figures["local"][1] == figures["ray"][1] == rows
    print(f"  ray / local wall time: {ray / local:.2f}")
    print(f"  requests equal (one per row, nothing twice): {'yes' if equal else 'NO'}")


def kill(python: str, rows: int) -> None:
    print(f"\n== {rows:,} rows on Ray, one judging actor's process killed mid-run")
    with tempfile.TemporaryDirectory() as temporary, JudgeServer(latency=0.05) as server:
        server.responder = keyword_responder()
        folder = Path(temporary)
        write_eval(folder, rows)
        process = start_eval(python, folder, "ray", environment(server.url, folder))
        out = folder / "ray.jsonl"
        while not out.exists() or len(out.read_text().splitlines()) < rows // 5:
            if process.poll() is not None:
                break
            time.sleep(0.2)
        actors = judging_actors([process.pid])
        written = len(out.read_text().splitlines()) if out.exists() else 0
        if actors:
            os.kill(actors[0], signal.SIGKILL)
            print(f"  killed actor process {actors[0]} (of {len(actors)}) at {written:,} lines")
        else:
            print("  NO actor process found to kill")
        finished(process, folder, "ray")
        lines = [json.loads(line) for line in out.read_text().splitlines()]
    per_row = Counter(line["row"] for line in lines)
    wrong = [
        line["row"]
        for line in lines
        if line["verdict"] != ("fail" if int(line["row"][1:]) % 3 == 0 else "pass")
    ]
    once = len(per_row) == rows and set(per_row.values()) == {1}
    print(f"  results: {len(lines):,} lines, rows with exactly one: {'all' if once else 'NOT all'}")
    print(
        f"  wrong verdicts (errors included): {len(wrong)}; requests sent: {server.request_count:,}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows judged by each engine")
    parser.add_argument("--kill-rows", type=int, default=20_000, help="rows of the killed run")
    parser.add_argument("--only", choices=["compare", "kill"], help="one of the two")
    parser.add_argument("--python", default=str(RAY_PYTHON), help="a python with rubriclib[ray]")
    options = parser.parse_args()
    if options.only != "kill":
        compare(options.python, options.rows)
    if options.only != "compare":
        kill(options.python, options.kill_rows)


if __name__ == "__main__":
    main()

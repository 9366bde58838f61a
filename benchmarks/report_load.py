"""The HTML report at scale: 10,000 rows x 3 graders built with `rubriclib report`, and the page
`rubriclib eval --report FILE.html` writes for an eval of 10,000 rows and 3 graders (judged by
the scripted server: it adds the gate and the messages each judgment sent), each opened in
headless Chromium (Debian's, through playwright) until the matrix is drawn, filtered to fails
and a failed cell's judgment is open. Prints each file's size and the median of 5 loads against
the 2 s goal; exits 1 above it or past the size goal. Run with `make bench`."""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "browser"))

from chromium import browser_context, time_to_usable, why_unavailable  # noqa: E402
from judge_server import JudgeServer, Reply, tool_reply  # noqa: E402
from results_lines import large_run, write_results  # noqa: E402

ROWS = 10_000
LOADS = 5
GOAL_MS = 2000
SIZE_GOAL = 15_000_000
SIZE_BOUND = 16_000_000
"""What the benchmark fails above: the goal is about 15 MB."""
RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
OUTPUT = "Refunds are issued within 14 days. " * 8
REASON = "The answer cites the second passage and adds nothing the passages do not say. " * 3
EVAL = """\
name: report-load
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - {name: grounded, rubric: groundedness}
  - {name: correct, rubric: answer-correctness}
  - {name: style, rubric: house-style.md}
"""


def main() -> int:
    if (reason := why_unavailable()) is not None:
        print(f"report_load: skipped: {reason}")
        return 0
    with tempfile.TemporaryDirectory(prefix="rubriclib-report-") as temporary:
        return measure(Path(temporary))


def measure(folder: Path) -> int:
    """Build both pages in `folder`, load each LOADS times, print the figures."""
    results = write_results(folder / "results.jsonl", large_run(ROWS))
    report = folder / "report.html"
    started = time.perf_counter()
    command = [RUBRICLIB, "report", str(results), "-o", str(report)]
    subprocess.run(command, check=True, capture_output=True)
    built = time.perf_counter() - started
    eval_page, judged = eval_report(folder)
    ok = True
    with browser_context() as context:
        for name, page_file, took in (
            ("report of", report, f"built in {built:.1f} s"),
            ("eval --report page of", eval_page, f"judged and written in {judged:.1f} s"),
        ):
            ok &= show(context, f"{name} {ROWS:,} rows x 3 graders", page_file, took)
    return 0 if ok else 1


def eval_report(folder: Path) -> tuple[Path, float]:
    """`rubriclib eval --report` over ROWS rows and 3 graders, judged by the scripted server
    (every 7th row fails; answer-correctness needs a reference no row has: an error, no
    request). Its page, and the seconds judging and writing took."""
    context = "Refunds are issued within 14 days of the request. " * 4
    with (folder / "rows.jsonl").open("w", encoding="utf-8") as rows:
        for index in range(ROWS):
            row = {
                "id": f"row-{index:05d}",
                "input": f"How long do refunds take? ({index})",
                "context": context,
                "output": f"Output of row-{index:05d}: "
                + "Refunds are issued within 14 days. " * 8,
                "channel": "chat" if index % 2 else "email",
            }
            rows.write(json.dumps(row) + "\n")
    style = Path(__file__).resolve().parent.parent / "examples/support/rubrics/house-style.md"
    (folder / "house-style.md").write_text(style.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "eval.yaml").write_text(EVAL, encoding="utf-8")
    page = folder / "eval.html"
    with JudgeServer(record=False) as server:
        server.responder = verdict_by_row
        environment = dict(os.environ, OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-bench")
        command = [RUBRICLIB, "eval", str(folder / "eval.yaml"), "--out", str(folder / "e.jsonl")]
        command += ["--report", str(page), "--no-cache", "--concurrency", "64"]
        started = time.perf_counter()
        subprocess.run(command, env=environment, capture_output=True, check=False)
        return page, time.perf_counter() - started


def verdict_by_row(body: dict[str, Any]) -> Reply:
    user = body["messages"][1]["content"]
    index = int(re.search(r"\((\d+)\)", user).group(1))  # type: ignore[union-attr]
    name = "set_grade_fail" if index % 7 == 0 else "set_grade_pass"
    return tool_reply(name, {"reason": REASON})


def show(context: Any, name: str, page_file: Path, took: str) -> bool:
    """Load `page_file` LOADS times; print its size and median timings; whether both goals hold."""
    size = page_file.stat().st_size
    timings = []
    for _ in range(LOADS):
        page = context.new_page()
        timings.append(time_to_usable(page, page_file))
        page.close()
    median = {key: statistics.median(t[key] for t in timings) for key in timings[0]}
    print(f"{name}: {size / 1e6:.1f} MB (goal about {SIZE_GOAL / 1e6:.0f} MB), {took}")
    print(
        f"  median of {LOADS} loads: open {median['open_ms']:.0f} ms, filter "
        f"{median['filter_ms']:.0f} ms, open a cell {median['detail_ms']:.0f} ms; usable in "
        f"{median['total_ms']:.0f} ms (goal < {GOAL_MS} ms)"
    )
    return median["total_ms"] < GOAL_MS and size < SIZE_BOUND


if __name__ == "__main__":
    sys.exit(main())

"""The HTML report at scale: 10,000 rows x 3 graders built with `rubriclib report`, then opened
in headless Chromium (Debian's, through playwright) until the matrix is drawn, filtered to fails
and a failed cell's judgment is open. Prints the file size and the median of 5 loads against the
2 s goal; exits 1 above it. Run with `make bench`."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "browser"))

from chromium import browser_context, time_to_usable, why_unavailable  # noqa: E402
from results_lines import large_run, write_results  # noqa: E402

ROWS = 10_000
LOADS = 5
GOAL_MS = 2000
SIZE_GOAL = 15_000_000


def main() -> int:
    if (reason := why_unavailable()) is not None:
        print(f"report_load: skipped: {reason}")
        return 0
    with tempfile.TemporaryDirectory(prefix="rubriclib-report-") as temporary:
        return measure(Path(temporary))


def measure(folder: Path) -> int:
    """Build the report in `folder`, load it LOADS times, print the figures."""
    results = write_results(folder / "results.jsonl", large_run(ROWS))
    report = folder / "report.html"
    started = time.perf_counter()
    rubriclib = str(Path(sys.executable).parent / "rubriclib")
    command = [rubriclib, "report", str(results), "-o", str(report)]
    subprocess.run(command, check=True, capture_output=True)
    built = time.perf_counter() - started
    size = report.stat().st_size
    timings = []
    with browser_context() as context:
        for _ in range(LOADS):
            page = context.new_page()
            timings.append(time_to_usable(page, report))
            page.close()
    median = {key: statistics.median(t[key] for t in timings) for key in timings[0]}
    print(
        f"report of {ROWS:,} rows x 3 graders: {size / 1e6:.1f} MB (goal < {SIZE_GOAL / 1e6:.0f}"
        f" MB), built in {built:.1f} s"
    )
    print(
        f"  median of {LOADS} loads: open {median['open_ms']:.0f} ms, filter "
        f"{median['filter_ms']:.0f} ms, open a cell {median['detail_ms']:.0f} ms; usable in "
        f"{median['total_ms']:.0f} ms (goal < {GOAL_MS} ms)"
    )
    return 0 if median["total_ms"] < GOAL_MS and size < SIZE_GOAL else 1


if __name__ == "__main__":
    sys.exit(main())

"""The HTML report in a real headless Chromium (Debian's, driven by playwright): the numbers a
person reads, a filter, a click on a cell, hostile reasons, the comparison view, a page with
scripts off, and the load of a 10,000-row report."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chromium import launched, open_report, time_to_usable, why_unavailable

if (reason := why_unavailable()) is not None:
    pytest.skip(f"browser tests skipped: {reason}", allow_module_level=True)

from click.testing import CliRunner
from conftest import scripted_citations
from judge_server import JudgeServer, Reply, tool_reply
from results_lines import HOSTILE_REASONS, large_run, results_line, write_results

from rubriclib.cli import main

EVAL = """\
name: browser
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - name: kw
    rubric: keywords
  - name: grounded
    rubric: groundedness@^1
"""
ROWS = [
    {"id": f"r{n}", "input": "q", "context": "c", "output": f"verdict:{verdict} {n}"}
    for n, verdict in enumerate(["pass", "fail", "pass", "fail", "pass", "pass"], start=1)
]
ROWS[4].pop("context")  # grounded needs context: row r5 is an error there
RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
LOAD_BOUND_MS = 15_000
"""A generous bound for a loaded CI machine; benchmarks/report_load.py measures the 2 s goal."""


def hostile_responder(body: dict[str, Any]) -> Reply:
    """Pass or fail by keyword, with a reason a page must never run."""
    user = body["messages"][1]["content"]
    number = int(user.split("verdict:")[1].split()[1][0])
    name = "set_grade_pass" if "verdict:pass" in user else "set_grade_fail"
    reason = {"reason": f"{HOSTILE_REASONS[number % 3]} (r{number})"}
    return tool_reply(name, reason | scripted_citations(body, user))


@pytest.fixture
def run(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path], tmp_path: Path
) -> tuple[Path, dict[str, Any]]:
    """A real eval run whose judge gives hostile reasons: its report page and JSON report."""
    endpoint.responder = hostile_responder
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    eval_file = write_file("eval.yaml", EVAL)
    results = tmp_path / "results.jsonl"
    # A process of its own, as a person runs it: playwright's sync API holds this thread's loop.
    command = [RUBRICLIB, "eval", str(eval_file), "--out", str(results), "--format", "json"]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 3, ran.stderr  # a judge error (row r5) and no gate
    page_file = tmp_path / "report.html"
    built = CliRunner().invoke(main, ["report", str(results), "-o", str(page_file)])
    assert built.exit_code == 0, built.output
    return page_file, json.loads(ran.stdout)


def test_the_summary_shows_the_eval_reports_numbers(page: Any, run: tuple[Path, Any]) -> None:
    report, eval_report = run
    open_report(page, report)
    for grader in eval_report["graders"]:
        row = f"#summary tr[data-grader={grader['name']}]"
        for column in ("judged", "pass", "fail", "error"):
            shown = page.text_content(f"{row} td[data-column='{column}']")
            assert shown == str(grader[column]), (grader["name"], column)
        rate = page.text_content(f"{row} td[data-column='pass rate']")
        assert rate == f"{100 * grader['pass_rate']:.1f}%"
        rubric = grader["rubric"]
        assert f"{rubric['name']}@{rubric['version']}" in page.text_content(row)
    assert "12 judgments, 1 errors" in page.text_content("#meta")
    assert page.errors == []


def test_a_filter_leaves_the_rows_it_names(page: Any, run: tuple[Path, Any]) -> None:
    open_report(page, run[0])
    assert page.locator("#matrix tbody tr.data").count() == 6
    page.click("#filters button[data-filter=fails]")
    ids = page.locator("#matrix tbody tr.data td.row-id").all_text_contents()
    assert ids == ["r2", "r4"] and page.text_content("#shown") == "2 of 6 rows"
    page.click("#filters button[data-filter=errors]")
    assert page.locator("#matrix tbody tr.data td.row-id").all_text_contents() == ["r5"]
    page.click("#filters button[data-filter=all]")
    page.fill("#search", "(r3)")  # text only a reason holds
    assert page.locator("#matrix tbody tr.data td.row-id").all_text_contents() == ["r3"]


def test_hostile_reasons_show_as_text_and_run_nothing(page: Any, run: tuple[Path, Any]) -> None:
    open_report(page, run[0])
    for row, hostile in (("r3", 0), ("r1", 1), ("r2", 2)):
        page.click(f"#matrix tr.data:has(td.row-id:text-is('{row}')) td[data-column='0']")
        reason = page.text_content("#detail-reason")
        shown = HOSTILE_REASONS[hostile]
        for control in ("\x00", "\x07", "\x1b"):  # shown as escapes, never sent raw
            shown = shown.replace(control, f"\\x{ord(control):02x}")
        assert reason == f"{shown} ({row})"
    assert page.dialogs == [] and page.errors == []
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0 and page.locator("#detail b").count() == 0
    assert page.locator("script").count() == 2  # the data block and the page's own


def test_the_comparison_lists_what_changed(page: Any, tmp_path: Path) -> None:
    old, new = [], []
    for n in range(30):
        old.append(results_line(f"r{n}", "g", "pass", f"old reason {n}"))
        verdict = "fail" if n < 12 else "pass"
        new.append(
            results_line(f"r{n}", "g", verdict, f"new reason {n}", version="1.2.0", digest="b" * 64)
        )
    report = tmp_path / "report.html"
    ran = CliRunner().invoke(
        main,
        [
            "report",
            str(write_results(tmp_path / "new.jsonl", new)),
            "--against",
            str(write_results(tmp_path / "old.jsonl", old)),
            "-o",
            str(report),
        ],
    )
    assert ran.exit_code == 0, ran.output
    open_report(page, report)
    assert page.text_content("#pass-rate-changes tr[data-grader=g]").endswith("more than noise")
    page.click("#filters button[data-filter=changed]")
    assert page.text_content("#shown") == "12 of 30 rows"
    page.click("#comparison details summary")
    summary = page.text_content("#comparison details summary")
    assert summary == "rubric groundedness@1.1.0 → groundedness@1.2.0: 12 changed (pass→fail 12)"
    first = page.locator("#comparison details tbody tr").first.text_content()
    assert "old reason 0" in first and "new reason 0" in first
    assert page.errors == []


def test_without_scripts_the_summary_still_shows(playwright: Any, run: tuple[Path, Any]) -> None:
    with launched(playwright, java_script_enabled=False) as context:
        tab = context.new_page()
        tab.goto(run[0].resolve().as_uri())
        text = tab.text_content("body") or ""
        assert "12 judgments, 1 errors" in text and "Turn on scripts" in text


def test_a_10000_row_report_is_usable_quickly(page: Any, tmp_path: Path) -> None:
    results = write_results(tmp_path / "large.jsonl", large_run(10_000))
    report = tmp_path / "large.html"
    assert CliRunner().invoke(main, ["report", str(results), "-o", str(report)]).exit_code == 0
    size = report.stat().st_size
    assert size < 15_500_000, size
    timing = time_to_usable(page, report)
    print(f"\n10,000 rows x 3 graders, {size / 1e6:.1f} MB: {timing}")
    assert timing["total_ms"] < LOAD_BOUND_MS
    assert page.text_content("#shown") == "1,429 of 10,000 rows"  # every 7th row fails
    assert page.text_content("#detail h2") == "row-00000 · grounded"

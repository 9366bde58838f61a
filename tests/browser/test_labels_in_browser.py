"""Labels in a real headless Chromium: an eval whose rubric has a labels scale, judged against
the scripted server, then `rubriclib report`: each grader's label counts beside its numbers,
each judgment's label with its verdict in the matrix and its detail panel; a results file's
label (untrusted) shown as text."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from chromium import open_report, why_unavailable

if (reason := why_unavailable()) is not None:
    pytest.skip(f"browser tests skipped: {reason}", allow_module_level=True)

from click.testing import CliRunner
from judge_server import JudgeServer
from labels_eval import support_eval
from results_lines import HOSTILE_REASONS, results_line, write_results

from rubriclib.cli import main

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
SUPPORT = "#matrix tr.data:has(td.row-id:text-is('{row}')) td[data-column='1']"
"""A row's support cell: the graders are in name order (keywords, support)."""


@pytest.fixture
def report(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path], tmp_path: Path
) -> Path:
    """The support eval run for real (a process: playwright holds this loop), then its page."""
    eval_file = support_eval(endpoint, library, write_file)
    out = tmp_path / "results.jsonl"
    command = [RUBRICLIB, "eval", str(eval_file), "--out", str(out)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 3, ran.stderr  # undecided: r4's judge error, and no gate
    page = tmp_path / "support.html"
    built = CliRunner().invoke(
        main, ["report", str(out), "--eval", str(eval_file), "-o", str(page)]
    )
    assert built.exit_code == 0, built.output
    return page


def test_each_grader_s_label_counts_are_beside_its_numbers(page: Any, report: Path) -> None:
    open_report(page, report)
    row = page.locator("#label-counts tbody tr[data-grader=support]")
    assert row.locator("td").all_text_contents() == [
        "3",
        "resolved 2 (pass), partly-resolved 1 (fail), not-resolved 0 (fail)",
    ]
    assert page.locator("#label-counts tr[data-grader=keywords]").count() == 0
    support = page.locator("#summary tr[data-grader=support]")
    assert support.locator("td[data-column=pass]").text_content() == "2"
    assert page.errors == []


def test_a_judgment_s_label_shows_with_its_verdict(page: Any, report: Path) -> None:
    open_report(page, report)
    cell = page.locator(SUPPORT.format(row="r3"))
    assert cell.text_content() == "partly-resolved (fail)"
    assert "fail" in (cell.get_attribute("class") or "")
    assert page.locator(SUPPORT.format(row="r4")).text_content() == "error"
    cell.click()
    assert page.text_content("#detail-verdict") == "fail"
    assert page.text_content("#detail dt:text-is('label') + dd") == "partly-resolved (fail)"
    assert page.errors == []


def test_a_results_file_s_label_is_shown_as_text(page: Any, tmp_path: Path) -> None:
    line = results_line("r1", "g", "fail")
    line["result"]["details"]["label"] = HOSTILE_REASONS[1]
    results = write_results(tmp_path / "r.jsonl", [line])
    report = tmp_path / "r.html"
    built = CliRunner().invoke(main, ["report", str(results), "-o", str(report)])
    assert built.exit_code == 0, built.output
    open_report(page, report)
    assert page.locator("#label-counts td").last.text_content() == f"{HOSTILE_REASONS[1]} 1 (fail)"
    cell = page.locator("#matrix td.cell").first
    assert cell.text_content() == f"{HOSTILE_REASONS[1]} (fail)"
    cell.click()
    assert page.locator("#detail img").count() == 0 and page.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None and page.dialogs == [] and page.errors == []


def test_the_calibration_page_of_a_labels_rubric_shows_labels(
    page: Any, endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    support_eval(endpoint, library, write_file)  # the rubric and the judge
    rows = [
        {"id": "a", "output": "label:resolved", "label": "resolved"},
        {"id": "b", "output": "label:resolved", "label": "partly-resolved"},
        {"id": "c", "output": "label:not-resolved", "label": "not-resolved"},
    ]
    path = write_file("labels.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    report = path.parent / "calibration.html"
    command = [RUBRICLIB, "calibrate", "support", "--labels", str(path), "--report", str(report)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    open_report(page, report)
    heads = page.locator("#confusion thead th").all_text_contents()
    assert heads == ["human \\ judge", "resolved", "partly-resolved", "not-resolved", "error"]
    assert page.locator("#confusion tbody th").all_text_contents() == list(heads[1:4])
    assert page.locator("#confusion td").all_text_contents() == [
        *["1", "0", "0", "0"],
        *["1", "0", "0", "0"],
        *["0", "0", "1", "0"],
    ]
    b = page.locator("#disagreements tr[data-row=b] td").all_text_contents()
    assert b[2:4] == ["partly-resolved (fail)", "resolved (pass)"]
    assert page.text_content("dd[data-fact='pass/fail by the labels']") == (
        "accuracy 66.7%, kappa 0.40"
    )
    assert page.errors == []


def test_votes_and_panel_judges_show_the_label_each_gave(page: Any, tmp_path: Path) -> None:
    votes = {
        "asked": 3,
        "cast": 3,
        "verdicts": ["pass", "fail", "pass"],
        "reasons": ["done", "half done", "done"],
        "labels": ["resolved", "partly-resolved", "resolved"],
    }
    judges = [
        {"model": "judge-a", "verdict": "pass", "reason": "done", "label": "resolved"},
        {"model": "judge-b", "verdict": "fail", "reason": "no", "label": "not-resolved"},
    ]
    line = results_line(
        "r1",
        "g",
        "pass",
        label="resolved",
        votes=votes,
        panel={"aggregate": "any", "judges": judges},
    )
    results = write_results(tmp_path / "r.jsonl", [line])
    report = tmp_path / "r.html"
    built = CliRunner().invoke(main, ["report", str(results), "-o", str(report)])
    assert built.exit_code == 0, built.output
    open_report(page, report)
    page.locator("#matrix td.cell").first.click()
    tables = page.locator("#detail table.members")
    assert tables.count() == 2
    verdicts = [
        table.locator("tbody td:nth-child(2)").all_text_contents() for table in tables.all()
    ]
    assert verdicts == [
        ["resolved (pass)", "partly-resolved (fail)", "resolved (pass)"],
        ["resolved (pass)", "not-resolved (fail)"],
    ]
    assert page.errors == []

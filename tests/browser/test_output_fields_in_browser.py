"""Output fields in a real headless Chromium: an eval whose rubric has them, judged against the
scripted server, then `rubriclib report`: each grader's summary beside its numbers, and a
judgment's fields in its detail panel (an array of objects as a table, each object's citations
shown as the verdict's are), every text shown as text."""

from __future__ import annotations

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
from output_fields_eval import HOSTILE_QUOTE, REFUSAL, triage_eval

from rubriclib.cli import main

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
FIELDS = "#detail-output-fields"


@pytest.fixture
def report(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path], tmp_path: Path
) -> Path:
    """The triage eval run for real (a process: playwright holds this loop), then its page."""
    eval_file = triage_eval(endpoint, library, write_file)
    out = tmp_path / "results.jsonl"
    command = [RUBRICLIB, "eval", str(eval_file), "--out", str(out)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 3, ran.stderr  # undecided: r4's judge error, and no gate
    page = tmp_path / "triage.html"
    built = CliRunner().invoke(
        main, ["report", str(out), "--eval", str(eval_file), "-o", str(page)]
    )
    assert built.exit_code == 0, built.output
    return page


def test_each_grader_s_output_fields_are_summarised_beside_its_numbers(
    page: Any, report: Path
) -> None:
    open_report(page, report)
    rows = page.locator("#output-summary tbody tr[data-grader=triage]")
    shown = {
        row.get_attribute("data-field"): row.locator("td").all_text_contents() for row in rows.all()
    }
    assert shown == {
        "severity": ["3 of 4", "severity", "high 2, medium 0, low 1"],
        "confidence": ["3 of 4", "confidence", "mean 0.700, min 0.5, max 0.9 (2 of 3 judgments)"],
        "escalate": ["3 of 4", "escalate", "true 1, false 2"],
        "issues": ["3 of 4", "issues", "3 item(s), 1.00 per judgment"],
    }
    assert page.errors == []


def test_a_judgment_s_fields_show_with_it_and_its_issues_citations_beside_them(
    page: Any, report: Path
) -> None:
    open_report(page, report)
    page.click("#matrix tr.data:has(td.row-id:text-is('r1')) td[data-column='0']")
    assert page.text_content(f"{FIELDS} dd[data-field=severity]") == "high"
    assert page.text_content(f"{FIELDS} dd[data-field=confidence]") == "0.9"
    assert page.text_content(f"{FIELDS} dd[data-field=escalate]") == "true"
    issues = page.locator(f"{FIELDS} dd[data-field=issues] table.output-items")
    assert issues.locator("thead th").all_text_contents() == [
        "",
        "description",
        "kind",
        "citations",
    ]
    first, second = issues.locator("tbody tr").all()
    # judge text stays text: the markup in a description and a script quote are not run
    assert first.locator("td[data-key=description]").text_content() == (
        "refuses a refund <b>the policy</b> allows"
    )
    assert first.locator("b").count() == 0
    assert first.locator("td[data-key=kind]").text_content() == "policy"
    verified = first.locator(".citations[data-block='issues[0]'] .citation")
    assert verified.get_attribute("data-status") == "verified"
    assert verified.locator("q").text_content() == REFUSAL
    assert "1 of 1 verified" in first.locator(".citations .meta").text_content()
    unverified = second.locator(".citations[data-block='issues[1]'] .citation")
    assert unverified.get_attribute("data-status") == "unverified"
    assert unverified.locator("q").text_content() == HOSTILE_QUOTE
    assert page.evaluate("window.__pwned") is None and page.locator("script").count() == 2
    assert page.dialogs == [] and page.errors == []


def test_a_passing_judgment_s_empty_list_and_an_error_s_missing_fields(
    page: Any, report: Path
) -> None:
    open_report(page, report)
    page.click("#matrix tr.data:has(td.row-id:text-is('r3')) td[data-column='0']")
    assert page.text_content(f"{FIELDS} dd[data-field=severity]") == "low"
    assert page.locator(f"{FIELDS} dd[data-field=issues] li").count() == 0
    page.click("#matrix tr.data:has(td.row-id:text-is('r4')) td[data-column='0']")
    assert page.locator(FIELDS).count() == 0  # a judge error has no output
    assert page.errors == []

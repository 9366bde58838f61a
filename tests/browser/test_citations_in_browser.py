"""Citations in a real headless Chromium: each beside the block it quotes in the messages sent,
the quoted span highlighted, verified or not (and where an unverified quote was found); a quote
holding a script shown as text; a span past the text a page keeps; each grader's verified share
in the summary; a changed verdict whose citations changed; and an explored judgment's citation
of a search hit, beside the hit."""

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
from conftest import citation
from judge_server import JudgeServer
from long_runs import NEEDLE, exploring_judge, long_run
from results_lines import HOSTILE_REASONS, results_line, write_results

from rubriclib.cli import main

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
EVAL = """\
name: cited
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - name: kw
    rubric: keywords
"""
ROWS = [
    {"id": "r1", "input": "what is the refund window?", "output": "verdict:pass 30 days"},
    {"id": "r2", "input": "q2", "output": "verdict:fail two"},
]
SCRIPT_QUOTE = HOSTILE_REASONS[0]
DETAIL = "#detail-messages"


def cited_page(
    tmp_path: Path, write_file: Callable[..., Path], citations: list[dict[str, Any]]
) -> Path:
    """An eval run for real, r1's judgment given `citations`, as `rubriclib report --eval`."""
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    eval_file = write_file("eval.yaml", EVAL)
    out = tmp_path / "results.jsonl"
    command = [RUBRICLIB, "eval", str(eval_file), "--out", str(out)]  # playwright holds this loop
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    for line in lines:
        if line["row"] == "r1":
            line["result"]["details"]["citations"] = citations
    write_results(out, lines)
    page = tmp_path / "cited.html"
    built = CliRunner().invoke(
        main, ["report", str(out), "--eval", str(eval_file), "-o", str(page)]
    )
    assert built.exit_code == 0, built.output
    return page


def test_a_citation_is_beside_its_block_highlighted_with_its_status(
    page: Any, endpoint: JudgeServer, library: Path, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    report = cited_page(
        tmp_path,
        write_file,
        [
            citation("input", "refund window", [12, 25]),
            citation("output", "30 days", [13, 20]),
            citation("output", "refund window", found_in="input"),
            citation("M2", SCRIPT_QUOTE, note="no block M2 was shown"),
        ],
    )
    open_report(page, report)
    row = "#summary tr[data-grader=kw]"
    assert page.text_content(f"{row} td[data-column='citations']") == "4"
    assert page.text_content(f"{row} td[data-column='citations verified']") == "2 (50.0%)"
    page.click("#matrix tr.data:has(td.row-id:text-is('r1')) td[data-column='0']")
    assert page.text_content("#detail dd:right-of(dt:text-is('citations'))") == "2 of 4 verified"
    # beside each block: its text with the quote marked, then the block's citations
    for block, marked in (("input", "refund window"), ("output", "30 days")):
        cited = page.locator(f"{DETAIL} .cited[data-block={block}]")
        assert cited.locator("mark").all_text_contents() == [marked]
        beside = page.locator(f"{DETAIL} .cited[data-block={block}] + .citations")
        assert beside.get_attribute("data-block") == block
    output = page.locator(f"{DETAIL} .citations[data-block=output] .citation")
    assert output.nth(0).get_attribute("data-status") == "verified"
    assert output.nth(0).locator(".badge").text_content() == "verified"
    assert output.nth(1).get_attribute("data-status") == "unverified"
    assert output.nth(1).text_content().endswith("(found in input)")
    assert page.locator(f"{DETAIL} .citations[data-block=M2]").count() == 0  # no such block
    # the messages still read as they were sent, the citations between the blocks
    user = page.text_content(f"{DETAIL} .message[data-role=user]")
    assert "refund window?" in user and "verdict:pass 30 days" in user
    # a quote holding a script is text: listed, run never
    listed = page.locator("#detail-citations tr[data-block=M2]")
    assert listed.locator("q").text_content() == SCRIPT_QUOTE
    assert "no block M2 was shown" in listed.text_content()
    assert page.evaluate("window.__pwned") is None and page.locator("script").count() == 2
    assert page.dialogs == [] and page.errors == []


def test_without_messages_an_output_citation_is_beside_the_output_even_past_its_clip(
    page: Any, tmp_path: Path
) -> None:
    long_output = "x" * 2500 + " the needle"
    line = results_line(
        "r1",
        "g",
        "fail",
        citations=[citation("output", "xx", [0, 2]), citation("output", "needle", [2505, 2511])],
    )
    line["output"] = long_output  # written by the eval's target
    old = results_line("r1", "g", "pass", citations=[citation("output", "xx", [0, 2])])
    results = write_results(tmp_path / "new.jsonl", [line])
    against = write_results(tmp_path / "old.jsonl", [old])
    report = tmp_path / "r.html"
    command = ["report", str(results), "--against", str(against), "-o", str(report)]
    assert CliRunner().invoke(main, command).exit_code == 0
    open_report(page, report)
    page.click("#matrix td.cell")
    assert page.locator("#detail-output mark").all_text_contents() == ["xx"]
    lines = page.locator("#detail-output .citations .citation")
    assert lines.count() == 2
    assert "past the text kept in the page" in lines.nth(1).text_content()
    change = page.text_content("#detail-citations-change")
    assert change == "citations changed: 1 of 1 verified → 2 of 2 verified"
    page.click("#comparison details[data-group='0'] summary")
    assert page.text_content("#comparison .citations-change") == change
    assert page.errors == []


def test_an_explored_judgment_s_citation_of_a_search_hit_is_beside_the_hit(
    page: Any, endpoint: JudgeServer, library: Path, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("rows.jsonl", json.dumps({"id": "r1", "transcript": long_run()}) + "\n")
    eval_file = write_file(
        "eval.yaml", "name: runs\ndataset: rows.jsonl\ngraders: [{name: kw, rubric: keywords}]\n"
    )
    endpoint.responder = exploring_judge(read=False)  # cites the hit's block, never reads it
    report = tmp_path / "explored.html"
    command = [RUBRICLIB, "eval", str(eval_file), "--report", str(report)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    open_report(page, report)
    page.click("#matrix tr.data:has(td.row-id:text-is('r1')) td[data-column='0']")
    found = page.locator(f"{DETAIL} .message[data-role=found]")
    assert found.count() == 1
    assert found.locator(".cited[data-block=M33] mark").all_text_contents() == [NEEDLE]
    beside = found.locator(".citations[data-block=M33] .citation")
    assert beside.get_attribute("data-status") == "verified"
    assert page.errors == []

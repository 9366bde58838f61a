"""The pages `--report FILE.html` writes, in a real headless Chromium: an eval's gate and the
exact messages a judgment sent (hostile row text staying text), pairwise numbers and the
disagreements filter, the goldens view (accuracy, kappa, confusion, misses and flaky goldens
with their why; an outage's judge errors apart from misses) and the calibration view (disagreements with both labels)."""

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
from judge_server import JudgeServer, error_reply
from results_lines import results_line, write_results

from rubriclib.cli import main

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
HOSTILE_OUTPUT = 'verdict:pass </script><img src=x onerror="window.__pwned = 1; alert(1)">'
EVAL = """\
name: pages
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - name: kw
    rubric: keywords
gate:
  kw: {min_pass_rate: 0.9}
"""


def rubriclib(*arguments: str) -> subprocess.CompletedProcess[str]:
    """A process of its own, as a person runs it: playwright's sync API holds this loop."""
    return subprocess.run([RUBRICLIB, *arguments], capture_output=True, text=True, timeout=60)


def test_an_eval_page_shows_its_gate_and_the_exact_messages_sent(
    page: Any, endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    rows = [
        {"id": "r1", "input": "q1", "output": HOSTILE_OUTPUT},
        {"id": "r2", "input": "q2", "output": "verdict:fail two"},
    ]
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    eval_file = write_file("eval.yaml", EVAL)
    report = eval_file.parent / "eval.html"
    ran = rubriclib("eval", str(eval_file), "--report", str(report))
    assert ran.returncode == 1, ran.stderr  # 1 of 2 passed: the gate (0.9) fails
    open_report(page, report)
    assert page.text_content("#gate tr[data-held=false]") == "kw pass_rate >= 0.90.50did not hold"
    assert page.text_content("#gate-status").startswith("FAILED: a gate condition does not hold")
    page.click("#matrix tr.data:has(td.row-id:text-is('r1')) td[data-column='0']")
    shown = [
        page.text_content(f"#detail-messages .message[data-role={role}]")
        for role in ("system", "user")
    ]
    sent = next(r["messages"] for r in endpoint.requests if "q1" in r["messages"][1]["content"])
    assert shown == [message["content"] for message in sent]
    assert HOSTILE_OUTPUT in shown[1]
    assert page.dialogs == [] and page.errors == []
    assert page.evaluate("window.__pwned") is None and page.locator("img").count() == 0


def test_a_results_file_alone_says_the_messages_are_not_available(
    page: Any, tmp_path: Path
) -> None:
    results = write_results(tmp_path / "r.jsonl", [results_line("a", "g", "pass")])
    report = tmp_path / "r.html"
    assert CliRunner().invoke(main, ["report", str(results), "-o", str(report)]).exit_code == 0
    open_report(page, report)
    page.click("#matrix td.cell")
    assert page.text_content("#detail-messages").startswith("Not available: a results file")
    assert page.locator("#gate").count() == 0 and page.errors == []


def test_pairwise_numbers_and_the_disagreements_filter(page: Any, tmp_path: Path) -> None:
    def vote(verdicts: list[str]) -> dict[str, Any]:
        return {"asked": len(verdicts), "verdicts": verdicts, "reasons": ["why"] * len(verdicts)}

    lines = []
    for n, winner in enumerate(["output", "output", "tie", "baseline"]):
        line = results_line(f"p{n}", "versus", "pass" if winner == "output" else "fail")
        line["result"]["details"]["rubric"]["scale"] = "pairwise"
        line["result"]["details"]["pairwise"] = {"winner": winner, "flips": n % 2, "comparisons": 2}
        lines.append(line)
    lines.append(results_line("p0", "voted", "pass", votes=vote(["pass", "fail", "pass"])))
    lines.append(results_line("p1", "voted", "pass", votes=vote(["pass", "pass", "pass"])))
    members = [{"model": "a", "verdict": "fail"}, {"model": "b", "verdict": "pass"}]
    lines.append(results_line("p2", "voted", "fail", panel={"judges": members}))
    report = tmp_path / "pairwise.html"
    results = write_results(tmp_path / "pairwise.jsonl", lines)
    assert CliRunner().invoke(main, ["report", str(results), "-o", str(report)]).exit_code == 0
    open_report(page, report)
    row = "#pairwise tr[data-grader=versus]"
    shown = {
        column: page.text_content(f"{row} td[data-column='{column}']")
        for column in ("win", "tie", "loss", "flip rate")
    }
    assert shown == {"win": "2", "tie": "1", "loss": "1", "flip rate": "25.0%"}
    page.click("#filters button[data-filter=disagreements]")
    ids = page.locator("#matrix tbody tr.data td.row-id").all_text_contents()
    assert ids == ["p0", "p2"] and page.text_content("#shown") == "2 of 4 rows"
    assert page.errors == []


def test_the_goldens_page_shows_agreement_misses_and_flaky_goldens(
    page: Any, endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    extra = write_file(
        "extra.yaml",
        "- {name: wrong, output: 'verdict:fail', expected: pass, why: '<b>Refunds</b> pass'}\n"
        "- {name: wobbly, output: 'verdict:flip', expected: pass, why: It flips.}\n",
    )
    report = extra.parent / "goldens.html"
    ran = rubriclib(
        "test-goldens", "keywords", "--goldens", str(extra), "--trials", "2", "--format", "json",
        "--report", str(report),
    )  # fmt: skip
    assert ran.returncode == 1, ran.stderr
    numbers = json.loads(ran.stdout)["rubrics"][0]
    open_report(page, report)
    box = "#agreement .rubric[data-rubric=keywords]"
    assert page.text_content(f"{box} dd[data-fact=accuracy]").startswith(
        f"{100 * numbers['accuracy']:.1f}% ["
    )
    assert page.text_content(f"{box} dd[data-fact='missed goldens']") == "2"
    missed = page.locator(f"{box} h4:text-is('Missed goldens (2)') + table tbody tr")
    assert missed.count() == 2
    wrong = page.text_content(f"{box} tr[data-golden=wrong]")
    assert "<b>Refunds</b> pass" in wrong and "fail, fail" in wrong
    flaky = page.locator(f"{box} h4:text-is('Flaky goldens (1)') + table tr[data-golden=wobbly]")
    assert "It flips." in flaky.text_content()
    assert page.text_content(f"{box} dd[data-fact='flip rates']") == (
        "flipped 1 of 4 golden(s) (25.0%), disagreement 12.5% (1 of 8 verdict(s))"
    )
    confusion = page.locator(f"{box} table").first.locator("td").all_text_contents()
    counts = numbers["counts"]
    expected = [counts[k] for k in ("true_pass", "false_fail", "false_pass", "true_fail")]
    assert confusion == [str(count) for count in expected]
    assert page.locator("#matrix-section").is_hidden() and page.locator("b").count() == 0
    assert page.errors == []


def test_the_goldens_page_of_an_outage_lists_judge_errors_apart_from_misses(
    page: Any, endpoint: JudgeServer, library: Path, tmp_path: Path
) -> None:
    endpoint.responder = lambda body: error_reply(401, "Incorrect API key provided")
    report = tmp_path / "outage.html"
    ran = rubriclib("test-goldens", "keywords", "--report", str(report))
    assert ran.returncode == 3, ran.stderr
    open_report(page, report)
    box = "#agreement .rubric[data-rubric=keywords]"
    assert page.text_content(f"{box} dd[data-fact='missed goldens']") == "0"
    assert page.text_content(f"{box} dd[data-fact='goldens with judge errors']") == "2"
    errored = page.locator(f"{box} h4:text-is('Goldens with judge errors (2)') + table tbody tr")
    assert errored.count() == 2
    assert "Incorrect API key provided" in page.text_content(f"{box} tr[data-golden=says-pass]")
    assert "undecided" in page.text_content("#goldens-status")
    assert page.errors == []


def test_the_calibration_page_shows_disagreements_with_both_labels(
    page: Any, endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    labels = [
        {"id": "a", "output": "verdict:pass a", "label": "pass", "tags": ["refunds"]},
        {"id": "b", "output": "verdict:fail b", "label": "pass"},
        {"id": "c", "output": "verdict:fail c", "label": "fail"},
        {"id": "d", "output": "verdict:pass d", "label": "fail"},
    ]
    path = write_file("labels.jsonl", "".join(json.dumps(row) + "\n" for row in labels))
    report = path.parent / "calibration.html"
    ran = rubriclib(
        "calibrate", "keywords", "--labels", str(path), "--format", "json", "--report", str(report)
    )
    assert ran.returncode == 0, ran.stderr
    numbers = json.loads(ran.stdout)
    open_report(page, report)
    assert page.text_content("dd[data-fact=accuracy]") == "50.0% [{}, {}]".format(
        *(f"{100 * numbers['accuracy_interval'][k]:.1f}%" for k in ("low", "high"))
    )
    b = page.locator("#disagreements tr[data-row=b] td").all_text_contents()
    assert b[2:5] == ["pass", "fail", "scripted set_grade_fail"]
    d = page.locator("#disagreements tr[data-row=d] td").all_text_contents()
    assert d[2:4] == ["fail", "pass"]
    cells = page.locator("#confusion td").all_text_contents()
    assert cells == ["1", "1", "0", "1", "1", "0"]
    assert page.errors == []


def test_the_calibration_page_over_trials_shows_judgments_and_flip_rates(
    page: Any, endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    labels = [
        {"id": "a", "output": "verdicts:ppp", "label": "pass"},
        {"id": "b", "output": "verdicts:pff", "label": "pass"},
    ]
    path = write_file("labels.jsonl", "".join(json.dumps(row) + "\n" for row in labels))
    report = path.parent / "calibration.html"
    ran = rubriclib(
        "calibrate", "keywords", "--labels", str(path), "--trials", "3", "--report", str(report)
    )
    assert ran.returncode == 0, ran.stderr
    open_report(page, report)
    assert page.text_content("dd[data-fact=judgments]") == "6 judged of 6 (2 rows x 3 trials)"
    assert page.text_content("dd[data-fact='flip rates']") == (
        "flipped 1 of 2 row(s) (50.0%), disagreement 16.7% (1 of 6 verdict(s))"
    )
    assert page.locator("#disagreements tr[data-row=b]").count() == 2
    assert page.errors == []

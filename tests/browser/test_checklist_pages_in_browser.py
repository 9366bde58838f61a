"""Checklist judgments on the pages, in a real headless Chromium: a judgment's items in its
detail panel (failed ones marked, hostile reasons staying text; unmarked with a note when the
rubric that judged is gone), the items that decided each grader's failures in the summary, and
the goldens and calibration pages' `checklist_failures`."""

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

from judge_server import JudgeServer, Reply, tool_reply
from results_lines import HOSTILE_REASONS

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
FACTS = """\
---
name: facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing and answers the question.
checklist:
  - id: invented
    question: Does the output state a number the input does not give?
    fail_if: "yes"
  - id: answers
    question: Does the output answer the question?
    fail_if: "no"
goldens:
  - {name: fine, output: "fine", expected: pass}
  - {name: invents, output: "bad:invented", expected: fail}
  - {name: invents-and-dodges, output: "bad:invented bad:answers", expected: fail}
---
Judge it. Call `set_grade_pass` or `set_grade_fail`.
"""
FAILING = {"Does the output state a number": ("invented", "yes"), "Does the output answer": ("answers", "no")}  # fmt: skip
EVAL = """\
name: checklist-pages
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - {name: facts, rubric: facts, mode: checklist}
"""
ROWS = [
    {"id": "r1", "input": "q", "output": "fine"},
    {"id": "r2", "input": "q", "output": "bad:invented"},
    {"id": "r3", "input": "q", "output": "bad:invented bad:answers"},
]


def item_responder(body: dict[str, Any]) -> Reply:
    """`bad:ID` in the candidate gets the answer that fails item ID (with a hostile reason for
    `invented`), else the passing answer."""
    user = body["messages"][1]["content"]
    item, failing = next(found for question, found in FAILING.items() if question in user)
    if f"bad:{item}" in user.split("## Candidate output [output]")[1]:
        why = HOSTILE_REASONS[1] if item == "invented" else f"{item} fails"
        return tool_reply("answer", {"reason": why, "answer": failing})
    return tool_reply("answer", {"reason": f"{item} holds", "answer": {"yes": "no", "no": "yes"}[failing]})  # fmt: skip


def rubriclib(*arguments: str) -> subprocess.CompletedProcess[str]:
    """A process of its own, as a person runs it: playwright's sync API holds this loop."""
    return subprocess.run([RUBRICLIB, *arguments], capture_output=True, text=True, timeout=120)


@pytest.fixture
def facts(endpoint: JudgeServer, library: Path) -> Path:
    endpoint.responder = item_responder
    rubric = library / "facts.md"
    rubric.write_text(FACTS, encoding="utf-8")
    return rubric


def items_shown(page: Any, row: str) -> dict[str, tuple[str, str]]:
    """The detail panel's checklist of `row`: item id -> (answer shown, data-failed)."""
    page.click(f"#matrix tr.data:has(td.row-id:text-is('{row}')) td[data-column='0']")
    shown = {}
    for tr in page.locator("#detail-checklist tbody tr").all():
        answer = tr.locator("td").nth(1).text_content()
        shown[tr.get_attribute("data-item")] = (answer, tr.get_attribute("data-failed"))
    return shown


def test_an_eval_page_lists_each_item_and_marks_the_failed_ones(
    page: Any, facts: Path, write_file: Callable[..., Path]
) -> None:
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    eval_file = write_file("eval.yaml", EVAL)
    results, report = eval_file.parent / "results.jsonl", eval_file.parent / "eval.html"
    ran = rubriclib("eval", str(eval_file), "--out", str(results), "--report", str(report))
    assert ran.returncode == 0, ran.stderr
    open_report(page, report)
    summary = page.text_content("#checklist-failures tr[data-grader=facts]")
    assert summary == "factsinvented 2, answers 10"
    assert items_shown(page, "r1") == {"invented": ("no", "false"), "answers": ("yes", "false")}
    assert items_shown(page, "r3") == {
        "invented": ("yes (failed)", "true"),
        "answers": ("no (failed)", "true"),
    }
    reason = page.text_content("#detail-checklist tr[data-item=invented] td:nth-child(4)")
    assert reason == HOSTILE_REASONS[1]
    assert page.evaluate("window.__pwned") is None and page.locator("img").count() == 0
    assert page.dialogs == [] and page.errors == []

    # `rubriclib report` finds the rubric on the search path; once it is edited, it does not.
    for edited in (False, True):
        if edited:
            facts.write_text(FACTS.replace("the question?", "the question asked?"))
        plain = eval_file.parent / f"plain-{edited}.html"
        assert rubriclib("report", str(results), "-o", str(plain)).returncode == 0
        open_report(page, plain)
        failed = "unknown" if edited else "true"
        assert items_shown(page, "r2")["invented"] == ("yes" + " (failed)" * (not edited), failed)
        note = page.locator("#detail p:text('Failed items not marked')")
        assert note.count() == edited
        assert page.text_content("#checklist-failures tr[data-grader=facts] td.num") == str(
            3 * edited
        )
    assert page.errors == []


def test_goldens_and_calibration_pages_show_the_items_that_failed(
    page: Any, facts: Path, write_file: Callable[..., Path]
) -> None:
    goldens = facts.parent / "goldens.html"
    ran = rubriclib(
        "test-goldens", "facts", "--checklist", "--format", "json", "--report", str(goldens)
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["rubrics"][0]["checklist_failures"] == {
        "invented": 2,
        "answers": 1,
    }
    open_report(page, goldens)
    fact = "#agreement .rubric[data-rubric=facts] dd[data-fact='checklist items failed']"
    assert page.text_content(fact) == "invented 2, answers 1"

    labels = write_file("labels.jsonl", "".join(json.dumps({**row, "label": "fail"}) + "\n" for row in ROWS))  # fmt: skip
    calibration = facts.parent / "calibration.html"
    ran = rubriclib(
        "calibrate", "facts", "--labels", str(labels), "--checklist", "--report", str(calibration)
    )
    assert ran.returncode == 0, ran.stderr
    open_report(page, calibration)
    assert page.text_content("dd[data-fact='checklist items failed']") == "invented 2, answers 1"
    assert page.errors == []

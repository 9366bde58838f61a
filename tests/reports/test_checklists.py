"""Checklist judgments in an HTML report's data: each item's id, answer, reason and p, marked
failed when the rubric that judged is found by its digest (else shown unmarked, with a note),
and per grader which items decided the failures most often. Holistic results add nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from results_lines import HOSTILE_REASONS, results_line, write_results

from rubriclib.reports.checklists import rubric_finder
from rubriclib.reports.html.data import TEXT_LIMIT, read_results, report_data
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric

GROUNDEDNESS = load_rubric("groundedness")
"""A built-in with a checklist: unsupported-claim, contradiction, invented-specifics (each
fails on no)."""


def checklist_line(
    row: str, answers: dict[str, str | None], rubric: Rubric = GROUNDEDNESS, **item: Any
) -> dict[str, Any]:
    """A checklist judgment of `rubric` whose items answered `answers` (in that order)."""
    fail_if = {check.id: check.fail_if for check in rubric.checklist}
    failed = any(answer == fail_if.get(i) for i, answer in answers.items())
    listed = [
        {"id": i, "answer": a, "reason": f"{i} because", "attempts": 1, "cached": False, **item}
        for i, a in answers.items()
    ]
    line = results_line(
        row,
        "grounded",
        "fail" if failed else "pass",
        rubric=rubric.name,
        version=rubric.version,
        digest=rubric.digest,
        checklist=listed,
    )
    return line


CLEAN = {"unsupported-claim": "yes", "contradiction": "yes", "invented-specifics": "yes"}


def data_of(tmp_path: Path, lines: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
    return report_data(read_results(write_results(tmp_path / "r.jsonl", lines)), **kwargs)


def test_each_item_is_listed_and_those_that_answered_their_fail_if_are_marked(
    tmp_path: Path,
) -> None:
    line = checklist_line("r1", {**CLEAN, "invented-specifics": "no"}, p=0.875)
    [row] = data_of(tmp_path, [line])["rows"]
    assert row["cells"][0]["checklist"] == [
        {"id": "unsupported-claim", "answer": "yes", "reason": "unsupported-claim because",
         "p": 0.875, "failed": False},
        {"id": "contradiction", "answer": "yes", "reason": "contradiction because",
         "p": 0.875, "failed": False},
        {"id": "invented-specifics", "answer": "no", "reason": "invented-specifics because",
         "p": 0.875, "failed": True},
    ]  # fmt: skip


def test_an_item_without_an_answer_is_not_marked_failed(tmp_path: Path) -> None:
    line = checklist_line("r1", {**CLEAN, "contradiction": None})
    [row] = data_of(tmp_path, [line])["rows"]
    [item] = [item for item in row["cells"][0]["checklist"] if item["id"] == "contradiction"]
    assert item["answer"] is None and item["failed"] is False and "p" not in item


def test_the_summary_counts_the_items_that_decided_the_failures_most_often_first(
    tmp_path: Path,
) -> None:
    lines = [
        checklist_line("r1", {**CLEAN, "invented-specifics": "no"}),
        checklist_line("r2", {**CLEAN, "invented-specifics": "no", "contradiction": "no"}),
        checklist_line("r3", {**CLEAN, "invented-specifics": "no"}),
        checklist_line("r4", CLEAN),
    ]
    [grader] = data_of(tmp_path, lines)["graders"]
    assert grader["checklist_failures"] == {"invented-specifics": 3, "contradiction": 1}
    assert list(grader["checklist_failures"]) == ["invented-specifics", "contradiction"]
    assert grader["checklist_uncounted"] == 0


def test_a_rubric_not_found_by_its_digest_leaves_the_items_unmarked_and_says_so(
    tmp_path: Path,
) -> None:
    line = checklist_line("r1", {**CLEAN, "invented-specifics": "no"})
    line["result"]["details"]["rubric"]["digest"] = "0" * 64  # a groundedness edited since
    data = data_of(tmp_path, [line])
    items = data["rows"][0]["cells"][0]["checklist"]
    assert [item["answer"] for item in items] == ["yes", "yes", "no"]
    assert all("failed" not in item for item in items)
    assert data["graders"][0]["checklist_failures"] == {}
    assert data["graders"][0]["checklist_uncounted"] == 1
    assert any("groundedness@1.4.0 00000000" in note for note in data["notes"])


def test_the_rubrics_given_are_found_before_the_search_path(tmp_path: Path) -> None:
    path = tmp_path / "grounded-facts.md"
    path.write_text(
        "---\nname: grounded-facts\nversion: 1.0.0\nscale: pass-fail\n"
        "description: Whether the output invents nothing.\nchecklist:\n"
        "  - id: answers-the-question\n    question: Does it answer?\n    fail_if: no\n"
        "---\nCall `set_grade_pass` or `set_grade_fail`.\n",
        encoding="utf-8",
    )
    rubric = load_rubric(str(path))
    line = checklist_line("r1", {"answers-the-question": "no"}, rubric=rubric)
    alone = data_of(tmp_path, [line])
    assert "failed" not in alone["rows"][0]["cells"][0]["checklist"][0]
    given = data_of(tmp_path, [line], find=rubric_finder([rubric]))
    assert given["rows"][0]["cells"][0]["checklist"][0]["failed"] is True
    assert given["graders"][0]["checklist_failures"] == {"answers-the-question": 1}
    assert not given["notes"]


def test_a_rubric_name_that_is_a_path_is_never_loaded(tmp_path: Path) -> None:
    path = tmp_path / "evil.md"
    path.write_text(GROUNDEDNESS.path.read_text(encoding="utf-8"), encoding="utf-8")
    find = rubric_finder()
    identity = {"name": str(path), "version": GROUNDEDNESS.version, "digest": GROUNDEDNESS.digest}
    assert load_rubric(str(path)).digest == GROUNDEDNESS.digest  # it would match if loaded
    assert find(identity) is None


def test_item_reasons_are_clipped_and_stay_text(tmp_path: Path) -> None:
    line = checklist_line("r1", CLEAN)
    items = line["result"]["details"]["checklist"]
    items[0]["reason"] = "why " * 1000
    items[1]["reason"] = HOSTILE_REASONS[2]
    [row] = data_of(tmp_path, [line])["rows"]
    first, second, _ = row["cells"][0]["checklist"]
    assert first["reason"] == {"clipped": ("why " * 1000)[:TEXT_LIMIT], "length": 4000}
    assert second["reason"] == "bell\\x07 escape\\x1b[31m null\\x00 end"


def test_holistic_results_add_nothing(tmp_path: Path) -> None:
    data = data_of(tmp_path, [results_line("r1", "g", "fail"), results_line("r2", "g", "pass")])
    assert not any("checklist" in key for key in data["graders"][0])
    assert all("checklist" not in row["cells"][0] for row in data["rows"])
    assert data["notes"] == []

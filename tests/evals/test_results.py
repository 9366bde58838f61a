"""The results file of an eval run on its own: one line per row and grader, the lines `--resume`
keeps (valid, a verdict, the grader's rubric, judge, votes and mode of now), and a file left valid
line by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import item_entry, tally
from results_lines import results_line, write_results

from rubriclib.evals.datasets import Row
from rubriclib.evals.results import ResultsFile, read_resumable, result_line
from rubriclib.item import Item
from rubriclib.judging.result import GradeResult

DIGEST = "46c865e0a84e2dde32ed1ca44cdfdbecdafd74266027b33ae9565e9f4c4ab0d2"
NOW = {"g": (DIGEST, "gpt-4o-mini", 1, None)}
"""What grader g is today: results_line's rubric digest, its judge model, one vote, holistic."""


def test_a_result_line_holds_row_grader_verdict_result_and_metadata() -> None:
    row = Row(3, "rows.jsonl:3", Item(output="o", id="r3", metadata={"team": "a"}))
    result = GradeResult.model_validate(results_line("r3", "g", "fail", "why")["result"])
    line = result_line(row, "g", result)
    assert line == {
        "row": "r3",
        "grader": "g",
        "verdict": "fail",
        "result": result.model_dump(mode="json"),
        "metadata": {"team": "a"},
    }
    json.dumps(line)  # every part is JSON


def test_resume_keeps_verdicts_made_as_the_grader_judges_now(tmp_path: Path) -> None:
    lines = [
        results_line("kept", "g", "pass"),
        results_line("error", "g", "error"),
        results_line("old-rubric", "g", "pass", digest="0" * 64),
        results_line("other-model", "g", "fail", model="gpt-4o"),
        results_line("three-votes", "g", "pass", votes=tally(["pass"] * 3)),
        results_line("checklist", "g", "pass", checklist=[item_entry("a", "no")]),
        results_line("probable", "g", "pass", checklist=[item_entry("a", "no", p_yes=0.2)]),
        results_line("typo", "g", "pass", raw_scroe=4),  # not a result: judged again
        results_line("gone-grader", "h", "pass"),
        results_line("kept", "g", "fail"),  # a later line for the same pair
    ]
    kept = read_resumable(write_results(tmp_path / "r.jsonl", lines), NOW)
    assert list(kept) == [("kept", "g")] and kept["kept", "g"]["verdict"] == "pass"
    voted = read_resumable(tmp_path / "r.jsonl", {"g": (DIGEST, "gpt-4o-mini", 3, None)})
    assert list(voted) == [("three-votes", "g")]
    by_checklist = read_resumable(tmp_path / "r.jsonl", {"g": (DIGEST, "gpt-4o-mini", 1, "tool")})
    assert list(by_checklist) == [("checklist", "g")]
    by_probability = {"g": (DIGEST, "gpt-4o-mini", 1, "probability")}
    assert list(read_resumable(tmp_path / "r.jsonl", by_probability)) == [("probable", "g")]


def test_resume_skips_lines_cut_short_or_not_ours(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", [results_line(1, "g", "pass")])  # type: ignore[arg-type]
    with path.open("a", encoding="utf-8") as handle:
        handle.write('["not", "ours"]\n{"row": "x", "result": {}}\n\xff\n{"row": "cut", "gra')
    assert list(read_resumable(path, NOW)) == [("1", "g")]
    assert read_resumable(tmp_path / "missing.jsonl", NOW) == {}


def test_a_rows_own_rubric_is_matched_by_its_own_digest(tmp_path: Path) -> None:
    own: dict[tuple[str, str], str] = {("a", "g"): "a" * 64, ("b", "g"): "b" * 64}
    lines: list[dict[str, Any]] = [
        results_line("a", "g", "pass", digest="a" * 64),
        results_line("b", "g", "pass", digest=DIGEST),  # written before its rubric changed
        results_line("c", "g", "pass"),
    ]
    kept = read_resumable(write_results(tmp_path / "r.jsonl", lines), NOW, own)
    assert sorted(kept) == [("a", "g"), ("c", "g")]


def test_the_file_holds_the_kept_lines_then_each_line_as_written(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("what the last run wrote\n")
    kept = [results_line("a", "g", "pass")]
    results = ResultsFile(path, kept)
    assert path.read_text() == json.dumps(kept[0]) + "\n"  # the file is replaced whole
    results.write(results_line("b", "g", "fail"))
    assert [json.loads(text)["row"] for text in path.read_text().splitlines()] == ["a", "b"]
    results.close()

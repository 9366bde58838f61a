"""The results file of an eval run on its own: one line per row and grader, the current line of
each (the last), the lines `--resume` keeps (valid, a verdict, the grader's rubric, judge, votes
and mode of now), a resumed file appended to (every line kept), a fresh one replaced only once a
result is in, and a file left valid line by line."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import item_entry, tally
from results_lines import results_line, write_results

from rubriclib.evals.datasets import Row
from rubriclib.evals.results import (
    ResultsFile,
    current_lines,
    cut_short,
    read_results_lines,
    read_resumable,
    result_line,
    what_is_wrong,
)
from rubriclib.item import Item
from rubriclib.judging.result import GradeResult

DIGEST = "46c865e0a84e2dde32ed1ca44cdfdbecdafd74266027b33ae9565e9f4c4ab0d2"
NOW = {"g": (DIGEST, "gpt-4o-mini", 1, None, "tools")}
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
        results_line("kept", "g", "fail"),  # a later line for the same pair: the current one
    ]
    kept = read_resumable(write_results(tmp_path / "r.jsonl", lines), NOW)
    assert list(kept) == [("kept", "g")] and kept["kept", "g"]["verdict"] == "fail"
    voted = read_resumable(tmp_path / "r.jsonl", {"g": (DIGEST, "gpt-4o-mini", 3, None, "tools")})
    assert list(voted) == [("three-votes", "g")]
    by_checklist = read_resumable(
        tmp_path / "r.jsonl", {"g": (DIGEST, "gpt-4o-mini", 1, "tool", "tools")}
    )
    assert list(by_checklist) == [("checklist", "g")]
    by_json = {"g": (DIGEST, "gpt-4o-mini", 1, None, "json")}
    assert read_resumable(tmp_path / "r.jsonl", by_json) == {}  # asked with tools: judged again
    by_auto = {"g": (DIGEST, "gpt-4o-mini", 1, None, "auto")}
    assert list(read_resumable(tmp_path / "r.jsonl", by_auto)) == [("kept", "g")]
    by_probability = {"g": (DIGEST, "gpt-4o-mini", 1, "probability", "tools")}
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


def test_the_current_line_of_a_pair_is_its_last(tmp_path: Path) -> None:
    lines = [
        results_line("a", "g", "pass"),
        results_line("a", "g", "error"),  # judged again later: the pass is superseded
        results_line("b", "g", "error"),
        results_line("b", "g", "pass", model="gpt-4o"),
        results_line("b", "g", "fail"),  # a third run: back to the model of now
    ]
    path = write_results(tmp_path / "r.jsonl", lines)
    current = current_lines(path)
    assert {key: line["verdict"] for key, line in current.items()} == {
        ("a", "g"): "error",
        ("b", "g"): "fail",
    }
    assert list(read_resumable(path, NOW)) == [("b", "g")]  # never the superseded pass of a


def test_a_line_that_is_no_results_line_supersedes_nothing(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", [results_line("a", "g", "pass")])
    written = results_line("b", "g", "pass", "caf\u00e9")
    unreadable = json.dumps({"grader": "g", **written}).encode()  # no cut line: not `{"row": `
    with path.open("ab") as handle:
        handle.write(b'{"row": "a", "grader": "g", "verdict": "skipped", "result": {}}\n')
        handle.write(unreadable.replace(b"\\u00e9", b"\xe9") + b"\n")
    read = read_results_lines(path)
    assert read.bad == [
        (2, "verdict", "must be pass, fail or error, not 'skipped'"),
        (3, "line", "not UTF-8 text"),
    ]
    assert list(current_lines(path)) == [("a", "g")] and read.read == 1
    assert list(read_resumable(path, NOW)) == [("a", "g")]  # the pass it did not supersede


def test_a_line_cut_short_begins_as_a_results_line() -> None:
    whole = json.dumps(results_line("r", "g", "pass")).encode()
    assert all(cut_short(whole[:end]) for end in (1, 4, 8, 30, len(whole) - 1))
    assert not any(cut_short(text) for text in (b"", b"\n", b"# a note", b'["row"]', b'{"a": 1'))


def read_lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_a_resumed_run_appends_and_keeps_every_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    before = json.dumps(results_line("a", "g", "error")) + "\n" + '{"row": "b", "gra'
    path.write_text(before)  # an error line, then a line a kill cut short
    results = ResultsFile(path, resume=True)
    results.write(results_line("a", "g", "pass"))
    results.close()
    assert path.read_text().startswith(before + "\n")  # the cut line ended, nothing lost
    assert [line[:17] for line in read_lines(path)] == [
        '{"row": "a", "gra',
        '{"row": "b", "gra',
        '{"row": "a", "gra',
    ]
    assert current_lines(path)["a", "g"]["verdict"] == "pass"


def test_a_fresh_run_replaces_a_file_only_once_its_first_result_is_in(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"what the last run wrote\n")
    stopped = ResultsFile(path, resume=False)
    stopped.close()  # stopped before any result: the old file is whole
    assert path.read_bytes() == b"what the last run wrote\n"
    results = ResultsFile(path, resume=False)
    assert path.read_bytes() == b"what the last run wrote\n"
    results.write(results_line("a", "g", "pass"))
    results.write(results_line("b", "g", "fail"))
    results.close()
    assert [json.loads(text)["row"] for text in read_lines(path)] == ["a", "b"]
    assert [child.name for child in tmp_path.iterdir()] == ["r.jsonl"]  # no temporary left


def test_a_missing_or_blank_file_is_written_from_the_start(tmp_path: Path) -> None:
    for name, text in (("missing.jsonl", None), ("blank.jsonl", "\n")):
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        results = ResultsFile(path, resume=False)
        assert path.exists()
        results.write(results_line("a", "g", "pass"))
        results.close()
        assert [json.loads(line)["row"] for line in read_lines(path) if line] == ["a"]


def test_a_line_of_ours_has_nothing_wrong() -> None:
    assert what_is_wrong(results_line("r", "g", "pass")) is None
    assert what_is_wrong(results_line(7, "g", "error")) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "wrong"),
    [
        ({"grader": 3}, ("row", "row and grader must be text")),
        ({"result": {"reason": 1}}, ("result.reason", "missing or not text")),
        ({"result": {"reason": "r", "score": math.inf}}, ("result.score", "must be a number")),
        ({"result": {"reason": "r"}}, ("result.details", "missing or not an object")),
        (
            {"result": {"reason": "r", "details": {"rubric": {"name": "x"}}}},
            ("result.details.rubric", "needs name, version and digest"),
        ),
    ],
)
def test_what_is_wrong_names_the_first_bad_field(
    change: dict[str, Any], wrong: tuple[str, str]
) -> None:
    assert what_is_wrong({**results_line("r", "g", "pass"), **change}) == wrong


def test_a_judge_without_a_model_is_named() -> None:
    line = results_line("r", "g", "pass")
    del line["result"]["details"]["judge"]["model"]
    assert what_is_wrong(line) == ("result.details.judge", "needs the judge's model")

"""A results file read as the data an HTML report shows: every line checked, texts clipped and
made safe, per-grader numbers and the row x grader matrix."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from results_lines import results_line, write_results

from rubriclib.errors import EvalError
from rubriclib.evals.results import current_lines, read_resumable
from rubriclib.reports.html.data import (
    TEXT_LIMIT,
    clipped,
    natural_key,
    read_results,
    report_data,
    usage_of,
)


def test_long_texts_are_clipped_with_their_length(tmp_path: Path) -> None:
    line = results_line("r1", "g", "fail", "why " * 3000, metadata={"note": "x" * 5000})
    line["output"] = "o" * 2500
    data = report_data(read_results(write_results(tmp_path / "r.jsonl", [line])))
    [row] = data["rows"]
    reason = row["cells"][0]["reason"]
    assert reason == {"clipped": ("why " * 3000)[:TEXT_LIMIT], "length": 12000}
    assert row["output"]["length"] == 2500 and len(row["output"]["clipped"]) == TEXT_LIMIT
    assert row["metadata"]["note"]["length"] == 5000


def test_an_interrupted_file_says_so(tmp_path: Path) -> None:
    path = write_results(tmp_path / "r.jsonl", [results_line("r1", "g", "pass")] * 2)
    with path.open("a") as handle:
        handle.write('{"row": "r2", "grader": "g", "verd')
    results = read_results(path)
    assert results.notes == [
        "line 3 was cut short: the run was interrupted",
        "1 line(s) superseded by a later line of their row and grader (a resumed run appends): "
        "the last of each is shown",
    ]
    assert results.count == 2 and len(results.lines) == 1


def test_a_resumed_file_shows_the_last_line_of_each_pair_past_a_cut_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    first = [results_line("r1", "g", "error"), results_line("r2", "g", "pass", model="old")]
    write_results(path, first)
    with path.open("a") as handle:  # a kill cut a line short; the resumed run ended it
        handle.write('{"row": "r3", "grader": "g", "verd\n')
    with path.open("a") as handle:
        for line in (results_line("r1", "g", "fail"), results_line("r2", "g", "pass")):
            handle.write(json.dumps(line) + "\n")
    results = read_results(path)
    assert results.notes[0] == "line 3 was cut short: the run was interrupted"
    current = {key: (line["verdict"], line["result"]["details"]["judge"]["model"])
               for key, line in results.lines.items()}  # fmt: skip
    assert current == {("r1", "g"): ("fail", "gpt-4o-mini"), ("r2", "g"): ("pass", "gpt-4o-mini")}
    [grader] = report_data(results)["graders"]
    assert (grader["judged"], grader["pass"], grader["fail"], grader["error"]) == (2, 1, 1, 0)
    path.write_text(path.read_text() + "# a note\n" + json.dumps(results_line("r4", "g", "pass")))
    with pytest.raises(EvalError, match=r"r.jsonl:6: line: not JSON"):
        read_results(path)  # a line not cut short, but not a results line: still an error


def test_results_written_by_earlier_versions_still_read(tmp_path: Path) -> None:
    old = Path(__file__).parent.parent / "data" / "results_before_typed_details.jsonl"
    results = read_results(old)
    assert (results.count, len(results.lines)) == (36, 33)
    assert results.notes == [
        "3 line(s) superseded by a later line of their row and grader (a resumed run appends): "
        "the last of each is shown"
    ]


def test_the_report_shows_the_current_lines_resume_reads(tmp_path: Path) -> None:
    old_format = Path(__file__).parent.parent / "data" / "results_before_typed_details.jsonl"
    old = json.loads(old_format.read_text().splitlines()[0]) | {"row": "old", "grader": "g"}
    path = tmp_path / "r.jsonl"
    write_results(path, [results_line("a", "g", "pass"), old, results_line("b", "g", "fail")])
    with path.open("a") as handle:  # a kill cut a line short; the resumed run ended it
        handle.write('{"row": "c", "grader": "g", "verd\n')
        for line in (results_line("a", "g", "error"), results_line("c", "g", "pass")):
            handle.write(json.dumps(line) + "\n")
        handle.write(json.dumps(results_line("b", "g", "pass"))[:50])  # killed again
    current = current_lines(path)  # what --resume reads the file as
    results = read_results(path)
    assert results.lines == current
    verdicts = {key: line["verdict"] for key, line in current.items()}
    assert verdicts == {("a", "g"): "error", ("old", "g"): "pass", ("b", "g"): "fail",
                        ("c", "g"): "pass"}  # fmt: skip
    shown = {(row["id"], "g"): row["cells"][0]["verdict"] for row in report_data(results)["rows"]}
    assert shown == verdicts and results.count == 5
    assert results.notes == [
        "line 4 was cut short: the run was interrupted",
        "line 7 was cut short: the run was interrupted",
        "1 line(s) superseded by a later line of their row and grader (a resumed run appends): "
        "the last of each is shown",
    ]
    kept = read_resumable(path, {"g": (results_line("a", "g", "pass")["result"]["details"]
                                       ["rubric"]["digest"], "gpt-4o-mini", 1, None, "tools")})  # fmt: skip
    assert sorted(kept) == [("b", "g"), ("c", "g")]  # the error and the old run's judge: again


def test_pairwise_graders_get_win_tie_loss_and_flip_rate(tmp_path: Path) -> None:
    def line(row: str, verdict: str, winner: str, flips: int) -> dict[str, Any]:
        found = results_line(row, "versus", verdict, pairwise={"winner": winner})
        found["result"]["details"]["rubric"]["scale"] = "pairwise"
        found["result"]["details"]["pairwise"].update(flips=flips, comparisons=2)
        found["result"]["score"] = {"output": 1.0, "tie": 0.5, "baseline": 0.0}[winner]
        return found

    lines = [line("a", "pass", "output", 0), line("b", "fail", "tie", 1)]
    lines += [line("c", "fail", "baseline", 0), line("d", "pass", "output", 1)]
    data = report_data(read_results(write_results(tmp_path / "r.jsonl", lines)))
    pairwise = data["graders"][0]["pairwise"]
    assert (pairwise["win"], pairwise["tie"], pairwise["loss"]) == (2, 1, 1)
    assert pairwise["flip_rate"] == pytest.approx(2 / 8)
    plain = report_data(
        read_results(write_results(tmp_path / "p.jsonl", [results_line("a", "g", "pass")]))
    )
    assert plain["graders"][0]["pairwise"] is None


def test_clipped_escapes_controls_in_keys_and_values_and_drops_non_finite_numbers() -> None:
    value = {"k\x1b": ["a\x00", 1.5, math.nan], "n": None, "long": "x" * (TEXT_LIMIT + 1)}
    assert clipped(value) == {
        "k\\x1b": ["a\\x00", 1.5, None],
        "n": None,
        "long": {"clipped": "x" * TEXT_LIMIT, "length": TEXT_LIMIT + 1},
    }
    assert clipped("x" * TEXT_LIMIT) == "x" * TEXT_LIMIT  # at the limit: kept whole


def test_row_ids_sort_naturally() -> None:
    ids = ["q10", "q2", "a", "q1b", "q1a", "10", "9"]
    assert sorted(ids, key=natural_key) == ["9", "10", "a", "q1a", "q1b", "q2", "q10"]


def test_usage_without_counts_is_zero() -> None:
    assert usage_of({"judge": {"usage": None}}) == (0, 0)
    assert usage_of({"judge": {"usage": {"prompt_tokens": 7}}}) == (7, 0)


def test_duplicate_lines_keep_the_last(tmp_path: Path) -> None:
    lines = [results_line("r", "g", "pass"), results_line("r", "g", "fail", "second thoughts")]
    results = read_results(write_results(tmp_path / "r.jsonl", lines))
    assert results.count == 2 and results.lines["r", "g"]["verdict"] == "fail"
    [row] = report_data(results)["rows"]
    assert row["cells"][0]["reason"] == "second thoughts"

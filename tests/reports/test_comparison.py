"""Two results files of one eval compared: changed verdicts grouped by what differs between the
runs, and each grader's change in pass rate with its paired interval."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import citation
from results_lines import results_line, write_results

from rubriclib.reports.html.comparison import (
    SAME_RUN,
    change_kind,
    compare,
    pass_rate_change,
    side,
    what_differs,
)
from rubriclib.reports.html.data import read_results, report_data


def test_the_comparison_groups_changes_by_what_differs(tmp_path: Path) -> None:
    old_lines, new_lines = [], []
    for index in range(40):
        row = f"r{index}"
        old_lines.append(results_line(row, "grounded", "pass", "old says pass", version="1.1.0"))
        new_verdict = "fail" if index < 10 else "pass"
        new_lines.append(
            results_line(row, "grounded", new_verdict, digest="f" * 64, version="1.2.0")
        )
        old_lines.append(results_line(row, "style", "fail", model="gpt-4o-mini"))
        new_lines.append(
            results_line(row, "style", "pass" if index < 2 else "fail", model="gpt-4o")
        )
        old_lines.append(results_line(row, "tone", "pass"))
        new_lines.append(results_line(row, "tone", "error" if index == 0 else "pass"))
    new_lines.append(results_line("r-new", "tone", "pass"))
    old = read_results(write_results(tmp_path / "old.jsonl", old_lines))
    new = read_results(write_results(tmp_path / "new.jsonl", new_lines))
    comparison = compare(new, old)
    assert (comparison["matched"], comparison["only_new"], comparison["only_old"]) == (120, 1, 0)
    groups = [(g["differs"], g["count"], g["kinds"]) for g in comparison["groups"]]
    assert groups == [
        ("rubric groundedness@1.1.0 → groundedness@1.2.0", 10, {"pass→fail": 10}),
        ("judge gpt-4o-mini → gpt-4o", 2, {"fail→pass": 2}),
        (SAME_RUN, 1, {"→error": 1}),
    ]
    change = next(c for c in comparison["changes"] if c["grader"] == "grounded")
    assert (change["old"]["reason"], change["new"]["reason"]) == (
        "old says pass",
        "grounded says fail",
    )
    rates = {g["name"]: g for g in comparison["graders"]}
    assert rates["grounded"]["change"] == pytest.approx(-0.25)
    assert not rates["grounded"]["within_noise"]
    assert rates["style"]["change"] == pytest.approx(0.05) and rates["style"]["within_noise"]
    data = report_data(new, old, comparison)
    changed = {row["id"]: row["changed"] for row in data["rows"]}
    assert changed["r0"] == [True, True, True] and changed["r39"] == [False, False, False]


def test_a_digest_change_without_a_version_bump_is_named(tmp_path: Path) -> None:
    old = read_results(write_results(tmp_path / "old.jsonl", [results_line("r", "g", "pass")]))
    new_line = results_line("r", "g", "fail", digest="a" * 64, metadata={"channel": "email"})
    new = read_results(write_results(tmp_path / "new.jsonl", [new_line]))
    [group] = compare(new, old)["groups"]
    assert group["differs"] == (
        "rubric groundedness@1.1.0 text changed, version not bumped (46c865e0 → aaaaaaaa); "
        "row content (metadata or output)"
    )


def test_a_change_to_error_is_one_kind_whatever_it_was() -> None:
    assert change_kind("pass", "error") == change_kind("fail", "error") == "→error"
    assert change_kind("error", "pass") == "error→pass"
    assert change_kind("pass", "fail") == "pass→fail"


def test_what_differs_names_each_difference_and_only_those() -> None:
    line = results_line("r", "g", "pass")
    assert what_differs(line, results_line("r", "g", "fail")) == SAME_RUN
    renamed = results_line("r", "g", "pass", rubric="grounded", digest="b" * 64)
    assert what_differs(line, renamed) == "rubric groundedness@1.1.0 → grounded@1.1.0"
    changed_output = {**line, "output": "a new answer"}
    assert what_differs(line, changed_output) == "row content (metadata or output)"
    panel = results_line("r", "g", "pass", panel={"judges": [{"model": "a"}, {"model": "b"}]})
    assert what_differs(line, panel) == "judge gpt-4o-mini → a, b"


def test_a_side_carries_what_the_page_shows_of_one_run() -> None:
    line = results_line("r", "g", "fail", "too vague", model="judge-x")
    assert side(line) == {
        "verdict": "fail",
        "score": 0.0,
        "reason": "too vague",
        "rubric": "groundedness@1.1.0 46c865e0",
        "model": "judge-x",
    }


def test_pass_rates_count_an_error_as_no_pass() -> None:
    change = pass_rate_change("g", [("pass", "error"), ("pass", "pass"), ("fail", "pass")])
    assert change["matched"] == 3
    assert change["old_pass_rate"] == pytest.approx(2 / 3)
    assert change["new_pass_rate"] == pytest.approx(2 / 3)
    assert change["change"] == pytest.approx(0.0) and change["within_noise"]


def test_a_large_consistent_drop_is_outside_the_noise() -> None:
    pairs = [("pass", "fail")] * 30 + [("pass", "pass")] * 70
    change = pass_rate_change("g", pairs)
    low, high = change["interval"]
    assert change["change"] == pytest.approx(-0.3) and low < -0.3 < high < 0
    assert not change["within_noise"]


def test_no_matched_judgments_have_no_rates_and_no_interval() -> None:
    change = pass_rate_change("g", [])
    assert (change["old_pass_rate"], change["new_pass_rate"], change["change"]) == (None,) * 3
    assert change["interval"] is None and change["within_noise"] is False


def test_unmatched_lines_are_counted_on_their_side(tmp_path: Path) -> None:
    old = [results_line("a", "g", "pass"), results_line("gone", "g", "pass")]
    new = [results_line("a", "g", "pass"), results_line("b", "g", "fail")]
    comparison = compare(
        read_results(write_results(tmp_path / "new.jsonl", new)),
        read_results(write_results(tmp_path / "old.jsonl", old)),
    )
    assert (comparison["matched"], comparison["only_new"], comparison["only_old"]) == (1, 1, 1)
    assert comparison["changes"] == [] and comparison["groups"] == []


def test_a_changed_verdict_says_whether_its_citations_changed_too(tmp_path: Path) -> None:
    verified = citation("output", "fine", [0, 4])
    old_lines = [
        results_line("same", "g", "pass", citations=[verified]),
        results_line("moved", "g", "pass", citations=[verified]),
        results_line("none", "g", "pass"),
    ]
    new_lines = [
        results_line("same", "g", "fail", citations=[verified]),
        results_line("moved", "g", "fail", citations=[citation("output", "bad")]),
        results_line("none", "g", "fail"),
    ]
    old = read_results(write_results(tmp_path / "old.jsonl", old_lines))
    new = read_results(write_results(tmp_path / "new.jsonl", new_lines))
    said = {change["row"]: change["citations"] for change in compare(new, old)["changes"]}
    assert said == {
        "same": "same citations",
        "moved": "citations changed: 1 of 1 verified → 0 of 1 verified",
        "none": None,
    }
    [group] = compare(new, old)["groups"]  # citations are what the judge said, not a cause
    assert group["differs"] == SAME_RUN and group["count"] == 3

"""Aligning's pure parts: too few labels, folds, the examples chosen, the budget and the paired
bootstrap that decides acceptance."""

from __future__ import annotations

from collections import Counter

import pytest

from rubriclib.evals.datasets import Row
from rubriclib.item import Item
from rubriclib.judging.result import judge_details, make_result
from rubriclib.measure.align import (
    Comparison,
    assign_folds,
    choose_examples,
    compare,
    example_of,
    mean_gain,
    plan_budget,
    too_few_labels,
)
from rubriclib.measure.calibration import Judged, Label, LabelledRow
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric


def labelled(number: int, verdict: str, output: str = "x", **fields: object) -> LabelledRow:
    item = Item(output=output, id=str(number), **fields)  # type: ignore[arg-type]
    return LabelledRow(Row(number, f"labels.jsonl:{number}", item), Label(verdict))


def judged(row: LabelledRow, verdict: str) -> Judged:
    rubric = load_rubric("groundedness")
    details = judge_details("m", None, 1, 0, {"prompt_tokens": 3, "completion_tokens": 2})
    return Judged(row, make_result(rubric, details, verdict, "because"))  # type: ignore[arg-type]


def rows_of(passes: int, fails: int) -> list[LabelledRow]:
    verdicts = ["pass"] * passes + ["fail"] * fails
    return [labelled(number, verdict) for number, verdict in enumerate(verdicts, start=1)]


def test_too_few_rows_or_too_few_of_the_rarer_verdict_are_refused() -> None:
    assert too_few_labels(rows_of(10, 10)) is None
    assert "19 row(s), 10 pass and 9 fail" in str(too_few_labels(rows_of(10, 9)))
    assert "3 fail" in str(too_few_labels(rows_of(30, 3)))
    assert too_few_labels(rows_of(30, 4)) is None


def test_folds_are_seeded_stratified_and_cover_every_row() -> None:
    rows = rows_of(12, 8)
    folds = assign_folds(rows, 4)
    assert folds == assign_folds(rows, 4)  # deterministic
    assert folds != assign_folds(rows, 4, seed=1)
    assert Counter(folds) == {0: 5, 1: 5, 2: 5, 3: 5}
    for fold in range(4):
        verdicts = {rows[i].label.verdict for i, f in enumerate(folds) if f == fold}
        assert verdicts == {"pass", "fail"}


def test_examples_put_disagreements_first_short_ones_first_and_both_verdicts_in() -> None:
    rubric = load_rubric("groundedness")  # requires context
    context = {"context": "the source"}
    cases = [
        judged(labelled(1, "pass", "a long output that the judge got wrong", **context), "fail"),
        judged(labelled(2, "pass", "short wrong", **context), "fail"),
        judged(labelled(3, "pass", "right", **context), "pass"),
        judged(labelled(4, "fail", "a failing output the judge got right", **context), "fail"),
        judged(labelled(5, "pass", "no context, wrong"), "fail"),
        judged(labelled(6, "fail", "errored", **context), "error"),
    ]
    chosen = [one.labelled.row.number for one in choose_examples(cases, 2, rubric)]
    assert chosen == [2, 4]  # the shorter disagreement, then the best fail (an agreement)
    three = [one.labelled.row.number for one in choose_examples(cases, 3, rubric)]
    assert three == [2, 4, 1]
    everything = [one.labelled.row.number for one in choose_examples(cases, 10, rubric)]
    assert everything == [2, 4, 1, 6, 3]  # row 5 lacks the context the rubric requires


def test_examples_hold_as_many_of_each_verdict_as_they_can_in_turn() -> None:
    """Disagreements all on passing rows still give two fails among four examples, and the
    verdicts alternate, the one with a disagreement first."""
    rubric = load_rubric("helpfulness")
    wrong_passes = [judged(labelled(n, "pass", f"pass {n}", input="q"), "fail") for n in (1, 2, 3)]
    fails = [judged(labelled(n, "fail", f"fail {n}", input="q"), "fail") for n in (4, 5, 6)]
    chosen = choose_examples([*wrong_passes, *fails], 4, rubric)
    assert [one.labelled.row.number for one in chosen] == [1, 4, 2, 5]
    lone_fail = choose_examples([*wrong_passes, fails[0]], 4, rubric)
    assert [one.labelled.row.number for one in lone_fail] == [1, 4, 2, 3]  # then passes fill


def test_an_example_is_a_golden_named_by_the_row_id_with_the_human_label(scored: Rubric) -> None:
    taken: set[str] = set()
    item = Item(output="fine", id="Ticket 7", input="q", metadata={"why": "it answers"})
    row = LabelledRow(Row(3, "labels.jsonl:3", item), Label("pass", score=4))
    first = example_of(row, taken)
    assert (first.name, first.expected, first.expected_score) == ("ticket-7", "pass", 4)
    assert (first.input, first.why) == ("q", "it answers")
    again = example_of(row, taken)  # the name is taken: the row number names it
    assert again.name == "row-3"
    plain = example_of(labelled(9, "fail"), set())
    assert plain.why == "A person labelled it fail."
    named = LabelledRow(Row(1, "l:1", Item(output="o")), Label("fail", name="not-resolved"))
    assert example_of(named, set()).expected_label == "not-resolved"


def test_the_budget_counts_judgeable_rows_twice_and_the_optimizer_calls() -> None:
    rubric = load_rubric("groundedness")
    rows = [labelled(n, "pass", context="c") for n in range(1, 21)] + [labelled(21, "fail")]
    budget = plan_budget(rubric, rows, folds=5, checklist=None, optimizer=False)
    assert (budget.judgments_before, budget.judgments_held_out, budget.requests) == (20, 20, 40)
    with_optimizer = plan_budget(rubric, rows, folds=5, checklist=None, optimizer=True)
    assert with_optimizer.requests == 46
    items = len(rubric.checklist)
    per_item = plan_budget(rubric, rows, folds=5, checklist="tool", optimizer=False)
    assert items > 1 and per_item.requests == 40 * items
    assert plan_budget(rubric, rows, 5, "one-call", False).requests == 40


def test_a_gain_is_accepted_only_when_its_whole_interval_is_above_zero() -> None:
    improved = Comparison([(False, True)] * 8 + [(True, True)] * 12, 0)
    assert improved.gain == pytest.approx(0.4)
    assert improved.interval is not None and improved.interval[0] > 0 and improved.accepted
    noisy = Comparison([(False, True)] * 3 + [(True, False)] * 2 + [(True, True)] * 15, 0)
    assert noisy.interval is not None and noisy.interval[0] <= 0 and not noisy.accepted
    assert noisy.interval == Comparison(noisy.outcomes, 0).interval  # seeded
    assert not Comparison([], 4).accepted and mean_gain([]) is None


def test_rows_with_a_judge_error_on_either_side_are_left_out_of_the_comparison() -> None:
    rows = rows_of(2, 2)
    before = [
        judged(rows[0], "fail"),
        judged(rows[1], "error"),
        judged(rows[2], "fail"),
        judged(rows[3], "pass"),
    ]
    after = [
        judged(rows[0], "pass"),
        judged(rows[1], "pass"),
        judged(rows[2], "error"),
        judged(rows[3], "fail"),
    ]
    comparison = compare(before, after)
    assert comparison.left_out == 2
    assert comparison.outcomes == [(False, True), (False, True)]

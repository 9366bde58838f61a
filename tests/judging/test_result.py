"""Results on their own, with no judge: a result's consistency, a 1-5 score through the pass
threshold, both orders of a pairwise comparison, the pairwise counts over many."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import judged
from pydantic import ValidationError

from rubriclib.judging.result import (
    GradeResult,
    combine_orders,
    not_judged,
    order_winner,
    pairwise_stats,
    with_details,
    with_winner,
)
from rubriclib.rubrics.rubric import Rubric


@pytest.mark.parametrize(
    "fields",
    [
        {"verdict": "error", "passed": True, "score": None},
        {"verdict": "error", "passed": False, "score": 0.0},
        {"verdict": "pass", "passed": False, "score": 1.0},
        {"verdict": "fail", "passed": True, "score": 0.0},
    ],
)
def test_a_result_that_contradicts_itself_is_refused(
    fields: dict[str, Any], rubric: Rubric
) -> None:
    details = judged(rubric, "pass").details
    with pytest.raises(ValidationError, match="an error result|passed must match"):
        GradeResult(reason="r", details=details, **fields)


def test_a_1_5_score_decides_the_verdict_through_the_threshold(scored: Rubric) -> None:
    three, four = judged(scored, "pass", raw_score=3), judged(scored, "fail", raw_score=4)
    assert (three.verdict, three.score, three.details["raw_score"]) == ("fail", 0.5, 3)
    assert (four.verdict, four.score) == ("pass", 0.75)


def test_not_judged_is_an_error_with_no_request(rubric: Rubric) -> None:
    result = not_judged(rubric, "m", "prompt too large")
    assert (result.verdict, result.passed, result.score) == ("error", False, None)
    assert result.reason == "not judged: prompt too large"
    assert result.details["judge"]["attempts"] == 0 and result.details["rubric"]["name"] == "tiny"


def test_an_answer_names_a_winner_by_the_order_it_was_given_in() -> None:
    assert [order_winner(0, p) for p in ("A", "B", "tie", None)] == [
        "output",
        "baseline",
        "tie",
        None,
    ]
    assert [order_winner(1, p) for p in ("A", "B")] == ["baseline", "output"]


def test_both_orders_must_agree_for_a_winner(pairwise: Rubric) -> None:
    first = with_winner(judged(pairwise, "pass", "A is better"), "A")
    agreeing = combine_orders(pairwise, [first, with_winner(judged(pairwise, "pass"), "B")])
    assert (agreeing.verdict, agreeing.score) == ("pass", 1.0)
    assert agreeing.reason == "the output wins in both orders: A is better"
    assert agreeing.details["judge"]["attempts"] == 2
    flipped = combine_orders(pairwise, [first, with_winner(judged(pairwise, "pass"), "A")])
    assert (flipped.verdict, flipped.score) == ("fail", 0.5)
    assert flipped.details["pairwise"]["position_flip"] is True
    assert flipped.reason.startswith("tie: the orders disagreed (output first: output; ")


def test_an_order_that_errored_or_is_missing_makes_the_comparison_an_error(
    pairwise: Rubric,
) -> None:
    first = with_winner(judged(pairwise, "pass"), "A")
    broken = combine_orders(pairwise, [first, judged(pairwise, "error", "HTTP 500")])
    assert broken.verdict == "error" and broken.reason == "baseline-first order: HTTP 500"
    cut = combine_orders(pairwise, [first])
    assert cut.reason == "baseline-first order: the comparison was cut short"


def test_pairwise_stats_count_rates_over_decided_results(pairwise: Rubric) -> None:
    def result(winner: str | None, flips: int = 0) -> GradeResult:
        verdict = "error" if winner is None else ("pass" if winner == "output" else "fail")
        block = {"winner": winner, "flips": flips, "comparisons": int(winner is not None)}
        return with_details(judged(pairwise, verdict), pairwise=block)

    stats = pairwise_stats(
        [result("output"), result("output"), result("tie", 1), result("baseline"), result(None)]
    )
    assert (stats["win"], stats["tie"], stats["loss"], stats["errors"]) == (2, 1, 1, 1)
    assert stats["win_rate"] == 0.5 and stats["flip_rate"] == 0.25
    assert pairwise_stats([])["win_rate"] is None

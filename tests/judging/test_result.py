"""Results on their own, with no judge: a result's consistency, a 1-5 score through the pass
threshold, both orders of a pairwise comparison, the rules that combine votes and a panel's
judges."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from rubriclib.judging.result import (
    GradeResult,
    combine_orders,
    combine_votes,
    decide,
    judge_details,
    majority_needed,
    majority_reached,
    make_result,
    not_judged,
    order_winner,
    pairwise_stats,
    with_winner,
)
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric


def judged(
    rubric: Rubric, verdict: str, reason: str = "r", raw_score: int | None = None
) -> GradeResult:
    details = judge_details("m", "required", 1, 10, {"prompt_tokens": 5, "completion_tokens": 1})
    return make_result(rubric, details, verdict, reason, raw_score)  # type: ignore[arg-type]


def won(rubric: Rubric, winner: str) -> GradeResult:
    """A pairwise vote that found `winner`."""
    result = judged(rubric, "pass" if winner == "output" else "fail", f"{winner} won")
    return result.model_copy(update={"details": {**result.details, "pairwise": {"winner": winner}}})


@pytest.fixture
def pairwise() -> Rubric:
    return load_rubric("preference")


@pytest.mark.parametrize(
    "fields",
    [
        {"verdict": "error", "passed": True, "score": None},
        {"verdict": "error", "passed": False, "score": 0.0},
        {"verdict": "pass", "passed": False, "score": 1.0},
        {"verdict": "fail", "passed": True, "score": 0.0},
    ],
)
def test_a_result_that_contradicts_itself_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        GradeResult(reason="r", details={}, **fields)


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


def test_majorities_are_strict() -> None:
    assert [majority_needed(n) for n in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]


def test_voting_may_stop_once_one_answer_has_a_majority_of_those_asked(rubric: Rubric) -> None:
    passes = [judged(rubric, "pass"), judged(rubric, "pass")]
    assert majority_reached(passes, 3) and not majority_reached(passes, 4)
    assert not majority_reached([judged(rubric, "error")] * 3, 3)


@pytest.mark.parametrize(
    ("rule", "verdict", "split"),
    [("majority", "fail", True), ("unanimous", "fail", False), ("any", "pass", False)],
)
def test_pass_fail_rules(rubric: Rubric, rule: Any, verdict: str, split: bool) -> None:
    answered = [judged(rubric, "pass", "yes"), judged(rubric, "fail", "no")]
    decision = decide(rubric, answered, rule)
    assert (decision.verdict, decision.split, decision.agreeing) == (verdict, split, 1)
    assert decision.chosen is not None and decision.chosen.verdict == verdict


@pytest.mark.parametrize(("rule", "raw"), [("majority", 3), ("unanimous", 2), ("any", 5)])
def test_1_5_rules_take_the_lower_median_the_lowest_or_the_highest(
    scored: Rubric, rule: Any, raw: int
) -> None:
    answered = [judged(scored, "pass", raw_score=score) for score in (5, 2, 3, 4)]
    assert decide(scored, answered, rule).raw_score == raw


@pytest.mark.parametrize(
    ("winners", "rule", "expected"),
    [
        (["output", "output", "baseline"], "majority", ("output", False)),
        (["output", "baseline", "tie"], "majority", ("tie", True)),
        (["output", "output", "baseline"], "unanimous", ("tie", True)),
        (["baseline", "tie"], "any", ("tie", False)),
        (["baseline", "output"], "any", ("output", False)),
    ],
)
def test_pairwise_rules(
    pairwise: Rubric, winners: list[str], rule: Any, expected: tuple[str, bool]
) -> None:
    decision = decide(pairwise, [won(pairwise, winner) for winner in winners], rule)
    assert (decision.winner, decision.split) == expected


def test_nothing_answered_cannot_be_decided(rubric: Rubric) -> None:
    with pytest.raises(ValueError, match="at least one"):
        decide(rubric, [])


def test_too_few_answering_votes_are_an_error_never_a_pass(rubric: Rubric) -> None:
    votes = [judged(rubric, "pass"), judged(rubric, "error", "timed out"), judged(rubric, "error")]
    result = combine_votes(rubric, votes, 3)
    assert result.verdict == "error"
    assert result.reason == (
        "only 1 of 3 votes answered (2 errored: timed out); a decision needs 2"
    )
    assert result.details["judge"]["attempts"] == 3
    assert result.details["judge"]["usage"] == {"prompt_tokens": 15, "completion_tokens": 3}


def test_pairwise_stats_count_rates_over_decided_results() -> None:
    def result(winner: str | None, flips: int = 0) -> GradeResult:
        verdict = "error" if winner is None else ("pass" if winner == "output" else "fail")
        score = None if winner is None else {"output": 1.0, "tie": 0.5, "baseline": 0.0}[winner]
        pairwise = {"winner": winner, "flips": flips, "comparisons": int(winner is not None)}
        return GradeResult(
            verdict=verdict,
            passed=verdict == "pass",
            score=score,
            reason="r",
            details={"pairwise": pairwise},
        )

    stats = pairwise_stats(
        [result("output"), result("output"), result("tie", 1), result("baseline"), result(None)]
    )
    assert (stats["win"], stats["tie"], stats["loss"], stats["errors"]) == (2, 1, 1, 1)
    assert stats["win_rate"] == 0.5 and stats["flip_rate"] == 0.25
    assert pairwise_stats([])["win_rate"] is None

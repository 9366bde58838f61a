"""The rules that combine one judgment's results, with no judge: strict majorities, when
voting may stop, what each rule (majority, unanimous, any) decides on each scale, votes that
errored."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import judged, won

from rubriclib.judging.combining import combine_votes, decide, majority_needed, majority_reached
from rubriclib.rubrics.rubric import Rubric


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

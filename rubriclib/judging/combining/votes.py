"""An item's votes combined into its result: the majority (a tie never passes)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rubriclib.judging.citations import given_citations
from rubriclib.judging.combining import rule
from rubriclib.judging.result import (
    GradeResult,
    JudgeInfo,
    Pairwise,
    make_result,
    pairwise_result,
    summed_judge,
    with_details,
)
from rubriclib.rubrics import Rubric


def combine_votes(rubric: Rubric, votes: list[GradeResult], asked: int) -> GradeResult:
    """The result of `asked` votes of one judgment (`votes`: those cast, in order).

    Votes that errored are left out. Pass-fail: the verdict with more votes; a tie is `fail`.
    1-5: the median score (of an even count, the lower middle one), then the pass threshold.
    `details.votes` keeps every vote; `details.judge` sums attempts, latency and usage.
    """
    answered = [vote for vote in votes if vote.verdict != "error"]
    errors = len(votes) - len(answered)
    judge = summed_judge(votes)
    if votes and all(vote.details.judge.answers == "one-call" for vote in votes):
        judge = judge.adding(answers="one-call")  # how the checklist was answered, for --resume
    tally = _tally(rubric, votes, asked)
    if not answered:
        first = votes[0].reason if votes else "no vote was cast"
        result = make_result(rubric, judge, "error", f"all {len(votes)} vote(s) errored: {first}")
        return with_details(result, votes=tally)
    if len(answered) < rule.majority_needed(asked):  # too few answered to be a majority of asked
        first = next(vote.reason for vote in votes if vote.verdict == "error")
        reason = (
            f"only {len(answered)} of {asked} votes answered ({errors} errored: {first}); a "
            f"decision needs {rule.majority_needed(asked)}"
        )
        return with_details(make_result(rubric, judge, "error", reason), votes=tally)
    decision = rule.decide(rubric, answered)
    if rubric.scale == "pairwise":
        return with_details(
            _pairwise_majority(rubric, judge, votes, asked, tally, decision), votes=tally
        )
    if rubric.scale == "labels" and decision.split:
        tie = rule.label_tie(answered, asked, "votes")
        return with_details(make_result(rubric, judge, "error", tie), votes=tally)
    raw, verdict, agreeing = decision.raw_score, decision.verdict, decision.agreeing
    assert decision.chosen is not None  # pass-fail and 1-5 always quote an agreeing vote
    chosen = decision.chosen
    tally["agreement"] = agreeing / len(answered)
    reason = f"{agreeing}/{asked} votes: {chosen.reason}"
    if rubric.scale == "1-5":
        scored = [rule.raw_score_of(vote) for vote in answered]
        middle = "median"
        if len(scored) % 2 == 0 and sorted(scored)[len(scored) // 2] != raw:
            middle = "lower median (a tie never rounds up)"
        reason = f"{agreeing}/{asked} votes, {middle} score {raw} of {scored}: {chosen.reason}"
    if rubric.scale == "pass-fail" and decision.split:
        reason = (
            f"tie, {agreeing} pass and {agreeing} fail of {asked} votes: a tie never passes "
            f"(half the judgments found it wanting); a fail vote said: {chosen.reason}"
        )
    if errors:
        reason = (
            f"{errors} of {len(votes)} vote(s) errored, so the majority was decided on the "
            f"{len(answered)} that answered; {reason}"
        )
    kept = {"label": decision.label, "output": chosen.details.output}
    kept = {key: value for key, value in kept.items() if value is not None}
    return with_details(make_result(rubric, judge, verdict, reason, raw), votes=tally, **kept)


def _tally(rubric: Rubric, votes: list[GradeResult], asked: int) -> dict[str, Any]:
    """`details.votes`: every vote's verdict and reason (its score, label, citations and
    output fields where the rubric has them); `agreement` is set once a majority is found."""
    tally: dict[str, Any] = {
        "asked": asked,
        "cast": len(votes),
        "verdicts": [vote.verdict for vote in votes],
        "reasons": [vote.reason for vote in votes],
        "agreement": None,
        "errors": sum(vote.verdict == "error" for vote in votes),
        "cached": sum(vote.details.judge.cached for vote in votes),
    }
    if rubric.scale == "1-5":
        tally["scores"] = [vote.details.raw_score for vote in votes]
    if rubric.scale == "labels":
        tally["labels"] = [vote.details.label for vote in votes]
    cited = [given_citations(vote.details) for vote in votes]  # checklist items' too
    if any(cited):
        tally["citations"] = cited
    if rubric.output:
        tally["outputs"] = [vote.details.output for vote in votes]
    return tally


def _pairwise_majority(
    rubric: Rubric,
    judge: JudgeInfo,
    votes: list[GradeResult],
    asked: int,
    tally: dict[str, Any],
    decision: rule.Decision,
) -> GradeResult:
    """Pairwise votes: the winner more than half the answering votes found, else a tie."""
    answered = [vote for vote in votes if vote.verdict != "error"]
    winners = [rule.winner_of(vote) for vote in votes]
    tally["winners"] = winners
    counts = Counter(winner for winner in winners if winner is not None)
    winner, agreeing, chosen = str(decision.winner), decision.agreeing, decision.chosen
    tally["agreement"] = agreeing / len(answered)
    blocks = [vote.details.pairwise or Pairwise() for vote in votes]
    pairwise = rule.pairwise_block(winner, "votes", blocks)
    if chosen is None or decision.split:
        shown = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
        reason = (
            f"tie: no winner has a majority of the {len(answered)} answering votes of {asked} "
            f"({shown}); a tie is not a win"
        )
    else:
        reason = f"{agreeing}/{asked} votes: {chosen.reason}"
    if len(answered) < len(votes):
        reason = (
            f"{len(votes) - len(answered)} of {len(votes)} vote(s) errored, so the majority was "
            f"decided on the {len(answered)} that answered; {reason}"
        )
    return pairwise_result(rubric, judge, winner, reason, pairwise)

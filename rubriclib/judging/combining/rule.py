"""The one rule votes and panels share (`decide`: majority, unanimous or any; on a labels
rubric a majority is the label most gave), and what an answering result agreed on."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from rubriclib.judging.result import (
    PAIRWISE_SCORES,
    GradeResult,
    Pairwise,
)
from rubriclib.rubrics import Rubric

Rule = Literal["majority", "unanimous", "any"]
RULES: tuple[Rule, ...] = ("majority", "unanimous", "any")
"""How several answers to one judgment become one: votes always use `majority`; a judge panel
may use any (see `decide`)."""


def majority_needed(asked: int) -> int:
    """Votes that must agree for a strict majority of `asked` (2 of 3, 3 of 4)."""
    return asked // 2 + 1


def majority_reached(votes: list[GradeResult], asked: int) -> bool:
    """One answer (the verdict; on 1-5 the score) has a strict majority of `asked`, so the
    votes not yet cast cannot change the result: voting may stop."""
    answers = Counter(answer_of(vote) for vote in votes if vote.verdict != "error")
    return bool(answers) and max(answers.values()) >= majority_needed(asked)


@dataclass(frozen=True)
class Decision:
    """What a rule makes of the answering results of one judgment (votes, or a panel's
    judges): the verdict, the 1-5 score or the pairwise winner, an answering result that agrees
    (its reason is quoted; None when none does), how many agree, and `split`: the rule found
    no agreement it needs (a pass-fail majority tie; pairwise, no majority or no unanimity)."""

    verdict: Literal["pass", "fail"]
    raw_score: int | None
    winner: str | None
    chosen: GradeResult | None
    agreeing: int
    split: bool
    label: str | None = None
    """On a labels rubric, the label decided (the chosen result's)."""


def decide(rubric: Rubric, answered: list[GradeResult], rule: Rule = "majority") -> Decision:
    """Combine answering (non-error) results by `rule`.

    Pass-fail: `majority` passes with more passes than fails (a tie fails), `unanimous` only
    when every one passed, `any` when one did. 1-5: `majority` takes the median score (of an
    even count the lower middle one), `unanimous` the lowest, `any` the highest, then the pass
    threshold. Pairwise: `majority` the winner more than half found, else a tie; `unanimous` a
    winner only when all agree, else a tie; `any` the best outcome for the output any found
    (the output if one found it the winner, else a tie if one found a tie, else the baseline).
    Labels: `majority` the label found most (a tie between labels is `split`); `unanimous` and
    `any` decide the verdict as pass-fail does, with an agreeing result's label.
    """
    if not answered:
        raise ValueError("decide needs at least one answering result")
    if rubric.scale == "labels" and rule == "majority":
        return _label_majority(answered)
    count = len(answered)
    split = False
    if rubric.scale == "pairwise":
        counts = Counter(winner_of(result) for result in answered)
        top, most = counts.most_common(1)[0]
        if rule == "majority":
            split = most * 2 <= count
        elif rule == "unanimous":
            split = len(counts) > 1
        winner = "tie" if split else top
        if rule == "any":
            winner = next((name for name in PAIRWISE_SCORES if counts[name]), "tie")
        chosen = next((result for result in answered if winner_of(result) == winner), None)
        verdict: Literal["pass", "fail"] = "pass" if winner == "output" else "fail"
        return Decision(verdict, None, winner, chosen, counts[winner], split)
    raw: int | None = None
    if rubric.scale == "1-5":
        scores = sorted(raw_score_of(result) for result in answered)
        middle = (count - 1) // 2  # the lower median: a tie never rounds up
        raw = scores[{"majority": middle, "unanimous": 0, "any": -1}[rule]]
        chosen = next(result for result in answered if result.details.raw_score == raw)
        verdict = "pass" if chosen.verdict == "pass" else "fail"
    else:
        passes = sum(result.verdict == "pass" for result in answered)
        passed = {"majority": passes > count - passes, "unanimous": passes == count}
        verdict = "pass" if passed.get(rule, passes > 0) else "fail"
        split = rule == "majority" and passes * 2 == count
        chosen = next(result for result in answered if result.verdict == verdict)
    agreeing = sum(result.verdict == verdict for result in answered)
    return Decision(verdict, raw, None, chosen, agreeing, split, chosen.details.label)


def _label_majority(answered: list[GradeResult]) -> Decision:
    """The label most of `answered` found; `split` when two labels tie for most."""
    counts = Counter(result.details.label for result in answered).most_common()
    (top, most), runner_up = counts[0], counts[1:2]
    chosen = next(result for result in answered if result.details.label == top)
    split = bool(runner_up) and runner_up[0][1] == most
    verdict: Literal["pass", "fail"] = "pass" if chosen.verdict == "pass" else "fail"
    return Decision(verdict, None, None, chosen, most, split, top)


def label_tie(answered: list[GradeResult], asked: int, who: str) -> str:
    """Why a labels majority that split is an error (never a pass)."""
    counts = Counter(result.details.label for result in answered).most_common()
    tied = ", ".join(f"{label} {count}" for label, count in counts if count == counts[0][1])
    return f"no majority label of {asked} {who}: {tied} tie (a tie is an error, never a pass)"


def winner_of(result: GradeResult) -> str | None:
    """The winner (`output`, `baseline` or `tie`) a pairwise result found."""
    pairwise = result.details.pairwise
    return pairwise.winner if pairwise is not None else None


def raw_score_of(result: GradeResult) -> int:
    """The 1-5 score of an answering result on a 1-5 rubric (always set there)."""
    assert result.details.raw_score is not None
    return result.details.raw_score


def answer_of(vote: GradeResult) -> Any:
    """What a vote agrees on: its winner on a pairwise rubric, its score on a 1-5 rubric, else
    its verdict."""
    if vote.details.pairwise is not None:
        return vote.details.pairwise.winner
    if vote.details.label is not None:
        return vote.details.label
    return vote.details.raw_score if vote.details.raw_score is not None else vote.verdict


def pairwise_block(winner: str | None, key: str, blocks: list[Pairwise]) -> dict[str, Any]:
    """`details.pairwise` over several pairwise results (`key`: `votes` or `judges`): the
    winner, each one's block, and their position flips summed."""
    return {
        "winner": winner,
        key: blocks,
        "position_flip": any(block.position_flip for block in blocks),
        "flips": sum(block.flips for block in blocks),
        "comparisons": sum(block.comparisons for block in blocks),
    }

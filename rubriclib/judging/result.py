"""GradeResult: one judgment's verdict, traceable to the exact rubric and judge that gave it,
how the two orders of a pairwise comparison combine into one, and how the votes of one
judgment combine into one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from rubriclib.judging.citations import given_citations
from rubriclib.rubrics.rubric import Rubric

ORDERS = ("output-first", "baseline-first")
"""The two orders of a pairwise comparison: the output as Response A, then the baseline as A."""
PAIRWISE_SCORES = {"output": 1.0, "tie": 0.5, "baseline": 0.0}
"""A pairwise result's score: the candidate output won, tied or lost."""
Rule = Literal["majority", "unanimous", "any"]
RULES: tuple[Rule, ...] = ("majority", "unanimous", "any")
"""How several answers to one judgment become one: votes always use `majority`; a judge panel
may use any (see `decide`)."""


class GradeResult(BaseModel):
    """One judgment's outcome; `details` holds `rubric`, `judge`, `raw_score` on 1-5 and
    `pairwise` on pairwise rubrics."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["pass", "fail", "error"]
    """`pass`, `fail`, or `error` when no valid verdict was had (never a pass)."""
    passed: bool
    """Whether the verdict is `pass`."""
    score: float | None
    """0-1: 1 or 0 on pass-fail, (level - 1) / 4 on 1-5, 1 / 0.5 / 0 (win, tie, loss) on
    pairwise; None on an error."""
    reason: str
    """The judge's reason, or what went wrong."""
    details: dict[str, Any]
    """`rubric` (name, version, scale, source, digest), `judge` (model, mode, attempts,
    usage, ...), and `votes`, `panel`, `pairwise`, `checklist` or `citations` when they apply."""

    @model_validator(mode="after")
    def _consistent(self) -> GradeResult:
        if self.verdict == "error" and (self.passed or self.score is not None):
            raise ValueError("an error result neither passes nor has a score")
        if self.verdict != "error" and self.passed != (self.verdict == "pass"):
            raise ValueError("passed must match the verdict")
        return self


def judge_details(
    model: str,
    mode: str | None,
    attempts: int,
    latency_ms: int,
    usage: dict[str, int],
    correction: str | None = None,
    cached: bool = False,
    retries: int = 0,
) -> dict[str, Any]:
    """The `details.judge` block. `attempts` counts every request sent, `retries` those sent
    again after a retryable failure; `mode` is how the verdict call was forced (None when no
    request was answered); `correction` is why a corrective turn was needed, if one was;
    `cached` says the verdict came from the verdict cache, with no request."""
    details: dict[str, Any] = {
        "model": model,
        "mode": mode,
        "attempts": attempts,
        "retries": retries,
        "cached": cached,
        "corrected": correction is not None,
        "latency_ms": latency_ms,
        "usage": usage,
    }
    if correction is not None:
        details["correction"] = correction
    return details


def make_result(
    rubric: Rubric,
    judge: dict[str, Any],
    verdict: Literal["pass", "fail", "error"],
    reason: str,
    raw_score: int | None = None,
) -> GradeResult:
    """Build a result; on a 1-5 rubric, `raw_score` sets the verdict through pass_threshold."""
    details: dict[str, Any] = {"rubric": rubric.identity, "judge": judge}
    score: float | None = None
    if verdict != "error":
        score = 1.0 if verdict == "pass" else 0.0
    if raw_score is not None and rubric.pass_threshold is not None:
        details["raw_score"] = raw_score
        score = (raw_score - 1) / 4
        verdict = "pass" if raw_score >= rubric.pass_threshold else "fail"
    return GradeResult(
        verdict=verdict, passed=verdict == "pass", score=score, reason=reason, details=details
    )


def not_judged(rubric: Rubric, model: str, cause: str) -> GradeResult:
    """The error result of a judgment that was never sent to the judge."""
    details = judge_details(model, None, 0, 0, {"prompt_tokens": 0, "completion_tokens": 0})
    return make_result(rubric, details, "error", f"not judged: {cause}")


def order_winner(order: int, position: str | None) -> str | None:
    """What a judge's answer (A, B or tie) in order `order` (0: output first, 1: baseline
    first) says won: `output`, `baseline` or `tie`."""
    if position not in ("A", "B"):
        return "tie" if position == "tie" else None
    output_is_a = order == 0
    return "output" if (position == "A") == output_is_a else "baseline"


def combine_orders(rubric: Rubric, orders: list[GradeResult]) -> GradeResult:
    """One pairwise comparison from its judgments in each order (`orders`: output first, then
    baseline first; only the first when it errored). The winner stands only when both orders
    agree; a disagreement is a tie and a position flip, so position never decides. The verdict
    is pass only when the output wins (a tie is not a win); the score is 1, 0.5 or 0. Each
    order keeps its own attempts and retries; `details.judge` sums them (requests sent)."""
    judge = summed_judge(orders)
    entries = [
        {
            "order": ORDERS[index],
            "winner": result.details.get("winner") if result.verdict != "error" else None,
            "reason": result.reason,
            "attempts": result.details.get("judge", {}).get("attempts", 0),
            "retries": result.details.get("judge", {}).get("retries", 0),
        }
        | ({"citations": result.details["citations"]} if "citations" in result.details else {})
        for index, result in enumerate(orders)
    ]
    pairwise: dict[str, Any] = {"winner": None, "orders": entries, "position_flip": None}
    pairwise.update(flips=0, comparisons=0)
    failed = [(i, result) for i, result in enumerate(orders) if result.verdict == "error"]
    if failed or len(orders) != len(ORDERS):
        index, result = failed[0] if failed else (len(orders), orders[-1])
        reason = result.reason if failed else "the comparison was cut short"
        if index or not reason.startswith("not judged:"):
            reason = f"{ORDERS[min(index, 1)]} order: {reason}"
        return with_details(make_result(rubric, judge, "error", reason), pairwise=pairwise)
    found = [order_winner(i, result.details.get("winner")) for i, result in enumerate(orders)]
    flip = found[0] != found[1]
    winner = "tie" if flip else str(found[0])
    pairwise.update(winner=winner, position_flip=flip, flips=int(flip), comparisons=1)
    if flip:
        reason = (
            f"tie: the orders disagreed (output first: {found[0]}; baseline first: {found[1]}), "
            f"so position, not quality, decided; output first said: {orders[0].reason}"
        )
    else:
        said = {"output": "the output wins", "baseline": "the baseline wins", "tie": "a tie"}
        reason = f"{said[winner]} in both orders: {orders[0].reason}"
    return pairwise_result(rubric, judge, winner, reason, pairwise)


def pairwise_result(
    rubric: Rubric, judge: dict[str, Any], winner: str, reason: str, pairwise: dict[str, Any]
) -> GradeResult:
    """The result of a decided pairwise comparison: pass only when the output wins."""
    verdict: Literal["pass", "fail"] = "pass" if winner == "output" else "fail"
    result = make_result(rubric, judge, verdict, reason)
    result = result.model_copy(update={"score": PAIRWISE_SCORES[winner]})
    return with_details(result, pairwise=pairwise)


def pairwise_stats(results: Iterable[GradeResult]) -> dict[str, Any]:
    """Win, tie and loss counts and rates of pairwise results (rates over those that were
    decided; errors counted apart), and the position-flip rate: the share of comparisons
    whose answer changed when the order was swapped."""
    counts = {"win": 0, "tie": 0, "loss": 0, "errors": 0}
    flips = comparisons = 0
    names = {"output": "win", "tie": "tie", "baseline": "loss"}
    for result in results:
        pairwise = result.details.get("pairwise")
        if not isinstance(pairwise, dict):
            pairwise = {}
        winner = pairwise.get("winner")
        if result.verdict == "error" or winner not in names:
            counts["errors"] += 1
            continue
        counts[names[winner]] += 1
        flips += int(pairwise.get("flips", 0))
        comparisons += int(pairwise.get("comparisons", 0))
    decided = counts["win"] + counts["tie"] + counts["loss"]
    return {
        **counts,
        **{f"{key}_rate": counts[key] / decided if decided else None for key in names.values()},
        "position_flips": flips,
        "comparisons": comparisons,
        "flip_rate": flips / comparisons if comparisons else None,
    }


def majority_needed(asked: int) -> int:
    """Votes that must agree for a strict majority of `asked` (2 of 3, 3 of 4)."""
    return asked // 2 + 1


def majority_reached(votes: list[GradeResult], asked: int) -> bool:
    """One answer (the verdict; on 1-5 the score) has a strict majority of `asked`, so the
    votes not yet cast cannot change the result: voting may stop."""
    answers = Counter(_answer(vote) for vote in votes if vote.verdict != "error")
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


def decide(rubric: Rubric, answered: list[GradeResult], rule: Rule = "majority") -> Decision:
    """Combine answering (non-error) results by `rule`.

    Pass-fail: `majority` passes with more passes than fails (a tie fails), `unanimous` only
    when every one passed, `any` when one did. 1-5: `majority` takes the median score (of an
    even count the lower middle one), `unanimous` the lowest, `any` the highest, then the pass
    threshold. Pairwise: `majority` the winner more than half found, else a tie; `unanimous` a
    winner only when all agree, else a tie; `any` the best outcome for the output any found
    (the output if one found it the winner, else a tie if one found a tie, else the baseline).
    """
    if not answered:
        raise ValueError("decide needs at least one answering result")
    count = len(answered)
    split = False
    if rubric.scale == "pairwise":
        counts = Counter(_winner(result) for result in answered)
        top, most = counts.most_common(1)[0]
        if rule == "majority":
            split = most * 2 <= count
        elif rule == "unanimous":
            split = len(counts) > 1
        winner = "tie" if split else top
        if rule == "any":
            winner = next((name for name in PAIRWISE_SCORES if counts[name]), "tie")
        chosen = next((result for result in answered if _winner(result) == winner), None)
        verdict: Literal["pass", "fail"] = "pass" if winner == "output" else "fail"
        return Decision(verdict, None, winner, chosen, counts[winner], split)
    raw: int | None = None
    if rubric.scale == "1-5":
        scores = sorted(int(result.details["raw_score"]) for result in answered)
        middle = (count - 1) // 2  # the lower median: a tie never rounds up
        raw = scores[{"majority": middle, "unanimous": 0, "any": -1}[rule]]
        chosen = next(result for result in answered if result.details["raw_score"] == raw)
        verdict = "pass" if chosen.verdict == "pass" else "fail"
    else:
        passes = sum(result.verdict == "pass" for result in answered)
        passed = {"majority": passes > count - passes, "unanimous": passes == count}
        verdict = "pass" if passed.get(rule, passes > 0) else "fail"
        split = rule == "majority" and passes * 2 == count
        chosen = next(result for result in answered if result.verdict == verdict)
    agreeing = sum(result.verdict == verdict for result in answered)
    return Decision(verdict, raw, None, chosen, agreeing, split)


def combine_votes(rubric: Rubric, votes: list[GradeResult], asked: int) -> GradeResult:
    """The result of `asked` votes of one judgment (`votes`: those cast, in order).

    Votes that errored are left out. Pass-fail: the verdict with more votes; a tie is `fail`.
    1-5: the median score (of an even count, the lower middle one), then the pass threshold.
    `details.votes` keeps every vote; `details.judge` sums attempts, latency and usage.
    """
    answered = [vote for vote in votes if vote.verdict != "error"]
    errors = len(votes) - len(answered)
    judge = summed_judge(votes)
    tally: dict[str, Any] = {
        "asked": asked,
        "cast": len(votes),
        "verdicts": [vote.verdict for vote in votes],
        "reasons": [vote.reason for vote in votes],
        "agreement": None,
        "errors": errors,
        "cached": sum(bool(vote.details.get("judge", {}).get("cached")) for vote in votes),
    }
    if rubric.scale == "1-5":
        tally["scores"] = [vote.details.get("raw_score") for vote in votes]
    cited = [given_citations(vote.details) for vote in votes]  # checklist items' too
    if any(cited):
        tally["citations"] = cited
    if not answered:
        first = votes[0].reason if votes else "no vote was cast"
        result = make_result(rubric, judge, "error", f"all {len(votes)} vote(s) errored: {first}")
        return with_details(result, votes=tally)
    if len(answered) < majority_needed(asked):  # too few answered to be a majority of asked
        first = next(vote.reason for vote in votes if vote.verdict == "error")
        reason = (
            f"only {len(answered)} of {asked} votes answered ({errors} errored: {first}); a "
            f"decision needs {majority_needed(asked)}"
        )
        return with_details(make_result(rubric, judge, "error", reason), votes=tally)
    decision = decide(rubric, answered)
    if rubric.scale == "pairwise":
        return with_details(
            _pairwise_majority(rubric, judge, votes, asked, tally, decision), votes=tally
        )
    raw, verdict, agreeing = decision.raw_score, decision.verdict, decision.agreeing
    assert decision.chosen is not None  # pass-fail and 1-5 always quote an agreeing vote
    chosen = decision.chosen
    tally["agreement"] = agreeing / len(answered)
    reason = f"{agreeing}/{asked} votes: {chosen.reason}"
    if rubric.scale == "1-5":
        scored = [vote.details["raw_score"] for vote in answered]
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
    return with_details(make_result(rubric, judge, verdict, reason, raw), votes=tally)


def _pairwise_majority(
    rubric: Rubric,
    judge: dict[str, Any],
    votes: list[GradeResult],
    asked: int,
    tally: dict[str, Any],
    decision: Decision,
) -> GradeResult:
    """Pairwise votes: the winner more than half the answering votes found, else a tie."""
    answered = [vote for vote in votes if vote.verdict != "error"]
    winners = [vote.details.get("pairwise", {}).get("winner") for vote in votes]
    tally["winners"] = winners
    counts = Counter(winner for winner in winners if winner is not None)
    winner, agreeing, chosen = str(decision.winner), decision.agreeing, decision.chosen
    tally["agreement"] = agreeing / len(answered)
    blocks = [vote.details.get("pairwise", {}) for vote in votes]
    pairwise = {
        "winner": winner,
        "votes": blocks,
        "position_flip": any(block.get("position_flip") for block in blocks),
        "flips": sum(int(block.get("flips", 0)) for block in blocks),
        "comparisons": sum(int(block.get("comparisons", 0)) for block in blocks),
    }
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


def _winner(result: GradeResult) -> str | None:
    """The winner (`output`, `baseline` or `tie`) a pairwise result found."""
    pairwise = result.details.get("pairwise")
    return pairwise.get("winner") if isinstance(pairwise, dict) else None


def _answer(vote: GradeResult) -> Any:
    """What a vote agrees on: its winner on a pairwise rubric, its score on a 1-5 rubric, else
    its verdict."""
    pairwise = vote.details.get("pairwise")
    if isinstance(pairwise, dict):
        return pairwise.get("winner")
    return vote.details.get("raw_score", vote.verdict)


def summed_judge(votes: list[GradeResult]) -> dict[str, Any]:
    """`details.judge` over every vote: attempts, retries, latency and usage summed; the first
    answered vote's mode; cached when every vote was; corrected when any was."""
    blocks = [vote.details.get("judge", {}) for vote in votes]
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    for block in blocks:
        for key in usage:
            usage[key] += int(block.get("usage", {}).get(key, 0))
    corrections = [block["correction"] for block in blocks if block.get("correction")]
    details = judge_details(
        next((str(block["model"]) for block in blocks if block.get("model")), ""),
        next((block["mode"] for block in blocks if block.get("mode")), None),
        sum(int(block.get("attempts", 0)) for block in blocks),
        sum(int(block.get("latency_ms", 0)) for block in blocks),
        usage,
        corrections[0] if corrections else None,
        cached=bool(blocks) and all(block.get("cached") for block in blocks),
        retries=sum(int(block.get("retries", 0)) for block in blocks),
    )
    details["corrected"] = any(block.get("corrected") for block in blocks)
    return details


def with_winner(result: GradeResult, winner: str | None) -> GradeResult:
    """A pairwise order's result with the judge's answer (A, B or tie) in `details.winner`."""
    return result if winner is None else with_details(result, winner=winner)


def with_details(result: GradeResult, **more: Any) -> GradeResult:
    """`result` with `more` added to its details (a pairwise block, a vote tally, a panel's
    judges, a pairwise order's winner)."""
    return result.model_copy(update={"details": {**result.details, **more}})

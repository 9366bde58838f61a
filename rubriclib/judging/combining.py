"""How the results of one judgment combine into one: its votes (a majority), a checklist's
items, a judge profile's decision over the items' probabilities, and a judge panel's members
(majority, unanimous or any). `decide` is the one rule votes and panels share."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from rubriclib.judging.asking.reply import ANSWER_DETAILS
from rubriclib.judging.citations import given_citations
from rubriclib.judging.profile import Applied, item_passing
from rubriclib.judging.result import (
    PAIRWISE_SCORES,
    GradeResult,
    JudgeInfo,
    Pairwise,
    make_result,
    pairwise_result,
    summed_judge,
    with_details,
)
from rubriclib.rubrics import ItemAnswer, Rubric, checklist_verdict

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
        scores = sorted(_raw_score(result) for result in answered)
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
    if votes and all(vote.details.judge.answers == "one-call" for vote in votes):
        judge = judge.adding(answers="one-call")  # how the checklist was answered, for --resume
    tally: dict[str, Any] = {
        "asked": asked,
        "cast": len(votes),
        "verdicts": [vote.verdict for vote in votes],
        "reasons": [vote.reason for vote in votes],
        "agreement": None,
        "errors": errors,
        "cached": sum(vote.details.judge.cached for vote in votes),
    }
    if rubric.scale == "1-5":
        tally["scores"] = [vote.details.raw_score for vote in votes]
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
        scored = [_raw_score(vote) for vote in answered]
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
    judge: JudgeInfo,
    votes: list[GradeResult],
    asked: int,
    tally: dict[str, Any],
    decision: Decision,
) -> GradeResult:
    """Pairwise votes: the winner more than half the answering votes found, else a tie."""
    answered = [vote for vote in votes if vote.verdict != "error"]
    winners = [_winner(vote) for vote in votes]
    tally["winners"] = winners
    counts = Counter(winner for winner in winners if winner is not None)
    winner, agreeing, chosen = str(decision.winner), decision.agreeing, decision.chosen
    tally["agreement"] = agreeing / len(answered)
    blocks = [vote.details.pairwise or Pairwise() for vote in votes]
    pairwise = _pairwise_block(winner, "votes", blocks)
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
    pairwise = result.details.pairwise
    return pairwise.winner if pairwise is not None else None


def _raw_score(result: GradeResult) -> int:
    """The 1-5 score of an answering result on a 1-5 rubric (always set there)."""
    assert result.details.raw_score is not None
    return result.details.raw_score


def _answer(vote: GradeResult) -> Any:
    """What a vote agrees on: its winner on a pairwise rubric, its score on a 1-5 rubric, else
    its verdict."""
    if vote.details.pairwise is not None:
        return vote.details.pairwise.winner
    return vote.details.raw_score if vote.details.raw_score is not None else vote.verdict


def checklist_result(rubric: Rubric, items: list[GradeResult]) -> GradeResult:
    """One vote in checklist mode: each item's result (in checklist order) becomes its answer,
    and `checklist_verdict` computes the verdict (an item that errored makes it `error`, never
    a pass). `details.checklist` lists each item's id, answer, reason, attempts (and `p`
    where known); `details.judge` sums attempts and usage over the items."""
    listed = []
    for check, result in zip(rubric.checklist, items, strict=True):
        answer = result.details.answer if result.verdict != "error" else None
        entry = {
            "id": check.id,
            "answer": answer,
            "reason": result.reason,
            "attempts": result.details.judge.attempts,
            "cached": result.details.judge.cached,
        }
        for kept in ("p", *ANSWER_DETAILS, "citations"):
            if kept in result.details:
                entry[kept] = result.details[kept]
        listed.append(entry)
    return _decided(rubric, listed, summed_judge(items))


def one_call_result(rubric: Rubric, judged: GradeResult) -> GradeResult:
    """One vote in checklist mode with every item answered in one call (`judged`, whose
    `details.checklist` holds the answers): the verdict `checklist_verdict` computes from them,
    as for items asked one by one; each item's attempts are the call's. An error (no valid
    reply) stays one, each item unanswered. `details.judge` says the items were answered
    `one-call`; the verdict's own citations stay in `details.citations`."""
    judge = judged.details.judge.adding(answers="one-call")
    counted = {"attempts": judge.attempts, "cached": judge.cached}
    if judged.verdict == "error" or judged.details.checklist is None:
        unanswered = [
            {"id": check.id, "answer": None, "reason": judged.reason} | counted
            for check in rubric.checklist
        ]
        failed = judged.model_copy(update={"details": judged.details.adding(judge=judge)})
        return with_details(failed, checklist=unanswered)
    listed = [dict(entry) | counted for entry in judged.details.checklist]
    result = _decided(rubric, listed, judge)
    cited = judged.details.citations
    return with_details(result, citations=cited) if cited else result


def _decided(rubric: Rubric, listed: list[dict[str, Any]], judge: JudgeInfo) -> GradeResult:
    """The result `checklist_verdict` computes from the items' entries (`listed`)."""
    answers = {entry["id"]: ItemAnswer(entry["answer"], entry["reason"]) for entry in listed}
    computed = checklist_verdict(rubric.scale, rubric.pass_threshold, rubric.checklist, answers)
    result = make_result(rubric, judge, computed.verdict, computed.reason, computed.raw_score)
    return with_details(result, checklist=listed)


def decided_by(applied: Applied, rubric: Rubric, result: GradeResult) -> GradeResult:
    """A probability-answers result decided by `applied` (a pass-fail rubric's, with every
    item's p(yes); else unchanged), the checklist rule's verdict kept in `details.profile.rule`."""
    passing = item_passing(rubric.checklist, result.details)
    if passing is None or rubric.scale != "pass-fail":
        return result
    p_pass = applied.profile.p_pass(passing)
    verdict = applied.profile.verdict(passing)
    reason = (
        f"{verdict} by the judge profile {applied.path.name} (p(pass) {p_pass:.3f}); the "
        f"checklist rule said {result.verdict}: {result.reason}"
    )
    profiled = make_result(rubric, result.details.judge, verdict, reason)
    kept = {"path": str(applied.path), "digest": applied.digest, "p_pass": round(p_pass, 6)}
    return with_details(
        profiled, checklist=result.details.checklist, profile=kept | {"rule": result.verdict}
    )


_OUTCOME_WORDS = {
    "majority": "more passes than fails (a tie fails)",
    "unanimous": "pass only if every judge passed",
    "any": "pass if any judge passed",
}
_SCORE_WORDS = {"majority": "median", "unanimous": "lowest", "any": "highest"}


def combine_panel(
    rubric: Rubric,
    aggregate: Rule,
    named: list[tuple[str, GradeResult]],
    entries: list[dict[str, Any]],
    model: str,
) -> GradeResult:
    """One result from each member's (`named`: its label and result, in order): the verdict
    `aggregate` gives over those that answered, every member's line (`entries`) in
    `details.panel`, `model` (the panel's name) in `details.judge`."""
    count = len(named)
    results = [result for _, result in named]
    judge = summed_judge(results).adding(model=model)
    panel: dict[str, Any] = {
        "aggregate": aggregate,
        "judges": entries,
        "answered": 0,
        "errors": 0,
        "agreement": None,
    }
    answered = [(label, result) for label, result in named if result.verdict != "error"]
    errored = [(label, result) for label, result in named if result.verdict == "error"]
    panel.update(answered=len(answered), errors=len(errored))
    failures = "; ".join(f"{label}: {result.reason}" for label, result in errored)
    if not answered:
        reason = f"all {count} judges errored ({failures})"
        return with_details(make_result(rubric, judge, "error", reason), panel=panel)
    decision = decide(rubric, [result for _, result in answered], aggregate)
    if errored and (
        (aggregate == "majority" and len(answered) < majority_needed(count))
        or (aggregate == "unanimous" and decision.verdict == "pass")
    ):  # the judges that answered cannot decide for the panel: never a pass by default
        need = (
            f"a majority panel needs {majority_needed(count)} of {count} to answer"
            if aggregate == "majority"
            else "a unanimous panel passes only when every judge passed"
        )
        reason = f"{len(errored)} of {count} judges errored ({failures}); {need}"
        return with_details(make_result(rubric, judge, "error", reason), panel=panel)
    panel["agreement"] = decision.agreeing / len(answered)
    chosen = next((label for label, result in answered if result is decision.chosen), None)
    reason = _panel_reason(rubric, aggregate, answered, decision)
    if decision.chosen is not None:
        reason += f"; {chosen} said: {decision.chosen.reason}"
    if errored:
        reason = (
            f"{len(errored)} of {count} judges errored ({failures}); decided on the "
            f"{len(answered)} that answered; {reason}"
        )
    if rubric.scale == "pairwise":
        blocks = [result.details.pairwise or Pairwise() for result in results]
        pairwise = _pairwise_block(decision.winner, "judges", blocks)
        result = pairwise_result(rubric, judge, str(decision.winner), reason, pairwise)
        return with_details(result, panel=panel)
    result = make_result(rubric, judge, decision.verdict, reason, decision.raw_score)
    return with_details(result, panel=panel)


def _panel_reason(
    rubric: Rubric,
    aggregate: Rule,
    answered: list[tuple[str, GradeResult]],
    decision: Decision,
) -> str:
    """What the answering judges said and what the rule made of it."""
    head = f"{aggregate} of {len(answered)} judge(s)"
    if rubric.scale == "pairwise":
        found = ", ".join(f"{label}: {_winner(result)}" for label, result in answered)
        outcome = {"output": "the output wins", "baseline": "the baseline wins"}
        said = outcome.get(str(decision.winner), "a tie, which is not a win")
        return f"{head} ({found}): {said}"
    if rubric.scale == "1-5":
        scores = ", ".join(f"{label} {_raw_score(result)}" for label, result in answered)
        words = _SCORE_WORDS[aggregate]
        ordered = sorted(_raw_score(result) for _, result in answered)
        if words == "median" and ordered[len(ordered) // 2] != decision.raw_score:
            words = "lower median (a tie never rounds up)"
        return f"{head} (scores {scores}): the {words} score, {decision.raw_score}"
    passes = sum(result.verdict == "pass" for _, result in answered)
    fails = len(answered) - passes
    tie = " a tie never passes;" if decision.split else ""
    rule = _OUTCOME_WORDS[aggregate]
    return f"{head}: {passes} pass, {fails} fail; {rule}:{tie} {decision.verdict}"


def _pairwise_block(winner: str | None, key: str, blocks: list[Pairwise]) -> dict[str, Any]:
    """`details.pairwise` over several pairwise results (`key`: `votes` or `judges`): the
    winner, each one's block, and their position flips summed."""
    return {
        "winner": winner,
        key: blocks,
        "position_flip": any(block.position_flip for block in blocks),
        "flips": sum(block.flips for block in blocks),
        "comparisons": sum(block.comparisons for block in blocks),
    }

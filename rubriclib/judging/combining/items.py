"""A checklist's items combined into one vote's result, and a judge profile's decision over
the items' probabilities."""

from __future__ import annotations

from typing import Any

from rubriclib.judging.asking.reply import ANSWER_DETAILS
from rubriclib.judging.profile import Applied, item_passing
from rubriclib.judging.result import (
    GradeResult,
    JudgeInfo,
    make_result,
    summed_judge,
    with_details,
)
from rubriclib.rubrics import ItemAnswer, Rubric, checklist_verdict


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

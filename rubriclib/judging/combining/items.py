"""A checklist's items combined into one vote's result, and a judge profile's decision over
the items' probabilities."""

from __future__ import annotations

from rubriclib.judging.asking.reply import ANSWER_DETAILS
from rubriclib.judging.profile import Applied, item_passing
from rubriclib.judging.result import (
    GradeResult,
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
    answers: dict[str, ItemAnswer] = {}
    listed = []
    for check, result in zip(rubric.checklist, items, strict=True):
        answer = result.details.answer if result.verdict != "error" else None
        answers[check.id] = ItemAnswer(answer, result.reason)
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
    computed = checklist_verdict(rubric.scale, rubric.pass_threshold, rubric.checklist, answers)
    result = make_result(
        rubric, summed_judge(items), computed.verdict, computed.reason, computed.raw_score
    )
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

"""A judge panel's members combined into one result by its rule (majority, unanimous, any)."""

from __future__ import annotations

from typing import Any

from rubriclib.judging.combining.rule import (
    Decision,
    Rule,
    decide,
    label_tie,
    majority_needed,
    pairwise_block,
    raw_score_of,
    winner_of,
)
from rubriclib.judging.result import (
    GradeResult,
    Pairwise,
    make_result,
    pairwise_result,
    summed_judge,
    with_details,
)
from rubriclib.rubrics import Rubric

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
        pairwise = pairwise_block(decision.winner, "judges", blocks)
        result = pairwise_result(rubric, judge, str(decision.winner), reason, pairwise)
        return with_details(result, panel=panel)
    if rubric.scale == "labels" and decision.split:
        tie = label_tie([result for _, result in answered], count, "judges")
        return with_details(make_result(rubric, judge, "error", tie), panel=panel)
    result = make_result(rubric, judge, decision.verdict, reason, decision.raw_score)
    labelled = {"label": decision.label} if decision.label is not None else {}
    return with_details(result, panel=panel, **labelled)


def _panel_reason(
    rubric: Rubric,
    aggregate: Rule,
    answered: list[tuple[str, GradeResult]],
    decision: Decision,
) -> str:
    """What the answering judges said and what the rule made of it."""
    head = f"{aggregate} of {len(answered)} judge(s)"
    if rubric.scale == "pairwise":
        found = ", ".join(f"{label}: {winner_of(result)}" for label, result in answered)
        outcome = {"output": "the output wins", "baseline": "the baseline wins"}
        said = outcome.get(str(decision.winner), "a tie, which is not a win")
        return f"{head} ({found}): {said}"
    if rubric.scale == "1-5":
        scores = ", ".join(f"{label} {raw_score_of(result)}" for label, result in answered)
        words = _SCORE_WORDS[aggregate]
        ordered = sorted(raw_score_of(result) for _, result in answered)
        if words == "median" and ordered[len(ordered) // 2] != decision.raw_score:
            words = "lower median (a tie never rounds up)"
        return f"{head} (scores {scores}): the {words} score, {decision.raw_score}"
    passes = sum(result.verdict == "pass" for _, result in answered)
    fails = len(answered) - passes
    tie = " a tie never passes;" if decision.split else ""
    rule = _OUTCOME_WORDS[aggregate]
    return f"{head}: {passes} pass, {fails} fail; {rule}:{tie} {decision.verdict}"

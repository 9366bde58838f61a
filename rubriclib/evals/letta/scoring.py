"""A row letta grades turn by turn, scored as letta-evals scores it: one result of its turns."""

from __future__ import annotations

from typing import Literal

from rubriclib.judging import Details, GradeResult, summed_judge
from rubriclib.rubrics import Rubric


def combine_turns(rubric: Rubric, turns: list[GradeResult]) -> GradeResult:
    """One result for a row letta grades turn by turn: the score is the mean over turns (as
    letta-evals scores it), the verdict passes only when every turn does, and a turn that
    errored makes the whole an error (never a pass). `details.turns` keeps each turn."""
    details = Details.model_validate(
        {
            "rubric": rubric.identity,
            "judge": summed_judge(turns),
            "turns": [
                {"turn": n, "verdict": turn.verdict, "score": turn.score, "reason": turn.reason}
                for n, turn in enumerate(turns)
            ],
        }
    )
    errors = [(n, turn) for n, turn in enumerate(turns) if turn.verdict == "error"]
    if errors:
        n, first = errors[0]
        reason = f"turn {n} of {len(turns)}: {first.reason}"
        return GradeResult(
            verdict="error", passed=False, score=None, reason=reason, details=details
        )
    passed = sum(turn.passed for turn in turns)
    failing = "; ".join(
        f"turn {n}: {turn.reason}" for n, turn in enumerate(turns) if not turn.passed
    )
    reason = f"{passed}/{len(turns)} turns passed" + (f"; {failing}" if failing else "")
    verdict: Literal["pass", "fail"] = "pass" if passed == len(turns) else "fail"
    score = sum(turn.score or 0.0 for turn in turns) / len(turns)
    return GradeResult(
        verdict=verdict, passed=verdict == "pass", score=score, reason=reason, details=details
    )

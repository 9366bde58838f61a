"""GradeResult: one judgment's verdict, traceable to the exact rubric and judge that gave it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from rubriclib.rubric import Rubric


class GradeResult(BaseModel):
    """One judgment's outcome; `details` holds `rubric`, `judge`, and `raw_score` on 1-5."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["pass", "fail", "error"]
    passed: bool
    score: float | None
    reason: str
    details: dict[str, Any]

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
) -> dict[str, Any]:
    """The `details.judge` block. `mode` is how the verdict call was forced (None when no
    request was answered); `correction` is why a corrective turn was needed, if one was;
    `cached` says the verdict came from the verdict cache, with no request."""
    details: dict[str, Any] = {
        "model": model,
        "mode": mode,
        "attempts": attempts,
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

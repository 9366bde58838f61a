"""GradeResult: one judgment's verdict, traceable to the exact rubric and judge that gave it,
and how the votes of one judgment combine into one."""

from __future__ import annotations

from collections import Counter
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


def majority_needed(asked: int) -> int:
    """Votes that must agree for a strict majority of `asked` (2 of 3, 3 of 4)."""
    return asked // 2 + 1


def majority_reached(votes: list[GradeResult], asked: int) -> bool:
    """One answer (the verdict; on 1-5 the score) has a strict majority of `asked`, so the
    votes not yet cast cannot change the result: voting may stop."""
    answers = Counter(_answer(vote) for vote in votes if vote.verdict != "error")
    return bool(answers) and max(answers.values()) >= majority_needed(asked)


def combine_votes(rubric: Rubric, votes: list[GradeResult], asked: int) -> GradeResult:
    """The result of `asked` votes of one judgment (`votes`: those cast, in order).

    Votes that errored are left out. Pass-fail: the verdict with more votes; a tie is `fail`.
    1-5: the median score (of an even count, the lower middle one), then the pass threshold.
    `details.votes` keeps every vote; `details.judge` sums attempts, latency and usage.
    """
    answered = [vote for vote in votes if vote.verdict != "error"]
    errors = len(votes) - len(answered)
    judge = _summed_judge(votes)
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
    if not answered:
        first = votes[0].reason if votes else "no vote was cast"
        result = make_result(rubric, judge, "error", f"all {len(votes)} vote(s) errored: {first}")
        return _with_votes(result, tally)
    raw: int | None = None
    verdict: Literal["pass", "fail", "error"]
    if rubric.scale == "1-5":
        scores = sorted(int(vote.details["raw_score"]) for vote in answered)
        raw = scores[(len(scores) - 1) // 2]  # the lower median: a tie never rounds up
        chosen = next(vote for vote in answered if vote.details["raw_score"] == raw)
        verdict = chosen.verdict
    else:
        passes = sum(vote.verdict == "pass" for vote in answered)
        verdict = "pass" if passes > len(answered) - passes else "fail"
        chosen = next(vote for vote in answered if vote.verdict == verdict)
    agreeing = sum(vote.verdict == verdict for vote in answered)
    tally["agreement"] = agreeing / len(answered)
    reason = f"{agreeing}/{asked} votes: {chosen.reason}"
    if rubric.scale == "1-5":
        scored = [vote.details["raw_score"] for vote in answered]
        middle = "median"
        if len(scored) % 2 == 0 and sorted(scored)[len(scored) // 2] != raw:
            middle = "lower median (a tie never rounds up)"
        reason = f"{agreeing}/{asked} votes, {middle} score {raw} of {scored}: {chosen.reason}"
    if rubric.scale == "pass-fail" and agreeing * 2 == len(answered):
        reason = (
            f"tie, {agreeing} pass and {agreeing} fail of {asked} votes: a tie never passes "
            f"(half the judgments found it wanting); a fail vote said: {chosen.reason}"
        )
    if errors:
        reason = (
            f"{errors} of {len(votes)} vote(s) errored, so the majority was decided on the "
            f"{len(answered)} that answered; {reason}"
        )
    return _with_votes(make_result(rubric, judge, verdict, reason, raw), tally)


def _answer(vote: GradeResult) -> Any:
    """What a vote agrees on: its score on a 1-5 rubric, else its verdict."""
    return vote.details.get("raw_score", vote.verdict)


def _summed_judge(votes: list[GradeResult]) -> dict[str, Any]:
    """`details.judge` over every vote: attempts, latency and usage summed; the first answered
    vote's mode; cached when every vote was; corrected when any was."""
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
    )
    details["corrected"] = any(block.get("corrected") for block in blocks)
    return details


def _with_votes(result: GradeResult, tally: dict[str, Any]) -> GradeResult:
    return result.model_copy(update={"details": {**result.details, "votes": tally}})

"""GradeResult: one judgment's verdict, traceable to the exact rubric and judge that gave it;
how one result is made (a pairwise comparison's from its two orders) and added to, and the
pairwise counts over many (how several results combine into one is `combining`'s)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from rubriclib.judging.result.details import Details, JudgeInfo, as_written
from rubriclib.rubrics import Rubric

ORDERS = ("output-first", "baseline-first")
"""The two orders of a pairwise comparison: the output as Response A, then the baseline as A."""
PAIRWISE_SCORES = {"output": 1.0, "tie": 0.5, "baseline": 0.0}
"""A pairwise result's score: the candidate output won, tied or lost."""


class GradeResult(BaseModel):
    """One judgment's outcome; `details` holds `rubric`, `judge`, `raw_score` on 1-5 and
    `pairwise` on pairwise rubrics (a typed `Details`, read by attribute or, as before, by
    key). Loaded from JSON (`model_validate`), an unknown key in `details` is an error."""

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
    details: Details
    """`rubric` (name, version, scale, source, digest), `judge` (model, mode, attempts,
    usage, ...), and `votes`, `panel`, `pairwise`, `checklist`, `citations`, `profile`,
    `turns` or `transcript` when they apply: `result.details.judge.usage.prompt_tokens`, or
    `result.details["rubric"]["version"]` as when it was a dict (a key that is not set is a
    KeyError, a name that is no field of it is a KeyError saying so). Only the keys that were
    set are written, so a result dumps to the JSON it always had."""

    @model_validator(mode="after")
    def _consistent(self) -> GradeResult:
        if self.verdict == "error" and (self.passed or self.score is not None):
            raise ValueError("an error result neither passes nor has a score")
        if self.verdict != "error" and self.passed != (self.verdict == "pass"):
            raise ValueError("passed must match the verdict")
        return self


SAMPLED = ("temperature", "seed", "served_model", "system_fingerprint")
"""What produced a verdict, kept in `details.judge` beside the model asked for (over votes,
orders or items: the first that has it)."""


def judge_details(
    model: str,
    mode: str | None,
    attempts: int,
    latency_ms: int,
    usage: dict[str, int],
    correction: str | None = None,
    cached: bool = False,
    retries: int = 0,
    protocol: str | None = None,
    sampled: Mapping[str, Any] | None = None,
) -> JudgeInfo:
    """The `details.judge` block. `attempts` counts every request sent, `retries` those sent
    again after a retryable failure; `mode` is how the verdict call was forced (None when no
    request was answered); `correction` is why a corrective turn was needed, if one was;
    `cached` says the verdict came from the verdict cache, with no request; `protocol` how
    verdicts were asked for (None: nothing was sent); `sampled` what produced the verdict
    (`SAMPLED`: temperature and seed sent, the model and fingerprint the reply named), each
    kept when not None."""
    corrected = {"correction": correction} if correction is not None else {}
    corrected |= {"protocol": protocol} if protocol is not None else {}
    corrected |= {key: value for key, value in (sampled or {}).items() if value is not None}
    return JudgeInfo.model_validate(
        {
            "model": model,
            "mode": mode,
            "attempts": attempts,
            "retries": retries,
            "cached": cached,
            "corrected": correction is not None,
            "latency_ms": latency_ms,
            "usage": usage,
        }
        | corrected
    )


def make_result(
    rubric: Rubric,
    judge: JudgeInfo,
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
        verdict=verdict,
        passed=verdict == "pass",
        score=score,
        reason=reason,
        details=Details.model_validate(details),
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
            "winner": result.details.winner if result.verdict != "error" else None,
            "reason": result.reason,
            "attempts": result.details.judge.attempts,
            "retries": result.details.judge.retries,
        }
        | ({"citations": result.details.citations} if "citations" in result.details else {})
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
    found = [order_winner(i, result.details.winner) for i, result in enumerate(orders)]
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
    rubric: Rubric, judge: JudgeInfo, winner: str, reason: str, pairwise: dict[str, Any]
) -> GradeResult:
    """The result of a decided pairwise comparison: pass only when the output wins."""
    verdict: Literal["pass", "fail"] = "pass" if winner == "output" else "fail"
    result = make_result(rubric, judge, verdict, reason)
    result = result.model_copy(update={"score": PAIRWISE_SCORES[winner]})
    return with_details(result, pairwise=pairwise)


def pairwise_stats(results: Iterable[GradeResult]) -> dict[str, Any]:
    """Win, tie and loss counts and rates of pairwise results (rates over those that were
    decided; errors counted apart), and the position-flip rate: the share of comparisons
    whose answer changed when the order was swapped. A report's results are built from a
    results file's lines unvalidated, so their details are read as written."""
    counts = {"win": 0, "tie": 0, "loss": 0, "errors": 0}
    flips = comparisons = 0
    names = {"output": "win", "tie": "tie", "baseline": "loss"}
    for result in results:
        pairwise = as_written(result.details).get("pairwise")  # a report's: as written
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


def summed_judge(votes: list[GradeResult]) -> JudgeInfo:
    """`details.judge` over every vote: attempts, retries, latency and usage summed; the first
    answered vote's mode; cached when every vote was; corrected when any was."""
    blocks = [vote.details.judge for vote in votes]
    usage = {
        "prompt_tokens": sum(block.usage.prompt_tokens for block in blocks),
        "completion_tokens": sum(block.usage.completion_tokens for block in blocks),
    }
    corrections = [block.correction for block in blocks if block.correction]
    details = judge_details(
        next((block.model for block in blocks if block.model), ""),
        next((block.mode for block in blocks if block.mode), None),
        sum(block.attempts for block in blocks),
        sum(block.latency_ms for block in blocks),
        usage,
        corrections[0] if corrections else None,
        cached=bool(blocks) and all(block.cached for block in blocks),
        retries=sum(block.retries for block in blocks),
        protocol=next((block.protocol for block in blocks if block.protocol), None),
        sampled={key: next((b.get(key) for b in blocks if key in b), None) for key in SAMPLED},
    )
    return details.adding(corrected=any(block.corrected for block in blocks))


def with_winner(result: GradeResult, winner: str | None) -> GradeResult:
    """A pairwise order's result with the judge's answer (A, B or tie) in `details.winner`."""
    return result if winner is None else with_details(result, winner=winner)


def with_details(result: GradeResult, **more: Any) -> GradeResult:
    """`result` with `more` added to its details (a pairwise block, a vote tally, a panel's
    judges, a pairwise order's winner), validated: an unknown key is an error."""
    if not more:
        return result
    return result.model_copy(update={"details": result.details.adding(**more)})

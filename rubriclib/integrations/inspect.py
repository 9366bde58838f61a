"""inspect_ai scorers that judge each sample's output by a rubriclib rubric.

A judge error is raised (`JudgeError`), so inspect records a sample error: it stops the eval
(inspect's default `fail_on_error`) or, when errors are tolerated, leaves the sample unscored
and out of every metric. It is never a CORRECT score.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubriclib.integrations import chosen_judge
from rubriclib.item import field_text
from rubriclib.judging.judge import Judge
from rubriclib.judging.result import GradeResult
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric

if TYPE_CHECKING:
    from inspect_ai.scorer import Scorer, Target
    from inspect_ai.solver import TaskState


class JudgeError(RuntimeError):
    """The judge gave no verdict for a sample (verdict `error`); the message says why."""

    def __init__(self, result: GradeResult) -> None:
        self.result = result
        rubric = result.details["rubric"]
        super().__init__(f"rubriclib {rubric['name']}@{rubric['version']}: {result.reason}")


def rubric_scorer(
    rubric: str | Rubric,
    *,
    judge: Judge | None = None,
    model: str | None = None,
    base_url: str | None = None,
    context_key: str | None = "context",
) -> Scorer:
    """An inspect scorer judging each sample's output by `rubric` (a reference or a Rubric)."""
    resolved = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
    grader = chosen_judge(judge, model, base_url, "rubric_scorer")
    try:
        from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, mean, scorer, stderr
    except ImportError as error:
        raise ImportError(
            "rubric_scorer needs inspect_ai: pip install 'rubriclib[inspect]'"
        ) from error
    one_to_five = resolved.scale == "1-5"
    metrics = [mean(), stderr()] if one_to_five else [accuracy(), stderr()]

    # Decorated here, not at module level: the metrics follow the rubric's scale. The arguments
    # are what inspect records in the log (the endpoint carries no credentials).
    @scorer(metrics=metrics, name="rubric_scorer")  # type: ignore[untyped-decorator]
    def make(rubric: str, model: str, endpoint: str, context_key: str | None) -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            context = state.metadata.get(context_key) if context_key else None
            try:
                context = field_text("context", context)
            except ValueError as error:
                raise ValueError(f"sample metadata[{context_key!r}]: {error}") from None
            output = state.output.completion
            result = await grader.agrade(
                resolved,
                output,
                input=_input_text(state.input),
                context=context,
                reference="\n".join(text for text in target if text) or None,
            )
            if result.verdict == "error":
                raise JudgeError(result)
            raw = result.details.get("raw_score")
            return Score(
                value=raw if one_to_five else CORRECT if result.passed else INCORRECT,
                answer=output,
                explanation=result.reason,
                metadata={"verdict": result.verdict, "score": result.score, **result.details},
            )

        return score

    reference = rubric if isinstance(rubric, str) else f"{rubric.name}@{rubric.version}"
    return make(reference, grader.model, grader.endpoint, context_key)


def _input_text(value: str | list[Any]) -> str:
    """A sample's input as text: chat messages shown as a `role: text` transcript."""
    if isinstance(value, str):
        return value
    return "\n".join(f"{message.role}: {message.text}" for message in value)

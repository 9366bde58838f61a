"""inspect_ai scorers that judge each sample's output by a rubriclib rubric, and inspect's chat
messages (`state.messages`) read into rubriclib's canonical agent run.

A judge error is raised (`JudgeError`), so inspect records a sample error: it stops the eval
(inspect's default `fail_on_error`) or, when errors are tolerated, leaves the sample unscored
and out of every metric. It is never a CORRECT score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rubriclib.integrations import chosen_judge
from rubriclib.item import Transcript, TranscriptError, field_text, read_inspect
from rubriclib.judging import GradeResult, Judge, not_judged
from rubriclib.rubrics import Rubric, load_rubric

if TYPE_CHECKING:
    from inspect_ai.scorer import Scorer, Target
    from inspect_ai.solver import TaskState


class JudgeError(RuntimeError):
    """The judge gave no verdict for a sample (verdict `error`); the message says why."""

    def __init__(self, result: GradeResult) -> None:
        self.result = result
        rubric = result.details.rubric
        super().__init__(f"rubriclib {rubric.name}@{rubric.version}: {result.reason}")


def rubric_scorer(
    rubric: str | Rubric,
    *,
    judge: Judge | None = None,
    model: str | None = None,
    base_url: str | None = None,
    context_key: str | None = "context",
) -> Scorer:
    """An inspect scorer judging each sample's output by `rubric` (a reference or a Rubric).
    A rubric that requires a transcript is also given the sample's whole run, `state.messages`
    (`inspect_transcript`); a run that cannot be read is a judge error, never a score.

    Args:
        rubric: A Rubric, or a reference: a name, a pin or a path (relative to the working
            directory).
        judge: The Judge that scores every sample; None builds one from `model`, `base_url`
            and rubriclib's settings.
        model: The judge model, when no `judge` is given.
        base_url: The judge endpoint, when no `judge` is given.
        context_key: The sample metadata key holding the source context (None: no context).
    """
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
            fields = _sample_fields(state, target, context_key)
            run = _sample_run(state, resolved, grader.model)
            output = state.output.completion
            result = await grader.agrade(resolved, output, **fields, transcript=run)
            if result.verdict == "error":
                raise JudgeError(result)
            raw = result.details.raw_score
            return Score(
                value=raw if one_to_five else CORRECT if result.passed else INCORRECT,
                answer=output,
                explanation=result.reason,
                metadata={
                    "verdict": result.verdict,
                    "score": result.score,
                    **result.details.model_dump(),
                },
            )

        return score

    reference = rubric if isinstance(rubric, str) else f"{rubric.name}@{rubric.version}"
    return make(reference, grader.model, grader.endpoint, context_key)


def _sample_fields(
    state: TaskState, target: Target, context_key: str | None
) -> dict[str, str | None]:
    """A sample's fields as the rubric's: its input, `metadata[context_key]` as the context and
    the target's texts (one a line) as the reference."""
    context = state.metadata.get(context_key) if context_key else None
    try:
        context = field_text("context", context)
    except ValueError as error:
        raise ValueError(f"sample metadata[{context_key!r}]: {error}") from None
    return {
        "input": _input_text(state.input),
        "context": context,
        "reference": "\n".join(text for text in target if text) or None,
    }


def _sample_run(state: TaskState, rubric: Rubric, model: str) -> Transcript | None:
    """The sample's whole run (`state.messages`) when `rubric` requires a transcript, else
    None; a run that cannot be read is a JudgeError, never a score."""
    if "transcript" not in rubric.requires:
        return None
    try:
        return inspect_transcript(state.messages)
    except TranscriptError as error:
        cause = f"the sample's run cannot be read: {error}"
        raise JudgeError(not_judged(rubric, model, cause)) from None


def _input_text(value: str | list[Any]) -> str:
    """A sample's input as text: chat messages shown as a `role: text` transcript."""
    if isinstance(value, str):
        return value
    return "\n".join(f"{message.role}: {message.text}" for message in value)


def inspect_transcript(messages: Sequence[Any], field: str = "state.messages") -> Transcript:
    """inspect_ai's chat messages (ChatMessageSystem / User / Assistant / Tool, as in
    `state.messages`) as a Transcript of shape `inspect`, read as a log holds them
    (`read_inspect`, which says what is kept and what is a TranscriptError naming `field[N]`)."""
    return read_inspect([message.model_dump(mode="json") for message in messages], field)

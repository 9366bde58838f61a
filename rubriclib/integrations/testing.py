"""Assertions for test suites: judge an output with a rubric; anything but a pass fails the test.

Light to import: the judge (and the openai SDK) loads on the first assertion.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rubriclib.judging import GradeResult, Judge
    from rubriclib.rubrics import Rubric

JudgeProvider = Callable[[], "Judge"]

_default_judge: JudgeProvider | None = None


class RubricFailed(AssertionError):
    """The judge gave the output a failing verdict; `result` is its GradeResult."""

    def __init__(self, message: str, result: GradeResult) -> None:
        super().__init__(message)
        self.result = result


class RubricJudgeError(Exception):
    """The judge gave no verdict (verdict `error`): the test fails, it never passes."""

    def __init__(self, message: str, result: GradeResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def make_judge(
    model: str | None = None, base_url: str | None = None, *, no_cache: bool = False
) -> Judge:
    """A Judge by rubriclib's precedence (argument, environment, project config, default),
    keeping verdicts in the verdict cache as `rubriclib judge` does unless `no_cache`."""
    from rubriclib.config import cache_setting
    from rubriclib.judging import Judge

    return Judge(model=model, base_url=base_url, cache=cache_setting(no_cache))


def set_default_judge(provider: JudgeProvider | None) -> JudgeProvider | None:
    """Make `provider` give `assert_rubric`'s judge when none is passed; return the old one."""
    global _default_judge
    previous, _default_judge = _default_judge, provider
    return previous


def assert_rubric(
    rubric: Rubric | str | os.PathLike[str],
    output: str | None = None,
    *,
    judge: Judge | None = None,
    input: str | None = None,  # noqa: A002
    context: str | None = None,
    reference: str | None = None,
    transcript: Any = None,
    label: str | None = None,
) -> GradeResult:
    """Judge `output` (or the agent run `transcript`, its last assistant text the output
    unless given); return the result on a pass (with `label`, on that label), raise
    RubricFailed on a fail (another label) and RubricJudgeError (not an AssertionError) when
    the judge gave no verdict.

    Args:
        rubric: A Rubric, a reference (a name, a pin or a path) or a path.
        output: The candidate output.
        judge: The Judge to ask; None takes the pytest session's (`rubric_judge`), else one
            from rubriclib's settings.
        input: The task input.
        context: The source context.
        reference: A reference answer.
        transcript: An agent run, judged whole: a list of messages in OpenAI chat,
            Anthropic, Responses or LangChain shape.
        label: On a labels rubric, the label the output must get (a failing label too);
            None: the output must pass.

    Raises:
        ValueError: `label` on a rubric without labels, or not one of its labels (before
            any request).
    """
    __tracebackhide__ = True
    from rubriclib.rubrics import load_rubric

    if not isinstance(rubric, str) and isinstance(rubric, os.PathLike):
        rubric = os.fspath(rubric)
    resolved = load_rubric(rubric) if isinstance(rubric, str) else rubric
    if label is not None and label not in (resolved.labels or {}):
        offered = f"one of {', '.join(resolved.labels)}" if resolved.labels else "a labels rubric"
        raise ValueError(f"assert_rubric: label {label!r} needs {offered}")
    if judge is None:
        judge = (_default_judge or make_judge)()
    fields = {"input": input, "context": context, "reference": reference}
    result = judge.grade(resolved, output, **fields, transcript=transcript)
    if result.verdict == "error":
        raise RubricJudgeError(describe(resolved, result, judge, output), result)
    if (result.details.label != label) if label is not None else result.verdict == "fail":
        raise RubricFailed(describe(resolved, result, judge, output, label), result)
    return result


def describe(
    rubric: Rubric,
    result: GradeResult,
    judge: Judge,
    output: str | None = None,
    expected_label: str | None = None,
) -> str:
    """The verdict as a test report shows it: name@version, verdict (label, score), reason,
    judge; the label that was expected, if one was."""
    label = f"{rubric.name}@{rubric.version}"
    if result.verdict == "error":
        head = f"{label} gave no verdict (judge error): {result.reason}"
    else:
        given = f" (label {result.details.label})" if result.details.label else ""
        head = (
            f"{label} gave verdict {result.verdict}{given}{score_text(rubric, result)}: "
            f"{result.reason}"
        )
    if expected_label is not None:
        head += f"\n  expected label: {expected_label}"
    lines = [head, f"  judge: {judge.model} at {judge.endpoint}"]
    if output is not None:
        shown = output if len(output) <= 300 else output[:300] + "..."
        lines.append(f"  output: {shown!r}")
    if run := result.details.transcript:
        lines.append(f"  agent run: {run.messages} messages ({run.shape})")
    return "\n".join(lines)


def score_text(rubric: Rubric, result: GradeResult) -> str:
    """` (score 3/5, passes at 4)` for a scored verdict of a 1-5 rubric, else nothing."""
    raw = result.details.raw_score
    if raw is None:
        return ""
    return f" (score {raw}/5, passes at {rubric.pass_threshold})"

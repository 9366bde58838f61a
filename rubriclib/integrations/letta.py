"""letta-evals graders that judge each sample's submission by a rubriclib rubric.

letta-evals loads a custom grader as `file.py:function` (a `kind: tool` grader, which takes no
other settings), so the rubric is named in that reference: `rubriclib integrations letta`
writes `rubriclib_grader.py`, whose every attribute is a grader for the rubric it names
(`function: rubriclib_grader.py:groundedness@^1`). A judge error is score 0 with
`metadata.error` set, which letta-evals records as the sample's grading error (no reward),
never a pass. `rubric_grader` makes one grader in Python, with judge settings of its own.
"""

# No `from __future__ import annotations`: letta's @grader compares the return annotation
# with its GradeResult class, so the annotations must be evaluated.
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rubriclib.evals import rubric_fields
from rubriclib.integrations import chosen_judge
from rubriclib.item import field_text
from rubriclib.judging import GradeResult as Result
from rubriclib.judging import Judge, not_judged
from rubriclib.rubrics import Rubric, load_rubric

SHIM_FILENAME = "rubriclib_grader.py"
SHIM_TEXT = '''\
"""letta-evals graders judged by rubriclib rubrics; written by `rubriclib integrations letta`.

In suite.yaml, name the rubric after the colon (a name, a pin, or a path beside this file):

    graders:
      grounded:
        kind: tool
        function: rubriclib_grader.py:groundedness@^1

The logic lives in rubriclib.integrations.letta: upgrading rubriclib needs no new copy.
"""

from rubriclib.integrations.letta import graders_for as _graders_for

__getattr__ = _graders_for(__file__)
'''
USAGE = """\
Add one `kind: tool` grader per rubric to suite.yaml, the rubric named after the colon:

  graders:
    grounded:
      kind: tool
      function: {path}:groundedness@^1    # a name, a pin, or a path beside the file

The judge reads OPENAI_API_KEY, OPENAI_BASE_URL and RUBRICLIB_MODEL (or rubriclib.toml). A
sample's input, ground_truth and rubric_vars.context are the rubric's input, reference and
context."""


def rubric_grader(
    rubric: str | Rubric,
    *,
    judge: Judge | None = None,
    model: str | None = None,
    base_url: str | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> Callable[..., Any]:
    """A letta-evals grader (async, `@grader`) judging each submission by `rubric`.

    Args:
        rubric: A Rubric, or a reference: a name, a pin or a path (relative to `base_dir`).
        judge: The Judge that grades every submission; None builds one from `model`,
            `base_url` and rubriclib's settings.
        model: The judge model, when no `judge` is given.
        base_url: The judge endpoint, when no `judge` is given.
        base_dir: The folder a relative path in `rubric` is resolved against.
    """
    chosen = chosen_judge(judge, model, base_url, "rubric_grader")
    resolved = rubric if isinstance(rubric, Rubric) else load_rubric(rubric, base_dir=base_dir)
    try:
        from letta_evals.decorators import grader
        from letta_evals.models import GradeResult, Sample
    except ImportError as error:
        raise ImportError(
            "rubric_grader needs letta-evals: pip install 'rubriclib[letta]'"
        ) from error

    async def grade(sample: Sample, submission: str) -> GradeResult:
        try:
            fields = sample_fields(sample)
        except ValueError as error:
            result = not_judged(resolved, chosen.model, str(error))
        else:
            result = await chosen.agrade(resolved, submission, **fields)
        return GradeResult(**to_letta(result))

    label = rubric if isinstance(rubric, str) else f"{resolved.name}@{resolved.version}"
    return grader(grade, name=f"rubriclib:{label}")  # type: ignore[no-any-return]


def graders_for(shim: str) -> Callable[[str], Callable[..., Any]]:
    """The shim's module `__getattr__`: an attribute named by a rubric reference is a grader
    for that rubric (paths resolve beside the shim), sharing one judge from rubriclib's
    settings."""
    base_dir = Path(shim).resolve().parent
    shared = functools.cache(Judge)

    @functools.cache
    def grader_named(ref: str) -> Callable[..., Any]:
        if ref.startswith("_"):  # dunders and private names: no rubric is named so
            raise AttributeError(ref)
        rubric = load_rubric(ref, base_dir=base_dir)  # a bad reference first, then the judge
        return rubric_grader(rubric, judge=shared())

    return grader_named


def sample_fields(sample: Any) -> dict[str, str | None]:
    """A letta Sample's fields as the rubric's: input (several turns as a transcript),
    ground_truth as the reference, rubric_vars.context as the context."""
    try:
        context = field_text("context", (sample.rubric_vars or {}).get("context"))
    except ValueError as error:
        raise ValueError(f"rubric_vars.context: {error}") from None
    return rubric_fields(sample.input, sample.ground_truth, context)


def to_letta(result: Result) -> dict[str, Any]:
    """A rubriclib result as letta's GradeResult fields; an error scores 0 with
    `metadata.error`, which letta-evals reports as a grading error."""
    metadata = {"verdict": result.verdict, **result.details.model_dump()}
    if result.verdict != "error":
        return {"score": result.score, "rationale": result.reason, "metadata": metadata}
    rubric = result.details.rubric
    label = f"rubriclib {rubric.name}@{rubric.version}"
    return {
        "score": 0.0,
        "rationale": f"Error during grading: {label}: {result.reason}",
        "metadata": {**metadata, "error": f"{label}: {result.reason}"},
    }

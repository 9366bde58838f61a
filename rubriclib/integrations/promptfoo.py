"""A promptfoo Python assertion that judges each output by a rubriclib rubric.

promptfoo loads Python assertions by file path: `rubriclib integrations promptfoo` writes a
small file that imports `get_assert` from here, so upgrading rubriclib needs no new copy. The
assertion's `config` names the rubric and the judge; the test's vars give the fields. A judge
error is `pass: false` with the error in the reason (promptfoo has no error state for an
assertion: it counts as a failed one, never a pass). The rubric identity is in `metadata`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, ValidationError

from rubriclib.errors import InputError, JudgeConfigError
from rubriclib.item import field_text
from rubriclib.judging import GradeResult, Judge, not_judged
from rubriclib.rubrics import load_rubric
from rubriclib.settings import JudgeSettings, Respelling
from rubriclib.validation import problems_from_validation

logger = logging.getLogger("rubriclib")

SHIM_FILENAME = "rubriclib_assert.py"
SHIM_TEXT = '''\
"""promptfoo assertion judged by a rubriclib rubric; written by `rubriclib integrations promptfoo`.

    assert:
      - type: python
        value: file://rubriclib_assert.py
        config: {rubric: groundedness@^1}

The logic lives in rubriclib.integrations.promptfoo: upgrading rubriclib needs no new copy.
"""

try:
    from rubriclib.integrations.promptfoo import get_assert
except ImportError as error:  # promptfoo ran a Python without rubriclib
    raise ImportError(
        "rubriclib is not installed for this Python: set PROMPTFOO_PYTHON to one that has it"
    ) from error

__all__ = ["get_assert"]
'''
USAGE = """\
Add it to a promptfoo config (paths are relative to the config file):

  defaultTest:
    assert:
      - type: python
        value: file://{path}
        config:
          rubric: groundedness@^1     # a name, a pin or a path
          # model: gpt-4o-mini        # the judge; else RUBRICLIB_MODEL or rubriclib.toml

Run promptfoo with a Python that has rubriclib: PROMPTFOO_PYTHON=/path/to/venv/bin/python.
The judge reads OPENAI_API_KEY and OPENAI_BASE_URL; the test's vars give `context` and
`reference` (or `ground_truth`), the prompt gives `input` (remap with config.vars)."""

FieldName = Literal["input", "context", "reference"]
DEFAULT_VARS: dict[str, tuple[str, ...]] = {
    "context": ("context",),
    "reference": ("reference", "ground_truth"),
}


class AssertConfig(JudgeSettings):
    """The assertion's `config`: the rubric, the judge's settings, and the vars holding each
    field."""

    rubric: str = Field(min_length=1)
    vars: dict[FieldName, str] = Field(default_factory=dict)


def get_assert(output: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """promptfoo's entry point: judge `output`, returning {pass, score, reason, metadata}.

    Args:
        output: The output promptfoo's provider gave.
        context: promptfoo's assertion context: `config` (`rubric`, and the judge settings of
            an eval file's `judge:`), `vars` and `prompt`.
    """
    config = _config(context.get("config") or {})
    if isinstance(config, str):
        return _problem(config)
    try:
        rubric = load_rubric(config.rubric)
        judge = Judge.from_settings(config, named_by="config.api_key_env")
    except (InputError, JudgeConfigError) as error:
        return _problem(" ".join(str(error).split("\n")))
    try:
        fields = _fields(context, config)
    except ValueError as error:
        return to_promptfoo(not_judged(rubric, judge.model, str(error)))
    return to_promptfoo(judge.grade(rubric, _output_text(output), **fields))


def _config(given: Any) -> AssertConfig | str:
    """The assertion's `config` read, or every problem with it: a judge setting spelt the old
    way (`checklist`) is read as its new spelling (`mode`), warned of on the rubriclib
    logger."""
    respelling = Respelling("promptfoo assertion")
    respelt = respelling.settings(given, "config")
    for deprecation in respelling.deprecations:
        logger.warning("%s", deprecation)
    problems = list(respelling.refusals)
    try:
        config = AssertConfig.model_validate(respelt)
    except ValidationError as error:
        found = problems_from_validation(error, respelling.label, AssertConfig, "config")
        problems += [respelling.as_written(problem) for problem in found]
    if problems:
        return "; ".join(str(problem) for problem in problems)
    return config


def to_promptfoo(result: GradeResult) -> dict[str, Any]:
    """A rubriclib result as promptfoo's GradingResult; an error never passes."""
    rubric, judge = result.details.rubric, result.details.judge
    usage = judge.usage
    graded: dict[str, Any] = {
        "pass": result.passed,
        "score": result.score or 0.0,
        "reason": result.reason,
        "metadata": {"verdict": result.verdict, **result.details.model_dump()},
        "tokensUsed": {
            "prompt": usage.prompt_tokens,
            "completion": usage.completion_tokens,
            "total": usage.prompt_tokens + usage.completion_tokens,
            "cached": 0,
            "numRequests": judge.attempts,
        },
    }
    if result.verdict == "error":
        label = f"{rubric.name}@{rubric.version}"
        graded.update(
            {"pass": False, "reason": f"rubriclib judge error ({label}): {result.reason}"}
        )
    return graded


def _fields(context: Mapping[str, Any], config: AssertConfig) -> dict[str, str | None]:
    """input, context and reference from the test's vars (or those config.vars names; input is
    the prompt by default); a ValueError naming a var that cannot be text."""
    test_vars = context.get("vars") or {}
    fields: dict[str, str | None] = {}
    for field in ("input", "context", "reference"):
        names = (config.vars[field],) if field in config.vars else DEFAULT_VARS.get(field, ())
        name = next((name for name in names if test_vars.get(name) is not None), None)
        if name is None:  # input defaults to the prompt; a var named in config.vars does not
            prompt = field == "input" and field not in config.vars
            fields[field] = _prompt_text(context.get("prompt")) if prompt else None
            continue
        try:
            fields[field] = field_text(field, test_vars[name])
        except ValueError as error:
            raise ValueError(f"vars.{name}: {error}") from None
    return fields


def _prompt_text(prompt: Any) -> str | None:
    """The rendered prompt; a chat prompt (JSON messages) as a `role: content` transcript."""
    if not isinstance(prompt, str):
        return None
    if prompt.lstrip().startswith("["):
        try:
            return field_text("input", json.loads(prompt))
        except ValueError:  # not JSON, or not chat messages: the text as it is
            pass
    return prompt


def _output_text(output: Any) -> str:
    """The provider's output as text: structured output as JSON."""
    if isinstance(output, str):
        return output
    return "" if output is None else json.dumps(output, ensure_ascii=False)


def _problem(message: str) -> dict[str, Any]:
    """A failed assertion for a problem found before judging (bad config, unknown rubric)."""
    return {
        "pass": False,
        "score": 0.0,
        "reason": f"rubriclib: {message}",
        "metadata": {"verdict": "error"},
    }

"""rubriclib's own eval file shape."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from rubriclib.errors import Problem
from rubriclib.evals.datasets import Dataset
from rubriclib.evals.formats.model import Condition, Eval, GraderEntry, PanelSettings, Strict
from rubriclib.evals.formats.old_keys import respelt
from rubriclib.evals.formats.sources import (
    dataset_problems,
    dataset_source,
    duplicate_graders,
    grader_rubric,
    warn_at_lines,
)
from rubriclib.judging import Rule, TargetSettings, checklist_refused
from rubriclib.rubrics import Rubric
from rubriclib.settings import (
    AnswerMode,
    Evidence,
    JudgeSettings,
    Mode,
    Protocol,
    usable_base_url,
)
from rubriclib.validation import problems_from_validation, valid_parts

RUN_SETTINGS = ("concurrency", "requests_per_minute", "max_prompt_tokens")
"""`judge:` keys of the whole run, not of one judge."""


class _JudgeSpec(JudgeSettings):
    """An eval file's `judge:`: a judge's settings and the run's (RUN_SETTINGS)."""

    concurrency: int | None = Field(default=None, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    max_prompt_tokens: int | None = Field(default=None, ge=1, strict=True)


class _GraderSpec(Strict):
    name: str = Field(min_length=1)
    rubric: str | None = None
    prompt: str | None = None
    judge: _JudgeSpec | None = None
    votes: int | None = Field(default=None, ge=1, strict=True)
    mode: Mode | None = None
    """`checklist`: judge by the rubric's checklist, each item asked on its own."""
    answers: AnswerMode | None = None
    """How the checklist items are answered; `probability` and `one-call` imply checklist
    mode."""
    protocol: Protocol | None = None
    """How this grader's judge gives its verdict: `tools` or `json`."""
    evidence: Evidence | None = None
    """How this grader's judge is shown a row's agent run: `whole`, `explore` or `auto`."""
    judges: list[_JudgeSpec] | None = None
    aggregate: Rule | None = None

    @model_validator(mode="after")
    def _one_source(self) -> _GraderSpec:
        if (self.rubric is None) == (self.prompt is None):
            raise ValueError("give exactly one of rubric (a name or path) and prompt")
        return self


class _ConditionSpec(Strict):
    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    min_mean_score: float | None = Field(default=None, ge=0, le=1)


class _TargetSpec(Strict):
    model: str = Field(min_length=1)
    base_url: str | None = None
    system: str | None = None
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1)
    api_key_env: str | None = None
    timeout: float = Field(default=120.0, gt=0)
    _base_url = field_validator("base_url")(usable_base_url)


class EvalSpec(Strict):
    name: str = Field(min_length=1)
    description: str | None = None
    dataset: str | None = None
    rows: list[Any] | None = None
    judge: _JudgeSpec | None = None
    graders: list[_GraderSpec] = Field(min_length=1)
    gate: dict[str, _ConditionSpec] = Field(default_factory=dict)
    target: _TargetSpec | None = None


def read(
    data: dict[str, Any], path: Path, override: Dataset | None, problems: list[Problem]
) -> Eval | None:
    """Our shape; a file that fails validation is still checked as far as its valid parts go
    (each grader's rubric, the gate's names, the dataset's rows), so every problem comes at
    once. A judge setting spelt the old way is read as its new spelling, warned of at its
    line (`old_keys`)."""
    respelt_data, respelling = respelt(data, str(path))
    warn_at_lines(respelling.deprecations, path)
    found: list[Problem] = list(respelling.refusals)
    read_eval = _read(respelt_data, path, override, found)
    problems += [respelling.as_written(problem) for problem in found]
    return None if found else read_eval


def _read(
    data: dict[str, Any], path: Path, override: Dataset | None, problems: list[Problem]
) -> Eval | None:
    """`read`, its judge settings spelt the new way."""
    label = str(path)
    try:
        spec = EvalSpec.model_validate(data)
    except ValidationError as error:
        problems += problems_from_validation(error, label, EvalSpec)
        spec = valid_parts(EvalSpec, data)
    found = {problem.field for problem in problems}
    graders = _graders(spec, path, problems)
    names = [g.name for g in spec.graders or []]
    problems += [p for p in duplicate_graders(names, label) if p.field not in found]
    gate = _gate(spec.gate or {}, names, label, problems)
    source = None
    if not found & {"dataset", "rows"}:
        source = dataset_source(spec.dataset, spec.rows, path, override, problems)
    target = TargetSettings(**spec.target.model_dump()) if spec.target else None
    if target is not None and source is not None:
        source = replace(source, needs_output=False)
    if problems and source is not None:
        problems += dataset_problems(source)
    if problems or source is None:
        return None
    judge = spec.judge or _JudgeSpec()
    return Eval(
        spec.name,
        path,
        "rubriclib",
        source,
        graders,
        gate,
        description=spec.description,
        concurrency=judge.concurrency,
        requests_per_minute=judge.requests_per_minute,
        max_prompt_tokens=judge.max_prompt_tokens,
        target=target,
    )


def _graders(spec: EvalSpec, path: Path, problems: list[Problem]) -> list[GraderEntry]:
    """Each grader whose rubric reads, with its settings (the eval's `judge:` under the
    grader's own) and its panel, checked."""
    label = str(path)
    defaults = spec.judge.judge_settings() if spec.judge else JudgeSettings()
    graders = []
    for index, grader in enumerate(spec.graders or []):
        settings = defaults.merge(
            grader.judge,
            votes=grader.votes,
            mode=grader.mode,
            answers=grader.answers,
            protocol=grader.protocol,
            evidence=grader.evidence,
        )
        panel = _panel(grader, settings, label, problems, index)
        if grader.rubric is None and grader.prompt is None:
            continue  # reported by validation
        rubric = grader_rubric(grader.rubric, grader.prompt, grader.name, path, problems, index)
        if rubric is None:
            continue
        if settings.asks_checklist:
            problems += _checklist_refusals(grader, settings, rubric, label, index)
        graders.append(GraderEntry(grader.name, rubric, settings, panel))
    return graders


def _checklist_refusals(
    grader: _GraderSpec, settings: JudgeSettings, rubric: Rubric, label: str, index: int
) -> list[Problem]:
    """Why a grader's rubric cannot be judged in the checklist mode it asks for, named at
    the key that asked: checklist mode's refusal at `mode` (else `answers`, which implies
    it), one-call's at `answers`."""
    answers = settings.answers or "tool"
    if (refused := checklist_refused(rubric)) is not None:
        key = "mode" if settings.mode == "checklist" else "answers"
    elif (refused := checklist_refused(rubric, answers)) is not None:
        key = "answers"
    else:
        return []
    return [Problem(label, _setting_key(grader, key, index), refused)]


def _setting_key(grader: _GraderSpec, key: str, index: int) -> str:
    """Where a grader's judge setting `key` was set: on the grader, in its own `judge:`, or
    in the eval's `judge:`."""
    if getattr(grader, key) is not None:
        return f"graders[{index}].{key}"
    if grader.judge is not None and getattr(grader.judge, key) is not None:
        return f"graders[{index}].judge.{key}"
    return f"judge.{key}"


def _gate(
    gate: dict[str, _ConditionSpec], names: list[str], label: str, problems: list[Problem]
) -> list[Condition]:
    """The gate's conditions, each naming a grader of this eval."""
    conditions = []
    for name, condition in gate.items():
        if name not in names:
            problems.append(Problem(label, f"gate.{name}", "names no grader of this eval"))
        if condition.min_pass_rate is not None:
            conditions.append(Condition(name, "pass_rate", ">=", condition.min_pass_rate))
        if condition.min_mean_score is not None:
            conditions.append(Condition(name, "mean_score", ">=", condition.min_mean_score))
    return conditions


def _panel(
    grader: _GraderSpec,
    defaults: JudgeSettings,
    label: str,
    problems: list[Problem],
    index: int,
) -> PanelSettings | None:
    """A grader's `judges:` panel (each member its settings over `defaults`), checked."""
    at = f"graders[{index}]"
    if grader.judges is None:
        if grader.aggregate is not None:
            problems.append(
                Problem(label, f"{at}.aggregate", "applies only to a panel: list its judges:")
            )
        return None
    if grader.judge is not None:
        problems.append(
            Problem(label, f"{at}.judge", "give judge (one judge) or judges (a panel), not both")
        )
    if not grader.judges:
        problems.append(
            Problem(label, f"{at}.judges", "is empty: list at least one judge ({model: ...})")
        )
    members: list[JudgeSettings] = []
    for place, member in enumerate(grader.judges):
        for key in RUN_SETTINGS:
            if getattr(member, key) is not None:
                problems.append(
                    Problem(
                        label,
                        f"{at}.judges[{place}].{key}",
                        "is a setting of the whole run: set it in the eval's judge:",
                    )
                )
        settings = defaults.merge(member)
        if settings in members:
            first = members.index(settings)
            problems.append(
                Problem(
                    label,
                    f"{at}.judges[{place}]",
                    f"is the same judge as judges[{first}]; a panel needs different judges "
                    "(votes: asks one judge several times)",
                )
            )
        members.append(settings)
    return PanelSettings(tuple(members), grader.aggregate or "majority")

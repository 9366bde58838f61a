"""waza's eval.yaml: its prompt graders, at the eval's level and in its tasks, are judged.

waza's own code is the spec (microsoft/waza): internal/models/spec.go (EvalSpec, Config,
GraderConfig: the keys of eval.yaml; waza's runner ignores any other, with a logged warning since
`warnUnknownYAMLFields`, silently before under a plain `yaml.Unmarshal`, so here it is a warning
too), internal/models/grader_params.go (PromptGraderParameters: a prompt grader's `config`,
decoded with KnownFields so any other key is an error), internal/models/testcase.go (a task file
and its ValidatorInline graders, decoded with KnownFields) and internal/graders/prompt_grader.go
(the judge answers through set_waza_grade_pass / _fail).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubriclib.errors import InputError, Problem
from rubriclib.evals.datasets import Dataset
from rubriclib.evals.formats.model import Eval, GraderEntry
from rubriclib.evals.formats.sources import dataset_source, duplicate_graders, warn_at_lines
from rubriclib.evals.formats.waza_rubric import is_waza_rubric_path, load_waza_rubric, unknown_keys
from rubriclib.evals.formats.waza_tasks import Task, read_tasks
from rubriclib.rubrics import Rubric, load_rubric, rubric_from_prompt
from rubriclib.settings import JudgeSettings

SPEC_KEYS = (
    "name",
    "description",
    "skill",
    "version",
    "config",
    "hooks",
    "inputs",
    "tasks_from",
    "range",
    "graders",
    "metrics",
    "tasks",
    "baseline",
)
CONFIG_KEYS = (
    "trials_per_task",
    "timeout_seconds",
    "parallel",
    "workers",
    "fail_fast",
    "executor",
    "model",
    "skill_directories",
    "required_skills",
    "mcp_servers",
    "max_attempts",
    "group_by",
    "judge_model",
)
GRADER_KEYS = ("type", "name", "script", "rubric", "model", "weight", "config")
"""An eval-level grader (GraderConfig); a task's graders (ValidatorInline) have TASK_GRADER_KEYS."""
TASK_GRADER_KEYS = ("name", "type", "assertions", "rubric", "weight", "config")
PROMPT_KEYS = (
    "prompt",
    "rubric",
    "model",
    "continue_session",
    "mode",
    "reasoning_effort",
    "response_format",
)
"""A prompt grader's config. `continue_session` and `mode` steer waza's agent session, which is
not run here; `response_format` is no PromptGraderParameters field, but waza's example YAML
rubrics tell authors to write `response_format: json` (see `_response_format`)."""


@dataclass(frozen=True)
class Place:
    """Where a grader is written: the file problems name, the field prefix, the task."""

    label: str
    at: str
    task: str | None = None


def read(
    data: dict[str, Any], path: Path, override: Dataset | None, problems: list[Problem]
) -> Eval | None:
    """waza's eval.yaml: prompt graders are judged, other grader types are listed as not run;
    waza's tasks run an agent, so the outputs come from `--dataset` (recorded outputs)."""
    label = str(path)
    ignored = unknown_keys(data, SPEC_KEYS, label, "")
    settings = data.get("config") or {}
    if not isinstance(settings, dict):
        problems.append(Problem(label, "config", "must be a mapping"))
        settings = {}
    ignored += unknown_keys(settings, CONFIG_KEYS, label, "config")
    judge_model = settings.get("judge_model")
    skipped: list[str] = []
    graders: list[GraderEntry] = []
    raw_graders = data.get("graders") or []
    if not isinstance(raw_graders, list):
        problems.append(Problem(label, "graders", "must be a list of graders"))
        raw_graders = []
    for index, raw in enumerate(raw_graders):
        place = Place(label, f"graders[{index}]")
        if isinstance(raw, dict):
            ignored += unknown_keys(raw, GRADER_KEYS, label, place.at)
        graders += _prompt_grader(raw, place, path, judge_model, problems, skipped)
    warn_at_lines(ignored, path, " (ignored, as waza's runner ignores it)")
    problems += duplicate_graders([g.name for g in graders], label)
    for task in read_tasks(data.get("tasks"), path, problems, skipped):
        graders += _task_graders(task, path, judge_model, skipped)
    if not graders and not problems:
        problems.append(
            Problem(label, "graders", "has no prompt grader to run (here or in a task's graders)")
        )
    source = dataset_source(None, None, path, override, problems, hint=" (waza: --dataset FILE)")
    if problems or source is None:
        return None
    name = str(data.get("name") or path.stem)
    return Eval(name, path, "waza", source, graders, [], data.get("description"), skipped)


def _task_graders(
    task: Task, path: Path, judge_model: Any, skipped: list[str]
) -> list[GraderEntry]:
    """A task's prompt graders, each judging only that task's rows; its problems (an unknown
    key too: waza reads a task file strictly), located in the task's own file, go to the task."""
    graders = []
    for index, raw in enumerate(task.graders):
        place = Place(task.label, f"{task.at}graders[{index}]", task.id)
        if isinstance(raw, dict):
            task.problems += unknown_keys(raw, TASK_GRADER_KEYS, place.label, place.at)
        graders += _prompt_grader(raw, place, path, judge_model, task.problems, skipped)
    task.report()
    return graders


def _prompt_grader(
    raw: Any,
    place: Place,
    eval_path: Path,
    judge_model: Any,
    problems: list[Problem],
    skipped: list[str],
) -> list[GraderEntry]:
    """The grader `raw` describes, if it is a prompt grader (waza's LLM judge)."""
    where = place.at
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        problems.append(Problem(place.label, where, "must be a mapping with a name"))
        return []
    in_task = place.task is not None
    kind = raw.get("type") or ("code" if in_task else None)  # waza's runner: a task's default
    shown = f"{place.label}: {where}" if in_task else where
    if kind != "prompt":
        skipped.append(f"{shown} {raw['name']}: type {kind!r} is not a judge")
        return []
    config = raw.get("config") or {}
    if not isinstance(config, dict):
        problems.append(Problem(place.label, f"{where}.config", "must be a mapping"))
        return []
    problems += unknown_keys(config, PROMPT_KEYS, place.label, f"{where}.config")
    if "response_format" in config:
        _response_format(
            config["response_format"], place, f"{shown} {raw['name']}", problems, skipped
        )
    if "reasoning_effort" in config:
        skipped.append(f"{shown} {raw['name']}: reasoning_effort has no effect on this judge")
    if "rubric" in raw and "rubric" in config:
        problems.append(
            Problem(place.label, f"{where}.rubric", "give rubric once, not also in config")
        )
        return []
    ref = config.get("rubric", raw.get("rubric"))
    if (ref is None) == ("prompt" not in config):
        problems.append(
            Problem(place.label, f"{where}.config", "needs exactly one of rubric, prompt")
        )
        return []
    rubric = _rubric(ref, config.get("prompt"), raw["name"], place, eval_path, problems)
    if rubric is None:
        return []
    model = config.get("model") or raw.get("model") or judge_model
    name = f"{place.task}/{raw['name']}" if in_task else raw["name"]
    return [GraderEntry(name, rubric, JudgeSettings(model=model), task=place.task)]


def _rubric(
    ref: Any, prompt: Any, name: str, place: Place, eval_path: Path, problems: list[Problem]
) -> Rubric | None:
    """A grader's rubric: waza's YAML rubric, a rubric reference, or an inline prompt. Paths
    are resolved beside eval.yaml, for task files too (waza resolves them from one place)."""
    where = place.at
    if prompt is not None:
        if not isinstance(prompt, str) or not prompt.strip():
            problems.append(Problem(place.label, f"{where}.config.prompt", "must be text"))
            return None
        return rubric_from_prompt(prompt, name, f"prompt:{place.label}#{where}", Path(place.label))
    if not isinstance(ref, str) or not ref.strip():
        problems.append(Problem(place.label, f"{where}.rubric", "must be a rubric name or path"))
        return None
    if is_waza_rubric_path(ref):
        return load_waza_rubric((eval_path.parent / ref.strip()).absolute(), problems)
    try:
        return load_rubric(ref, base_dir=eval_path.parent)
    except InputError as error:
        problems += [Problem(place.label, f"{where}.rubric", str(p)) for p in error.problems]
        return None


def _response_format(
    value: Any, place: Place, shown: str, problems: list[Problem], skipped: list[str]
) -> None:
    """`response_format: json` asks for a JSON verdict in the judge's text. waza's prompt grader
    never reads one (its verdict is the set_waza_grade_pass / _fail tool calls; the text is kept
    as details.response), and rubriclib's verdict is a tool call too: json is accepted and
    changes nothing. Any other value asks for a verdict neither reads, so it is refused."""
    if value == "json":
        skipped.append(f"{shown}: response_format json has no effect (the verdict is a tool call)")
        return
    problems.append(
        Problem(
            place.label,
            f"{place.at}.config.response_format",
            f"{value!r} cannot be honoured: the judge gives its verdict through a tool call, as "
            "in waza's prompt grader; only json (which that call already is) is accepted",
        )
    )

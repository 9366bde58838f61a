"""Eval files: rubriclib's own shape, waza's `eval.yaml` and letta-evals' `suite.yaml`, each
read into one `Eval`: a dataset, graders (a rubric and judge settings), gate conditions.

Every problem of a file is reported at once, naming the file, the line and the field.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rubriclib.datasets import Dataset
from rubriclib.errors import EvalError, InputError, Problem
from rubriclib.registry import load_rubric, rubric_from_prompt
from rubriclib.result import Rule
from rubriclib.rubric import Rubric, decode_text, load_yaml, problems_from_validation, read_limited
from rubriclib.target import TargetSettings

Metric = Literal["pass_rate", "mean_score"]
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}


@dataclass(frozen=True)
class JudgeSettings:
    """How a grader's judge is reached and sampled; None means the Judge's own default."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    max_retries: int | None = None
    votes: int | None = None
    """Independent judgments per row, combined by majority (on 1-5, the median score)."""

    def overridden_by(self, other: JudgeSettings) -> JudgeSettings:
        """These settings with every field `other` sets replaced."""
        changes = {k: v for k, v in vars(other).items() if v is not None}
        return replace(self, **changes)


@dataclass(frozen=True)
class PanelSettings:
    """A grader's judge panel: each member's settings (the eval's `judge:` defaults and the
    grader's votes under its own) and the rule that combines their verdicts."""

    judges: tuple[JudgeSettings, ...]
    aggregate: Rule = "majority"

    def plan_lines(
        self, judgments: int, votes: int | None = None, pairwise: bool = False
    ) -> list[str]:
        """For `--dry-run`: the rule, then each member with the requests it would get for
        `judgments` judgments (`votes`, from the command line, wins over each member's)."""
        lines = [
            f"{self.aggregate} of {len(self.judges)} judges (--model does not replace a "
            "panel's judges; --votes applies to each)"
        ]
        for member in self.judges:
            asked = votes or member.votes or 1
            requests = judgments * asked * (2 if pairwise else 1)
            where = f" at {_without_credentials(member.base_url)}" if member.base_url else ""
            each = f" x {asked} votes" if asked > 1 else ""
            each += " x 2 orders" if pairwise else ""
            bound = "up to " if asked > 1 else ""
            lines.append(
                f"{member.model or '(default judge model)'}{where}: {judgments} judgment(s)"
                f"{each} = {bound}{requests} request(s)"
            )
        return lines


@dataclass(frozen=True)
class Grader:
    """One grader of an eval: a name, the rubric it judges by, and its judge settings (or,
    with `panel`, its judge panel; `judge` then holds the defaults the members started from)."""

    name: str
    rubric: Rubric
    judge: JudgeSettings
    panel: PanelSettings | None = None


@dataclass(frozen=True)
class Condition:
    """One gate condition: a grader's metric compared with a value."""

    grader: str
    metric: Metric
    op: str
    value: float

    def __str__(self) -> str:
        return f"{self.grader} {self.metric} {self.op} {self.value:g}"

    def holds(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.value)


@dataclass(frozen=True)
class Eval:
    """An eval file, read: what to judge, by which graders, and when the run passes."""

    name: str
    path: Path
    shape: Literal["rubriclib", "waza", "letta"]
    dataset: Dataset
    graders: list[Grader]
    gate: list[Condition]
    description: str | None = None
    skipped: list[str] = field(default_factory=list)
    """One line per part of the file that is not run (graders of other kinds, agent tasks)."""
    concurrency: int | None = None
    requests_per_minute: float | None = None
    limit: int | None = None
    reward: str | None = None
    """letta-evals' `reward.metric_key`: the grader whose mean score is the run's reward."""
    target: TargetSettings | None = None
    """The model that writes each row's output from its input, when the rows have none."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _JudgeSpec(_Strict):
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)
    votes: int | None = Field(default=None, ge=1, strict=True)
    concurrency: int | None = Field(default=None, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)

    def settings(self) -> JudgeSettings:
        return JudgeSettings(**self.model_dump(exclude={"concurrency", "requests_per_minute"}))


class _GraderSpec(_Strict):
    name: str = Field(min_length=1)
    rubric: str | None = None
    prompt: str | None = None
    judge: _JudgeSpec | None = None
    votes: int | None = Field(default=None, ge=1, strict=True)
    judges: list[_JudgeSpec] | None = None
    aggregate: Rule | None = None

    @model_validator(mode="after")
    def _one_source(self) -> _GraderSpec:
        if (self.rubric is None) == (self.prompt is None):
            raise ValueError("give exactly one of rubric (a name or path) and prompt")
        return self


class _ConditionSpec(_Strict):
    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    min_mean_score: float | None = Field(default=None, ge=0, le=1)


class _TargetSpec(_Strict):
    model: str = Field(min_length=1)
    base_url: str | None = None
    system: str | None = None
    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1)
    api_key_env: str | None = None
    timeout: float = Field(default=120.0, gt=0)


class _EvalSpec(_Strict):
    name: str = Field(min_length=1)
    description: str | None = None
    dataset: str | None = None
    rows: list[Any] | None = None
    judge: _JudgeSpec | None = None
    graders: list[_GraderSpec] = Field(min_length=1)
    gate: dict[str, _ConditionSpec] = Field(default_factory=dict)
    target: _TargetSpec | None = None


def load_eval(path: str | Path, dataset: str | Path | None = None) -> Eval:
    """Read an eval file in any of the three shapes; `dataset` (a file) replaces its rows.
    Raises EvalError (or RubricError for a bad rubric) with every problem found."""
    eval_path = Path(path).expanduser().absolute()
    label = str(eval_path)
    text = decode_text(read_limited(eval_path, label), label)
    data = load_yaml(text, label, "eval file", EvalError)
    if not isinstance(data, dict):
        raise EvalError.single(label, "eval file", "must be a mapping of keys")
    lines = _LineFinder(text, label)
    override = Path(dataset).expanduser().absolute() if dataset is not None else None
    reader = _shape_of(data)
    problems: list[Problem] = []
    try:
        result = reader(data, eval_path, override, problems)
    except ValidationError as error:
        model = _LettaSuite if reader is _read_letta else _EvalSpec
        problems += problems_from_validation(error, label, model)
        result = None
    if problems or result is None:
        raise EvalError([lines.locate(problem) for problem in problems])
    return result


def _shape_of(data: dict[str, Any]) -> Callable[..., Eval | None]:
    graders = data.get("graders")
    target = data.get("target")
    if (
        isinstance(graders, dict)
        or "reward" in data
        or (isinstance(target, dict) and "kind" in target)
    ):
        return _read_letta
    if isinstance(graders, list) and any(isinstance(g, dict) and "type" in g for g in graders):
        return _read_waza
    if "tasks" in data or "skill" in data:
        return _read_waza
    return _read_ours


def _read_ours(
    data: dict[str, Any], path: Path, override: Path | None, problems: list[Problem]
) -> Eval | None:
    spec = _EvalSpec.model_validate(data)
    label = str(path)
    graders = []
    defaults = spec.judge.settings() if spec.judge else JudgeSettings()
    for index, grader in enumerate(spec.graders):
        settings = defaults.overridden_by(grader.judge.settings()) if grader.judge else defaults
        settings = settings.overridden_by(JudgeSettings(votes=grader.votes))
        panel = _panel(grader, settings, label, problems, index)
        rubric = _rubric(grader.rubric, grader.prompt, grader.name, path, problems, index)
        if rubric is not None:
            graders.append(Grader(grader.name, rubric, settings, panel))
    problems += _duplicate_graders([g.name for g in spec.graders], label)
    gate = []
    for name, condition in spec.gate.items():
        if name not in {g.name for g in spec.graders}:
            problems.append(Problem(label, f"gate.{name}", "names no grader of this eval"))
        if condition.min_pass_rate is not None:
            gate.append(Condition(name, "pass_rate", ">=", condition.min_pass_rate))
        if condition.min_mean_score is not None:
            gate.append(Condition(name, "mean_score", ">=", condition.min_mean_score))
    source = _dataset(spec.dataset, spec.rows, path, override, problems)
    if problems or source is None:
        return None
    target = TargetSettings(**spec.target.model_dump()) if spec.target else None
    if target is not None:
        source = replace(source, needs_output=False)
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
        target=target,
    )


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
        for key in ("concurrency", "requests_per_minute"):
            if getattr(member, key) is not None:
                problems.append(
                    Problem(
                        label,
                        f"{at}.judges[{place}].{key}",
                        "is a setting of the whole run: set it in the eval's judge:",
                    )
                )
        settings = defaults.overridden_by(member.settings())
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


def _rubric(
    ref: str | None,
    prompt: str | None,
    name: str,
    path: Path,
    problems: list[Problem],
    index: int | str,
    where: str = "graders",
) -> Rubric | None:
    """The grader's rubric: a reference resolved beside the eval file, or an inline prompt."""
    at = f"{where}[{index}]" if isinstance(index, int) else f"{where}.{index}"
    if prompt is not None:
        return rubric_from_prompt(prompt, name, f"prompt:{path}#{at}", path)
    assert ref is not None
    try:
        return load_rubric(ref, base_dir=path.parent)
    except InputError as error:
        problems += [Problem(str(path), f"{at}.rubric", str(p)) for p in error.problems]
        return None


def _dataset(
    dataset: str | None,
    rows: list[Any] | None,
    path: Path,
    override: Path | None,
    problems: list[Problem],
    hint: str = "",
) -> Dataset | None:
    if override is not None:
        return Dataset(path=override)
    if dataset is not None and rows is not None:
        problems.append(Problem(str(path), "dataset", "give dataset or rows, not both"))
    elif dataset is not None:
        return Dataset(path=(path.parent / dataset).absolute())
    elif rows is not None:
        return Dataset(inline=rows, label=f"{path}: rows")
    else:
        problems.append(Problem(str(path), "dataset", f"is required: a file, or rows{hint}"))
    return None


def _duplicate_graders(names: list[str], label: str) -> list[Problem]:
    seen: set[str] = set()
    problems = []
    for index, name in enumerate(names):
        if name in seen:
            problems.append(Problem(label, f"graders[{index}].name", f"duplicate {name!r}"))
        seen.add(name)
    return problems


def _read_waza(
    data: dict[str, Any], path: Path, override: Path | None, problems: list[Problem]
) -> Eval | None:
    """waza's eval.yaml: `prompt` graders are judged, other grader types are skipped; its
    tasks run an agent, so the outputs come from `--dataset` (recorded outputs)."""
    label = str(path)
    graders, skipped = [], []
    if data.get("tasks"):
        skipped.append("tasks: waza runs agents; rubriclib judges recorded outputs (--dataset)")
    for index, raw in enumerate(data.get("graders") or []):
        where = f"graders[{index}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            problems.append(Problem(label, where, "must be a mapping with a name"))
            continue
        if raw.get("type") != "prompt":
            skipped.append(f"{where} {raw['name']}: type {raw.get('type')!r} is not a judge")
            continue
        config = raw.get("config") or {}
        if not isinstance(config, dict):
            problems.append(Problem(label, f"{where}.config", "must be a mapping"))
            continue
        # continue_session and mode steer waza's agent session, which is not run here
        known = {"rubric", "prompt", "model", "continue_session", "mode"}
        unknown = sorted(set(config) - known)
        unknown += sorted(set(raw) - {"type", "name", "config"})
        for key in unknown:
            problems.append(Problem(label, f"{where}.config.{key}", "is not supported"))
        if ("rubric" in config) == ("prompt" in config):
            problems.append(
                Problem(label, f"{where}.config", "needs exactly one of rubric, prompt")
            )
            continue
        rubric = _rubric(
            config.get("rubric"), config.get("prompt"), raw["name"], path, problems, index
        )
        if rubric is not None:
            graders.append(Grader(raw["name"], rubric, JudgeSettings(model=config.get("model"))))
    if not graders and not problems:
        problems.append(Problem(label, "graders", "has no prompt grader to run"))
    source = _dataset(None, None, path, override, problems, hint=" (waza: --dataset FILE)")
    if problems or source is None:
        return None
    name = str(data.get("name") or path.stem)
    return Eval(name, path, "waza", source, graders, [], data.get("description"), skipped)


class _LettaGrader(_Strict):
    kind: str
    display_name: str | None = None
    prompt: str | None = None
    prompt_path: str | None = None
    model: str | None = None
    temperature: float | None = Field(default=None, ge=0)
    provider: Literal["openai"] | None = None
    max_retries: int | None = Field(default=None, ge=0)
    timeout: float | None = Field(default=None, gt=0)
    extractor: Literal["last_assistant"] | None = None
    function: str | None = None


class _LettaGate(_Strict):
    metric_key: str
    metric: Literal["avg_score", "accuracy"] = "avg_score"
    op: Literal["gte", "gt", "lte", "lt", "eq"] = "gte"
    value: float


class _LettaReward(_Strict):
    kind: Literal["metric"]
    metric_key: str


class _LettaSuite(_Strict):
    name: str
    description: str | None = None
    dataset: str | None = None
    target: dict[str, Any] | None = None
    graders: dict[str, _LettaGrader] = Field(min_length=1)
    gate: _LettaGate | None = None
    reward: _LettaReward | None = None
    max_samples: int | None = Field(default=None, ge=1)
    max_concurrent: int | None = Field(default=None, ge=1)
    num_runs: Literal[1] | None = None
    output: str | None = None
    cleanup: bool | None = None


_LETTA_OPS = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<", "eq": "=="}


def _read_letta(
    data: dict[str, Any], path: Path, override: Path | None, problems: list[Problem]
) -> Eval | None:
    """letta-evals' suite.yaml: `rubric` / `model_judge` graders are judged (a `.md` prompt_path
    as a rubric, anything else as an unversioned prompt), and so are `tool` graders that name a
    rubric through rubriclib's letta grader file; other `tool` graders are skipped."""
    suite = _LettaSuite.model_validate(data)
    label = str(path)
    graders, skipped = [], []
    if suite.target is not None:
        skipped.append("target: letta runs an agent; rubriclib judges the dataset's outputs")
    for name, spec in suite.graders.items():
        where = f"graders.{name}"
        shim = _rubriclib_shim(spec, path)
        if spec.kind not in ("rubric", "model_judge") and shim is None:
            skipped.append(f"{where}: kind {spec.kind!r} is not a judge")
            continue
        if shim is not None:  # `function: rubriclib_grader.py:REF`, our own letta grader
            rubric = _rubric(shim[1], None, name, shim[0], problems, name, "graders")
        else:
            rubric = _letta_rubric(spec, name, path, problems)
        if rubric is not None:
            settings = JudgeSettings(
                model=spec.model,
                temperature=spec.temperature,
                max_retries=spec.max_retries,
                timeout=spec.timeout,
            )
            graders.append(Grader(name, rubric, settings))
    gate = []
    if suite.gate is not None:
        if suite.gate.metric_key not in suite.graders:
            problems.append(Problem(label, "gate.metric_key", "names no grader of this suite"))
        metric: Metric = "pass_rate" if suite.gate.metric == "accuracy" else "mean_score"
        value = suite.gate.value
        if metric == "pass_rate" and value > 1:  # letta writes accuracy as a percentage too
            value /= 100
        op = _LETTA_OPS[suite.gate.op]
        gate.append(Condition(suite.gate.metric_key, metric, op, value))
    if suite.reward is not None and suite.reward.metric_key not in suite.graders:
        problems.append(Problem(label, "reward.metric_key", "names no grader of this suite"))
    source = _dataset(suite.dataset, None, path, override, problems)
    if problems or source is None:
        return None
    return Eval(
        suite.name,
        path,
        "letta",
        source,
        graders,
        gate,
        suite.description,
        skipped,
        concurrency=suite.max_concurrent,
        limit=suite.max_samples,
        reward=suite.reward.metric_key if suite.reward else None,
    )


def _rubriclib_shim(spec: _LettaGrader, path: Path) -> tuple[Path, str] | None:
    """(the shim file, the rubric reference) of a `kind: tool` grader whose function is
    `FILE.py:REF` in the file `rubriclib integrations letta` writes; None for any other."""
    if spec.kind != "tool" or spec.function is None or ".py:" not in spec.function:
        return None
    file, _, reference = spec.function.partition(".py:")
    shim = (path.parent / f"{file}.py").absolute()
    try:
        text = shim.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return (shim, reference) if "rubriclib.integrations.letta import graders_for" in text else None


def _letta_rubric(
    spec: _LettaGrader, name: str, path: Path, problems: list[Problem]
) -> Rubric | None:
    label, where = str(path), f"graders.{name}"
    if (spec.prompt is None) == (spec.prompt_path is None):
        problems.append(Problem(label, where, "needs exactly one of prompt, prompt_path"))
        return None
    if spec.prompt is not None:
        return _rubric(None, spec.prompt, name, path, problems, name, "graders")
    prompt_file = (path.parent / str(spec.prompt_path)).absolute()
    if prompt_file.suffix == ".md":
        return _rubric(str(prompt_file), None, name, path, problems, name, "graders")
    try:
        text = decode_text(read_limited(prompt_file, str(prompt_file)), str(prompt_file))
    except InputError as error:
        problems += [Problem(label, f"{where}.prompt_path", str(p)) for p in error.problems]
        return None
    return rubric_from_prompt(text, name, f"prompt:{prompt_file}", prompt_file)


def _without_credentials(url: str) -> str:
    """A URL as scheme://host[:port]/path, for showing: no user, password or query string."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else url


class _LineFinder:
    """Adds the line of the field a problem names (`graders[1].rubric`) to its source."""

    def __init__(self, text: str, label: str) -> None:
        self.label = label
        try:
            self.root: yaml.Node | None = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            self.root = None

    def locate(self, problem: Problem) -> Problem:
        line = self._line(problem.field) if problem.source == self.label else None
        if line is None:
            return problem
        return Problem(f"{problem.source}:{line}", problem.field, problem.message)

    def _line(self, dotted: str) -> int | None:
        node, line = self.root, None
        for part in dotted.replace("[", ".[").split("."):
            if node is None or not part:
                continue
            child: yaml.Node | None = None
            if part.startswith("[") and isinstance(node, yaml.SequenceNode):
                index = int(part.strip("[]"))
                child = node.value[index] if index < len(node.value) else None
            elif isinstance(node, yaml.MappingNode):
                child = next((v for k, v in node.value if k.value == part), None)
            if child is None:
                break
            node, line = child, child.start_mark.line + 1
        return line

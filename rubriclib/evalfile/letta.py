"""letta-evals' suite.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from rubriclib.errors import InputError, Problem
from rubriclib.evalfile.model import Condition, Eval, Grader, JudgeSettings, Metric, Strict
from rubriclib.evalfile.sources import dataset_source, grader_rubric
from rubriclib.registry import rubric_from_prompt
from rubriclib.rubric import Rubric, decode_text, read_limited


class _LettaGrader(Strict):
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


class _LettaGate(Strict):
    metric_key: str
    metric: Literal["avg_score", "accuracy"] = "avg_score"
    op: Literal["gte", "gt", "lte", "lt", "eq"] = "gte"
    value: float


class _LettaReward(Strict):
    kind: Literal["metric"]
    metric_key: str


class LettaSuite(Strict):
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


def read(
    data: dict[str, Any], path: Path, override: Path | None, problems: list[Problem]
) -> Eval | None:
    """letta-evals' suite.yaml: `rubric` / `model_judge` graders are judged (a `.md` prompt_path
    as a rubric, anything else as an unversioned prompt), and so are `tool` graders that name a
    rubric through rubriclib's letta grader file; other `tool` graders are skipped."""
    suite = LettaSuite.model_validate(data)
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
            rubric = grader_rubric(shim[1], None, name, shim[0], problems, name, "graders")
        else:
            rubric = _lettagrader_rubric(spec, name, path, problems)
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
    source = dataset_source(suite.dataset, None, path, override, problems)
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


def _lettagrader_rubric(
    spec: _LettaGrader, name: str, path: Path, problems: list[Problem]
) -> Rubric | None:
    label, where = str(path), f"graders.{name}"
    if (spec.prompt is None) == (spec.prompt_path is None):
        problems.append(Problem(label, where, "needs exactly one of prompt, prompt_path"))
        return None
    if spec.prompt is not None:
        return grader_rubric(None, spec.prompt, name, path, problems, name, "graders")
    prompt_file = (path.parent / str(spec.prompt_path)).absolute()
    if prompt_file.suffix == ".md":
        return grader_rubric(str(prompt_file), None, name, path, problems, name, "graders")
    try:
        text = decode_text(read_limited(prompt_file, str(prompt_file)), str(prompt_file))
    except InputError as error:
        problems += [Problem(label, f"{where}.prompt_path", str(p)) for p in error.problems]
        return None
    return rubric_from_prompt(text, name, f"prompt:{prompt_file}", prompt_file)

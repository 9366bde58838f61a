"""letta-evals' suite.yaml, read as letta-evals 0.26 reads it (`models/specs.py`): every key its
schema accepts is known. Model-judge graders are judged with the prompt letta would send, on
what their extractor takes from a row's recorded messages (`letta.runs`); what only letta can
run (agents, sandboxes, Python graders and extractors, other providers) is listed as not run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from rubriclib.errors import InputError, Problem
from rubriclib.evals.datasets import Dataset
from rubriclib.evals.formats.model import Condition, Eval, GraderEntry, Metric, Strict
from rubriclib.evals.formats.sources import dataset_source, grader_rubric
from rubriclib.evals.letta.extractors import Extractor
from rubriclib.rubrics import Rubric, parse_rubric_text, read_text, rubric_from_prompt
from rubriclib.settings import JudgeSettings

CANNOT_RUN = "a letta setting rubriclib cannot run"


class _LettaGrader(Strict):
    kind: Literal["model_judge", "tool", "rubric"]  # `rubric`: model_judge's older name
    display_name: str | None = None
    extractor: str | None = None
    extractor_config: dict[str, Any] | None = None
    function: str | None = None
    prompt: str | None = None
    prompt_path: str | None = None
    model: str | None = None
    temperature: float | None = Field(default=None, ge=0)
    provider: Literal["openai", "anthropic", "google"] | None = None
    max_retries: int | None = Field(default=None, ge=0)
    timeout: float | None = Field(default=None, gt=0)
    system_prompt: str | None = None


class _LettaGate(Strict):  # letta-evals before `reward`; 0.26 refuses it
    metric_key: str
    metric: Literal["avg_score", "accuracy"] = "avg_score"
    op: Literal["gte", "gt", "lte", "lt", "eq"] = "gte"
    value: float


class _LettaReward(Strict):
    kind: Literal["metric", "custom"]
    metric_key: str | None = None
    function: str | None = None


class LettaSuite(Strict):
    name: str
    description: str | None = None
    dataset: str | None = None
    target: dict[str, Any] | None = None
    graders: dict[str, _LettaGrader] = Field(min_length=1)
    gate: _LettaGate | None = None
    reward: _LettaReward | None = None
    max_samples: int | None = Field(default=None, ge=1)
    sample_tags: list[str] | None = None
    num_runs: int | None = Field(default=None, ge=1)
    max_concurrent: int | None = Field(default=None, ge=1)
    output: str | None = None
    cleanup: bool | None = None
    setup_script: str | None = None
    sandbox: dict[str, Any] | None = None
    dataset_provenance: dict[str, Any] | None = None


_LETTA_OPS = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<", "eq": "=="}
_AGENT_ONLY = {
    "target": "letta runs the agent; rubriclib judges what each row records it did",
    "setup_script": "prepares letta's agents; rubriclib runs no agent",
    "sandbox": "where letta runs each agent; rubriclib runs no agent",
    "sample_tags": "letta-evals 0.26 does not filter by tags either",
    "output": "letta's results folder; rubriclib writes --out",
    "cleanup": "deletes letta's agents; rubriclib creates none",
    "dataset_provenance": "recorded by letta at run time",
}


def read(
    data: dict[str, Any], path: Path, override: Dataset | None, problems: list[Problem]
) -> Eval | None:
    """letta-evals' suite.yaml: model-judge graders are judged with letta's own prompt, and so
    are `tool` graders that name a rubric through rubriclib's letta grader file; the rest is
    listed as not run, with why."""
    suite = LettaSuite.model_validate(data)
    label = str(path)
    skipped = [f"{key}: {why}" for key, why in _AGENT_ONLY.items() if data.get(key) is not None]
    if suite.num_runs is not None and suite.num_runs > 1:
        message = (
            f"{CANNOT_RUN}: {suite.num_runs} runs of the agent; rubriclib judges the one "
            "recorded submission of each row (--votes judges it several times)"
        )
        problems.append(Problem(label, "num_runs", message))
    graders, run = _graders(suite, path, problems, skipped)
    gate = _gate(suite, run, label, problems)
    reward = _reward(suite, run, label, problems, skipped)
    if not graders and not problems:
        problems.append(Problem(label, "graders", "has no grader rubriclib can run (see above)"))
        problems += [Problem(label, "not run", line) for line in skipped]
    source = dataset_source(suite.dataset, None, path, override, problems)
    if problems or source is None:
        return None
    return Eval(
        suite.name,
        path,
        "letta",
        replace(source, letta_base=path.parent),
        graders,
        gate,
        suite.description,
        skipped,
        concurrency=suite.max_concurrent,
        limit=suite.max_samples,
        reward=reward,
    )


def _graders(
    suite: LettaSuite, path: Path, problems: list[Problem], skipped: list[str]
) -> tuple[list[GraderEntry], set[str]]:
    """The graders rubriclib runs, and the names of every grader it would run (those a gate or
    reward may name); each grader not run is listed in `skipped`, with why."""
    graders, run = [], set[str]()
    for name, spec in suite.graders.items():
        why = _not_run(spec, path)
        if why is not None:
            skipped.append(f"graders.{name}: {why}")
            continue
        run.add(name)
        grader = _grader(name, spec, path, problems, skipped)
        if grader is not None:
            graders.append(grader)
    return graders, run


def _grader(
    name: str, spec: _LettaGrader, path: Path, problems: list[Problem], skipped: list[str]
) -> GraderEntry | None:
    """A grader rubriclib runs, judged by its rubric (None when that is a problem) on what its
    extractor takes; a non-default extractor rubriclib does not run is listed in `skipped`."""
    label, where = str(path), f"graders.{name}"
    extractor = Extractor(spec.extractor or "last_assistant", spec.extractor_config or {})
    problems += [Problem(label, f"{where}.{key}", why) for key, why in extractor.problems()]
    shim = _rubriclib_shim(spec, path)
    if shim is not None:  # `function: rubriclib_grader.py:REF`, our own letta grader
        rubric = grader_rubric(shim[1], None, name, shim[0], problems, name, "graders")
    else:
        rubric = _prompt_rubric(spec, name, path, problems)
    if rubric is None:
        return None
    if spec.extractor not in (None, "last_assistant") or spec.extractor_config:
        skipped.append(f"{where}.extractor: {_extractor_note(extractor, rubric)}")
    settings = JudgeSettings(
        model=spec.model,
        temperature=spec.temperature,
        max_retries=spec.max_retries,
        timeout=spec.timeout,
    )
    return GraderEntry(name, rubric, settings, extractor=extractor)


def _gate(suite: LettaSuite, run: set[str], label: str, problems: list[Problem]) -> list[Condition]:
    """letta's gate as a condition: `accuracy` a pass rate (a percentage read as a fraction),
    `avg_score` a mean score."""
    if suite.gate is None:
        return []
    if suite.gate.metric_key not in run:
        problems.append(Problem(label, "gate.metric_key", _unknown(suite.gate.metric_key, suite)))
    metric: Metric = "pass_rate" if suite.gate.metric == "accuracy" else "mean_score"
    value = suite.gate.value
    if metric == "pass_rate" and value > 1:  # letta writes accuracy as a percentage too
        value /= 100
    return [Condition(suite.gate.metric_key, metric, _LETTA_OPS[suite.gate.op], value)]


def _reward(
    suite: LettaSuite, run: set[str], label: str, problems: list[Problem], skipped: list[str]
) -> str | None:
    """The grader whose mean score is the run's reward; a custom reward is listed as not run."""
    if suite.reward is None:
        return None
    if suite.reward.kind == "custom":
        skipped.append(f"reward: {suite.reward.function or 'a custom reward'} is Python letta runs")
        return None
    if suite.reward.metric_key not in run:
        problems.append(
            Problem(label, "reward.metric_key", _unknown(suite.reward.metric_key, suite))
        )
    return suite.reward.metric_key


def _extractor_note(extractor: Extractor, rubric: Rubric) -> str:
    """When a grader's (non-default) extractor is not run, and why."""
    if "transcript" in rubric.requires:
        return (
            f"{extractor.name}: not run, rubric {rubric.name} requires the whole run (requires: "
            "[transcript]) and is given a row's recorded messages"
        )
    why = extractor.why_not_run()
    if why is not None:
        return (
            f"{why}: a row's recorded submission is judged as it is; a row that records "
            "messages is refused"
        )
    return (
        f"{extractor.name} runs on rows' recorded messages, not on a recorded submission "
        "(judged as it is)"
    )


def _not_run(spec: _LettaGrader, path: Path) -> str | None:
    """Why a grader is not run here, or None."""
    if spec.kind == "tool":
        if _rubriclib_shim(spec, path) is not None:
            return None
        return f"kind tool: {spec.function or 'a function'} is Python letta runs"
    if spec.provider not in (None, "openai"):
        return f"provider {spec.provider}: rubriclib judges through OpenAI-compatible endpoints"
    return None


def _unknown(key: str | None, suite: LettaSuite) -> str:
    """Why a gate or reward cannot use the grader it names."""
    if key in suite.graders:
        return f"names grader {key}, which rubriclib does not run (see not run)"
    return "names no grader of this suite"


def _rubriclib_shim(spec: _LettaGrader, path: Path) -> tuple[Path, str] | None:
    """(the shim file, the rubric reference) of a `kind: tool` grader whose function is
    `FILE.py:REF` in the file `rubriclib integrations letta` writes; None for any other."""
    if spec.kind != "tool" or spec.function is None or ".py:" not in spec.function:
        return None
    file, _, reference = spec.function.partition(".py:")
    shim = (path.parent / f"{file}.py").absolute()
    try:
        text = read_text(shim, str(shim))
    except InputError:  # missing, too large, not text: not our grader file
        return None
    return (shim, reference) if "rubriclib.integrations.letta import graders_for" in text else None


def _prompt_rubric(
    spec: _LettaGrader, name: str, path: Path, problems: list[Problem]
) -> Rubric | None:
    """A model judge's prompt as a letta template rubric: the text exactly as letta reads it."""
    label, where = str(path), f"graders.{name}"
    if (spec.prompt is None) == (spec.prompt_path is None):
        problems.append(Problem(label, where, "needs exactly one of prompt, prompt_path"))
        return None
    if spec.prompt is not None:
        text, source, file = spec.prompt, f"prompt:{path}#{where}", path
    else:
        file = (path.parent / str(spec.prompt_path)).resolve()
        try:
            text = read_text(file, str(file))
        except InputError as error:
            problems += [Problem(label, f"{where}.prompt_path", str(p)) for p in error.problems]
            return None
        if (why := _rubriclib_rubric(text, file, spec)) is not None:
            problems.append(Problem(label, f"{where}.prompt_path", why))
            return None
        source = f"prompt:{file}"
    return rubric_from_prompt(
        text, name, source, file, template="letta", system_prompt=spec.system_prompt
    )


def _rubriclib_rubric(text: str, file: Path, spec: _LettaGrader) -> str | None:
    """Why a prompt file that is a rubriclib rubric cannot be a letta prompt, or None."""
    if not text.startswith("---"):
        return None
    try:
        parse_rubric_text(text, file, f"file:{file}", str(file))
    except InputError:
        return None
    return (
        "is a rubriclib rubric: letta-evals would send it whole, frontmatter included, as the "
        "prompt, and never show the judge the submission. Name it through rubriclib's letta "
        f"grader instead: kind: tool, function: rubriclib_grader.py:./{spec.prompt_path}"
    )

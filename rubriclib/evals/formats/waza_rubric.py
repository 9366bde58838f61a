"""waza's YAML rubric files (`config.rubric: rubrics/task_completion.yaml`) read as Rubrics.

The format is the one waza's example rubrics are written in (spboyer/waza-fk
examples/rubrics/*.yaml, spboyer/evals-for-skills examples/rubrics/*.yaml: Azure ML evaluators
adapted for waza's `prompt` grader): `name`, `description`, `version`, `evaluation_criteria`,
`rating_levels`, `chain_of_thought`, `score_type` / `score_normalization`, `input_mapping`,
`output_format` / `output_schema`. waza's own Go loader (microsoft/waza
internal/graders/rubric.go) reads only markdown rubrics; these YAML files were written for the
prompt grader (their README says so) and are read here.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Literal

import yaml

from rubriclib.errors import EvalError, InputError, Problem
from rubriclib.rubrics import SEMVER, Rubric, judged_digest, load_yaml, read_text

RUBRIC_KEYS = (
    "name",
    "description",
    "version",
    "source",
    "score_type",
    "score_normalization",
    "input_mapping",
    "evaluation_criteria",
    "rating_levels",
    "chain_of_thought",
    "output_format",
    "output_schema",
)
"""Every top-level key waza's YAML rubrics use; any other is a typo."""

DEFAULT_PASS_THRESHOLD = 3
"""A 1-5 rubric that names no threshold passes at 3: the default of the Azure ML evaluators
these rubrics are adapted from (azure-ai-evaluation's `threshold=3`)."""


def is_waza_rubric_path(ref: str) -> bool:
    """Whether a `rubric:` reference names a YAML rubric file rather than a markdown one."""
    return ref.strip().lower().endswith((".yaml", ".yml"))


def unknown_keys(
    data: dict[Any, Any], known: tuple[str, ...], label: str, at: str
) -> list[Problem]:
    """A problem for every key of `data` not in `known`, with the closest known key."""
    problems = []
    for key in data:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
        field = f"{at}.{key}" if at else str(key)
        problems.append(Problem(label, field, f"unknown key; {hint}"))
    return problems


def read_mapping(path: Path, what: str, problems: list[Problem]) -> tuple[str, dict[str, Any]]:
    """A waza YAML file that must hold a mapping (`what`: "rubric", "task"): its text and
    data, or ("", {}) with its problems added to `problems`."""
    label = str(path)
    try:
        text = read_text(path, label)
        data = load_yaml(text, label, what, EvalError)
    except InputError as error:
        problems += error.problems
        return "", {}
    if not isinstance(data, dict):
        problems.append(Problem(label, what, f"must be a mapping of keys (a waza {what})"))
        return "", {}
    return text, data


def load_waza_rubric(path: Path, problems: list[Problem]) -> Rubric | None:
    """The Rubric a waza YAML rubric file describes; its problems (file, line, field) are
    added to `problems` instead."""
    label = str(path)
    text, data = read_mapping(path, "rubric", problems)
    if not data:
        return None
    found = unknown_keys(data, RUBRIC_KEYS, label, "")
    for key in ("name", "description", "evaluation_criteria"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            found.append(Problem(label, key, "is required: text"))
    version = _version(data.get("version"), label, found)
    scale, threshold = _scale(data, label, found)
    if found:
        problems += [_with_line(problem, text) for problem in found]
        return None
    body = _body(data)
    name = re.sub(r"[^a-z0-9]+", "-", data["name"].lower()).strip("-") or "rubric"
    return Rubric(
        name=name,
        version=version,
        scale=scale,
        description=" ".join(data["description"].split()),
        pass_threshold=threshold,
        body=body,
        source=f"waza-yaml:{path}",
        path=path,
        digest=judged_digest(scale, threshold, [], body),
    )


def _version(value: Any, label: str, problems: list[Problem]) -> str:
    """waza's `version` as semver ("1.0" is 1.0.0); none is 0.0.0, an unversioned rubric."""
    if value is None:
        return "0.0.0"
    text = str(value).strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        text += ".0" * (2 - text.count("."))
    if isinstance(value, bool) or not SEMVER.fullmatch(text):
        problems.append(Problem(label, "version", f"{value!r} is not a version such as '1.0.0'"))
    return text


def _scale(
    data: dict[str, Any], label: str, problems: list[Problem]
) -> tuple[Literal["pass-fail", "1-5"], int | None]:
    """pass-fail, or 1-5 with its pass threshold when the file is clearly a 1-5 ordinal."""
    normalization = data.get("score_normalization") or {}
    if not isinstance(normalization, dict):
        problems.append(Problem(label, "score_normalization", "must be a mapping"))
        return "pass-fail", None
    field = "score_type" if data.get("score_type") else "score_normalization.type"
    kind = str(data.get("score_type") or normalization.get("type") or "").lower()
    levels = _level_values(data.get("rating_levels"))
    if kind == "binary" or (not kind and levels != {1, 2, 3, 4, 5}):
        return "pass-fail", None
    if kind not in ("ordinal", ""):
        problems.append(Problem(label, field, f"{kind!r} cannot be judged; use binary or ordinal"))
        return "pass-fail", None
    low, high = normalization.get("raw_min", 1), normalization.get("raw_max", 5)
    if (low, high) != (1, 5) or (levels and levels != {1, 2, 3, 4, 5}):
        problems.append(
            Problem(
                label,
                "score_normalization",
                f"an ordinal scale of {low}-{high} cannot be judged: rubriclib's graded scale "
                "is 1-5 (raw_min 1, raw_max 5, rating levels 1 to 5)",
            )
        )
        return "pass-fail", None
    threshold = normalization.get("pass_threshold", normalization.get("threshold"))
    if threshold is None:
        return "1-5", DEFAULT_PASS_THRESHOLD
    if isinstance(threshold, bool) or threshold not in (1, 2, 3, 4, 5):
        problems.append(
            Problem(label, "score_normalization.threshold", "must be a raw score from 1 to 5")
        )
        return "1-5", None
    return "1-5", int(threshold)


def _level_values(levels: Any) -> set[int]:
    """The integer values of `rating_levels` (a list of {value: ...} or a mapping by value)."""
    values = (
        levels
        if isinstance(levels, dict)
        else [level.get("value") for level in levels or [] if isinstance(level, dict)]
    )
    return {int(str(v)) for v in values if str(v).strip().isdigit()}


def _body(data: dict[str, Any]) -> str:
    """What the judge is told: the criteria, the rating levels, the reasoning steps. The
    JSON answer the file describes (`output_format`, `output_schema`) is left out: the
    verdict comes through a tool call, as in waza's prompt grader."""
    parts = [data["evaluation_criteria"].strip()]
    levels = _level_lines(data.get("rating_levels"))
    if levels:
        parts.append("## Rating levels\n\n" + "\n".join(levels))
    steps = data.get("chain_of_thought")
    if isinstance(steps, str) and steps.strip():
        parts.append("## How to reason\n\n" + steps.strip())
    return "\n\n".join(parts)


def _level_lines(levels: Any) -> list[str]:
    entries = (
        [
            {"value": key, **(value if isinstance(value, dict) else {})}
            for key, value in levels.items()
        ]
        if isinstance(levels, dict)
        else [level for level in levels or [] if isinstance(level, dict)]
    )
    lines = []
    for level in entries:
        label = f" ({level['label']})" if level.get("label") else ""
        description = " ".join(str(level.get("description") or "").split())
        lines.append(f"- {level.get('value')}{label}: {description}".rstrip(": "))
        examples = level.get("examples") or ([level["example"]] if level.get("example") else [])
        lines += [f"  Example: {' '.join(str(example).split())}" for example in examples]
    return lines


def _with_line(problem: Problem, text: str) -> Problem:
    """The problem with the line of its top-level key, when the file has that key."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return problem
    key = problem.field.split(".")[0]
    if isinstance(root, yaml.MappingNode):
        for key_node, _ in root.value:
            if key_node.value == key:
                line = key_node.start_mark.line + 1
                return Problem(f"{problem.source}:{line}", problem.field, problem.message)
    return problem

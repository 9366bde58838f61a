"""Eval files: rubriclib's own shape, waza's `eval.yaml` and letta-evals' `suite.yaml`, each
read into one `Eval`: a dataset, graders (a rubric and judge settings), gate conditions.

Every problem of a file is reported at once, naming the file, the line and the field.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from rubriclib.errors import EvalError, Problem
from rubriclib.evalfile import letta, ours, waza
from rubriclib.evalfile.model import (
    Condition,
    Eval,
    Grader,
    JudgeSettings,
    Metric,
    PanelSettings,
)
from rubriclib.rubric import decode_text, load_yaml, problems_from_validation, read_limited

__all__ = [
    "Condition",
    "Eval",
    "Grader",
    "JudgeSettings",
    "Metric",
    "PanelSettings",
    "load_eval",
]

Reader = Callable[[dict[str, Any], Path, Path | None, list[Problem]], Eval | None]


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
    reader, spec = _shape_of(data)
    problems: list[Problem] = []
    try:
        result = reader(data, eval_path, override, problems)
    except ValidationError as error:
        problems += problems_from_validation(error, label, spec)
        result = None
    if problems or result is None:
        raise EvalError([lines.locate(problem) for problem in problems])
    return result


def _shape_of(data: dict[str, Any]) -> tuple[Reader, type[BaseModel]]:
    """The reader of the file's shape and the schema its problems are named against."""
    graders = data.get("graders")
    target = data.get("target")
    if (
        isinstance(graders, dict)
        or "reward" in data
        or (isinstance(target, dict) and "kind" in target)
    ):
        return letta.read, letta.LettaSuite
    if isinstance(graders, list) and any(isinstance(g, dict) and "type" in g for g in graders):
        return waza.read, ours.EvalSpec
    if "tasks" in data or "skill" in data:
        return waza.read, ours.EvalSpec
    return ours.read, ours.EvalSpec


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

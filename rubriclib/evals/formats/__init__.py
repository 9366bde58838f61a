"""Eval files: rubriclib's own shape, waza's `eval.yaml` and letta-evals' `suite.yaml`, each
read into one `Eval`: a dataset, graders (a rubric and judge settings), gate conditions.

Every problem of a file is reported at once, naming the file, the line and the field.
`eval_rubrics` reads a file only for the rubrics its graders use (what `lock` and `check`
scan), so it asks nothing of the rows: no dataset, and none read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from rubriclib.errors import EvalError, Problem
from rubriclib.evals.datasets import Dataset
from rubriclib.evals.formats import letta, ours, waza
from rubriclib.evals.formats.model import (
    Condition,
    Eval,
    GraderEntry,
    Metric,
    PanelSettings,
)
from rubriclib.evals.formats.sources import NOT_READ
from rubriclib.evals.formats.waza_tasks import task_files
from rubriclib.rubrics import Rubric, load_yaml, read_text
from rubriclib.settings import JudgeSettings
from rubriclib.validation import LineFinder, problems_from_validation

__all__ = [
    "Condition",
    "Eval",
    "GraderEntry",
    "JudgeSettings",
    "Metric",
    "PanelSettings",
    "eval_rubrics",
    "load_eval",
    "task_files",
]

Reader = Callable[[dict[str, Any], Path, Dataset | None, list[Problem]], Eval | None]


def load_eval(path: str | Path, dataset: str | Path | None = None) -> Eval:
    """Read an eval file in any of the three shapes; `dataset` (a file) replaces its rows.
    Raises EvalError (or RubricError for a bad rubric) with every problem found."""
    override = Dataset(path=Path(dataset).expanduser().absolute()) if dataset is not None else None
    return _read_eval(path, override)


def eval_rubrics(path: str | Path) -> list[Rubric]:
    """The rubrics an eval file's graders judge by, read as `load_eval` reads them but for the
    rows: the file may name no dataset (one given at run time), and none is read. Raises
    EvalError for every problem of the file itself, a bad rubric reference among them."""
    return [grader.rubric for grader in _read_eval(path, NOT_READ).graders]


def _read_eval(path: str | Path, override: Dataset | None) -> Eval:
    """An eval file read, its rows `override` when given (see `dataset_source`)."""
    eval_path = Path(path).expanduser().absolute()
    label = str(eval_path)
    text = read_text(eval_path, label)
    data = load_yaml(text, label, "eval file", EvalError)
    if not isinstance(data, dict):
        raise EvalError.single(label, "eval file", "must be a mapping of keys")
    lines = LineFinder(text, label)
    reader, spec = _shape_of(data)
    problems: list[Problem] = []
    try:
        result = reader(data, eval_path, override, problems)
    except ValidationError as error:
        problems += problems_from_validation(error, label, spec)
        result = None
    if problems or result is None:
        raise EvalError(lines.in_file_order(problems))
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

"""Where a grader's rubric and an eval's dataset come from, shared by the three shapes."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from rubriclib.errors import InputError, Problem
from rubriclib.evals.datasets import Dataset
from rubriclib.rubrics import Rubric, load_rubric, read_text, rubric_from_prompt
from rubriclib.validation import LineFinder

logger = logging.getLogger("rubriclib")

NOT_READ = Dataset(inline=[], label="rows (not read: the eval file is scanned for its rubrics)")
"""The rows of an eval file only scanned for the rubrics its graders use (`lock`, `check`):
none, so the file needs no dataset, nor its dataset to exist, as only a run reads them."""


def grader_rubric(
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


def dataset_source(
    dataset: str | None,
    rows: list[Any] | None,
    path: Path,
    override: Dataset | None,
    problems: list[Problem],
    hint: str = "",
) -> Dataset | None:
    """The eval's rows: `override` when given (a --dataset file, or NOT_READ), else the file's
    own `dataset` or `rows`, exactly one of which it must give."""
    if override is not None:
        return override
    if dataset is not None and rows is not None:
        problems.append(Problem(str(path), "dataset", "give dataset or rows, not both"))
    elif dataset is not None:
        return Dataset(path=(path.parent / dataset).absolute())
    elif rows is not None:
        return Dataset(inline=rows, label=f"{path}: rows")
    else:
        problems.append(Problem(str(path), "dataset", f"is required: a file, or rows{hint}"))
    return None


def dataset_problems(source: Dataset) -> list[Problem]:
    """Every problem of the rows, for an eval file that has problems of its own, so that all
    come at once (a good file's rows are checked by `evals.setup.check_dataset`)."""
    try:
        return source.check()[0]
    except InputError as error:
        return error.problems


def duplicate_graders(names: list[str], label: str) -> list[Problem]:
    seen: set[str] = set()
    problems = []
    for index, name in enumerate(names):
        if name in seen:
            problems.append(Problem(label, f"graders[{index}].name", f"duplicate {name!r}"))
        seen.add(name)
    return problems


def warn_at_lines(warnings: list[Problem], path: Path, note: str = "") -> None:
    """Each warning about the eval file at `path` logged (on the `rubriclib` logger) naming
    the file, the line and the field, in file order, `note` after each. The file is read again
    for the lines, only when there is something to warn of."""
    if not warnings:
        return
    lines = LineFinder(read_text(path, str(path)), str(path))
    for warning in lines.in_file_order(warnings):
        logger.warning("%s%s", warning, note)

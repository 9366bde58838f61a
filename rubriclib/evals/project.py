"""A project's eval files and the rubrics they use: what `rubriclib lock` and `check` cover."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from rubriclib.errors import InputError
from rubriclib.evals.formats import eval_rubrics, task_files
from rubriclib.rubrics import (
    Rubric,
    load_rubric,
    load_yaml,
    project_root,
    project_rubrics_dir,
    read_text,
)

SKIPPED_FOLDERS = {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__", ".e2e"}
GRADERS_KEY = re.compile(r"^graders\s*:", re.MULTILINE)
"""A top-level `graders:` line: how an eval file that is not valid YAML is still recognised."""


def project_rubrics(refs: list[str] | None = None) -> list[Rubric]:
    """The rubrics a project uses: `refs` when given, else those of its rubrics/ folder and
    every rubric referenced by its eval files (YAML files with `graders`). An eval file is read
    only for its graders' rubrics: it needs no dataset (`eval_rubrics`)."""
    if refs:
        return [load_rubric(ref) for ref in refs]
    found: dict[tuple[str, str], Rubric] = {}
    folder = project_rubrics_dir()
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        rubric = load_rubric(str(path))
        found[(rubric.name, rubric.source)] = rubric
    for eval_file in eval_files(project_root()):
        for rubric in eval_rubrics(eval_file):
            if not rubric.source.startswith("prompt:"):
                found[(rubric.name, rubric.source)] = rubric
    return list(found.values())


def eval_files(root: Path) -> list[Path]:
    """YAML files under `root` (hidden, virtual-env and build folders skipped) whose top level
    has `graders`: the project's eval files, but for the task files a waza eval names (a task
    has graders too, read as part of its eval, their paths resolved beside eval.yaml)."""
    found: dict[Path, Any] = {}
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS and d[0] != ".")
        for name in sorted(names):
            if name.endswith((".yaml", ".yml")):
                path = Path(folder) / name
                is_eval, data = _eval_data(path)
                if is_eval:
                    found[path] = data
    tasks = {
        task.resolve()
        for path, data in found.items()
        if isinstance(data, dict)
        for task in task_files(data.get("tasks"), path)
    }
    return [path for path in found if path.resolve() not in tasks]


def _eval_data(path: Path) -> tuple[bool, Any]:
    """Whether a project YAML file is an eval file (read within reading.py's limits), and its
    data. One that is not valid YAML is, when a line starts with `graders:`, so that reading it
    reports its error."""
    try:
        text = read_text(path, str(path))
    except InputError:  # too large, or not UTF-8: no file a user writes as an eval file
        return False, None
    try:
        data = load_yaml(text, str(path), "file")
    except InputError:
        return GRADERS_KEY.search(text) is not None, None
    return isinstance(data, dict) and "graders" in data, data

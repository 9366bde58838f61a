"""A project's eval files and the rubrics they use: what `rubriclib lock` and `check` cover."""

from __future__ import annotations

import os
from pathlib import Path

from rubriclib.errors import InputError
from rubriclib.evals.formats import load_eval
from rubriclib.rubrics import (
    Rubric,
    load_rubric,
    load_yaml,
    project_root,
    project_rubrics_dir,
    read_text,
)

SKIPPED_FOLDERS = {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__", ".e2e"}


def project_rubrics(refs: list[str] | None = None) -> list[Rubric]:
    """The rubrics a project uses: `refs` when given, else those of its rubrics/ folder and
    every rubric referenced by its eval files (YAML files with `graders`)."""
    if refs:
        return [load_rubric(ref) for ref in refs]
    found: dict[tuple[str, str], Rubric] = {}
    folder = project_rubrics_dir()
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        rubric = load_rubric(str(path))
        found[(rubric.name, rubric.source)] = rubric
    for eval_file in eval_files(project_root()):
        for grader in load_eval(eval_file).graders:
            if not grader.rubric.source.startswith("prompt:"):
                found[(grader.rubric.name, grader.rubric.source)] = grader.rubric
    return list(found.values())


def eval_files(root: Path) -> list[Path]:
    """YAML files under `root` (hidden, virtual-env and build folders skipped) whose top level
    has `graders`: the project's eval files."""
    files = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in SKIPPED_FOLDERS and d[0] != ".")
        for name in sorted(names):
            if name.endswith((".yaml", ".yml")):
                path = Path(folder) / name
                if _has_graders(path):
                    files.append(path)
    return files


def _has_graders(path: Path) -> bool:
    """Whether a project YAML file is an eval file (read within reading.py's limits)."""
    try:
        data = load_yaml(read_text(path, str(path)), str(path), "file")
    except InputError:
        return False
    return isinstance(data, dict) and "graders" in data

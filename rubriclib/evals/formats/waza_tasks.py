"""waza's tasks: task files named by glob patterns beside eval.yaml, or inline task entries.

microsoft/waza internal/models/spec.go (`ResolveTestFiles`: each pattern is joined to the eval's
folder and globbed) and internal/models/testcase.go (the task file's keys, decoded with
KnownFields). A task's graders grade that task's outputs only (spboyer/waza
waza-go/internal/orchestration/runner.go `runValidators`: the eval's graders run for every task,
then each task's own), so a task's prompt graders here judge only the rows of that task.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubriclib.errors import Problem
from rubriclib.evals.formats.waza_rubric import read_mapping, unknown_keys
from rubriclib.validation import LineFinder

TASK_KEYS = (
    "id",
    "name",
    "description",
    "enabled",
    "tags",
    "inputs",
    "prompt",
    "expected",
    "graders",
    "context_dir",
    "skill_directories",
    "timeout_seconds",
)
"""A task's keys (TestCase); `prompt` is the inline shape of waza's docs, inputs.prompt's
shorthand."""


@dataclass
class Task:
    """One waza task: its id (what a row's `task` names), its graders, where its problems go."""

    id: str
    label: str
    """The file its problems name: the task file, or eval.yaml for an inline task."""
    at: str
    """The field prefix of its keys: "" in a task file, `tasks[N].` inline."""
    graders: list[Any]
    sink: list[Problem]
    text: str | None = None
    """A task file's text, to give its problems their lines."""
    problems: list[Problem] = field(default_factory=list)

    def report(self) -> None:
        """Hand this task's problems to the eval's, each with its line in the task file."""
        if self.text is not None and self.problems:
            finder = LineFinder(self.text, self.label)
            self.problems = [finder.locate(problem) for problem in self.problems]
        self.sink += self.problems
        self.problems = []


def read_tasks(value: Any, path: Path, problems: list[Problem], skipped: list[str]) -> list[Task]:
    """The enabled tasks `tasks:` names, files first read and checked."""
    if value is None:
        return []
    label = str(path)
    if not isinstance(value, list):
        problems.append(Problem(label, "tasks", "must be a list of glob patterns or tasks"))
        return []
    tasks: list[Task] = []
    seen_files: set[Path] = set()
    for index, entry in enumerate(value):
        if isinstance(entry, dict):
            tasks += _task(entry, label, f"tasks[{index}].", f"tasks[{index}]", problems, skipped)
        elif isinstance(entry, str) and entry.strip():
            files = _matches(entry, path, f"tasks[{index}]", problems, skipped)
            for file in (f for f in files if f not in seen_files):
                seen_files.add(file)
                tasks += _task_file(file, problems, skipped)
        else:
            problems.append(Problem(label, f"tasks[{index}]", "must be a glob pattern or a task"))
    ids: set[str] = set()
    for task in tasks:
        if task.id in ids:
            problems.append(Problem(task.label, f"{task.at}id", f"duplicate task id {task.id!r}"))
        ids.add(task.id)
    return tasks


def task_files(value: Any, path: Path) -> list[Path]:
    """The task files the glob patterns of `tasks:` in the eval file `path` match, unread."""
    if not isinstance(value, list):
        return []
    patterns = [entry for entry in value if isinstance(entry, str) and entry.strip()]
    return [file for pattern in patterns for file in _matches(pattern, path, "tasks", [], [])]


def _matches(
    pattern: str, path: Path, where: str, problems: list[Problem], skipped: list[str]
) -> list[Path]:
    """The files a pattern matches in eval.yaml's folder (as Go's filepath.Glob: no `**`)."""
    if Path(pattern).is_absolute():
        problems.append(Problem(str(path), where, "must be relative to the eval file's folder"))
        return []
    found = sorted(Path(p) for p in glob.glob(str(path.parent / pattern)) if Path(p).is_file())
    if not found:
        skipped.append(f"{where} {pattern!r}: no task file matches")
    return found


def _task_file(file: Path, problems: list[Problem], skipped: list[str]) -> list[Task]:
    label = str(file)
    text, data = read_mapping(file, "task", problems)
    if not data:
        return []
    return _task(data, label, "", file.stem, problems, skipped, text)


def _task(
    data: dict[str, Any],
    label: str,
    at: str,
    fallback_id: str,
    problems: list[Problem],
    skipped: list[str],
    text: str | None = None,
) -> list[Task]:
    """The task, unless it is disabled; its id is `id`, else `name`, else where it is."""
    task_id = str(data.get("id") or data.get("name") or fallback_id)
    graders = data.get("graders") or []
    task = Task(task_id, label, at, graders if isinstance(graders, list) else [], problems, text)
    task.problems += unknown_keys(data, TASK_KEYS, label, at.rstrip("."))
    if not isinstance(graders, list):
        task.problems.append(Problem(label, f"{at}graders", "must be a list of graders"))
    if data.get("enabled") is False:
        skipped.append(f"{label}: task {task_id}: enabled: false")
        task.graders = []
    if task.problems:
        task.report()
    return [task]

"""The results file of an eval run: one JSON line per row and grader, flushed as each result
comes; the current line of each (the last), and those `--resume` keeps."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rubriclib.files import holds_anything, write_atomically
from rubriclib.judging import Details, GradeResult

if TYPE_CHECKING:
    from rubriclib.evals.datasets import Row


def result_line(row: Row, grader: str, result: GradeResult) -> dict[str, Any]:
    """One line of the results file."""
    return {
        "row": row.id,
        "grader": grader,
        "verdict": result.verdict,
        "result": result.model_dump(mode="json"),
        "metadata": row.item.metadata,
    }


def checklist_answers(details: Details) -> str | None:
    """How a result's checklist items were answered (`one-call` when all in one call, as its
    judge says; `probability` when read from logprobs), None when it is no checklist result."""
    if details.judge.answers is not None:
        return details.judge.answers
    if details.checklist is None:
        return None
    read = any("p_yes" in item for item in details.checklist)
    return "probability" if read else "tool"


def read_resumable(
    path: Path,
    expected: dict[str, tuple[str, str, int, str | None]],
    own_rubrics: dict[tuple[str, str], str] | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    """The current lines of a results file worth keeping (`current_lines`): a verdict (not an
    error) whose result validates, with the (rubric digest, judge model, votes, how its
    checklist was answered) `expected` of its grader now (`own_rubrics`: the digest of a row's
    own rubric, by row and grader). A pair whose current line is not kept is judged again, and
    its new line supersedes that one."""
    own_rubrics = own_rubrics or {}
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    for key, line in current_lines(path).items():
        try:
            details = GradeResult.model_validate(line["result"]).details
            votes = details.votes.asked if details.votes is not None else 1
            identity = (details.rubric.digest, details.judge.model, votes)
        except (ValueError, KeyError, TypeError):  # a ValidationError is a ValueError
            continue  # not a result of ours: judged again
        wanted = expected.get(key[1])
        if wanted is not None and key in own_rubrics:
            wanted = (own_rubrics[key], *wanted[1:])
        judged = (*identity, checklist_answers(details))
        if wanted == judged and line.get("verdict") in ("pass", "fail"):
            kept[key] = line
    return kept


def current_lines(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Each (row, grader) of a results file with its current line: the last line naming it
    (a resumed run appends, so a later line supersedes the earlier ones, which stay in the
    file). A line that is not JSON or names no row and grader is skipped: cut short by a kill,
    or not ours."""
    current: dict[tuple[str, str], dict[str, Any]] = {}
    if not path.exists():
        return current
    with path.open(encoding="utf-8", errors="replace") as handle:
        for text in handle:
            try:
                line = json.loads(text)
                key = (str(line["row"]), str(line["grader"]))
            except (ValueError, KeyError, TypeError):
                continue
            current[key] = line
    return current


LINE_START = b'{"row": '
"""How every line `result_line` gives begins, once written as JSON (`row` first)."""


def cut_short(line: bytes) -> bool:
    """Whether a line that is not JSON was cut short by a kill: it begins as every results line
    does (a resumed run ends it with a newline and goes on after it)."""
    line = line.strip()
    return line.startswith(LINE_START) or (bool(line) and LINE_START.startswith(line))


class ResultsFile:
    """The results JSONL, one line per result, flushed as it is written, so an interrupt leaves
    a valid file. A resumed run appends to what is there (a last line a kill cut short is ended
    first): every line stays. Any other run replaces a file that holds anything, in one step
    and only once its first result is in: a run stopped before then leaves the old file whole."""

    def __init__(self, path: Path, *, resume: bool) -> None:
        self._path = path
        self._handle: TextIO | None = None
        if resume or not holds_anything(path):
            self._handle = _appending(path)

    def write(self, line: dict[str, Any]) -> None:
        text = json.dumps(line) + "\n"
        if self._handle is None:  # the first result replaces the file
            write_atomically(self._path, text)
            self._handle = self._path.open("a", encoding="utf-8")
        else:
            self._handle.write(text)
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()


def _appending(path: Path) -> TextIO:
    """`path` opened to append lines (created when missing), its last line ended first when a
    kill cut it short, so the next line starts on its own."""
    handle = path.open("a", encoding="utf-8")
    if handle.tell():
        with path.open("rb") as reading:
            reading.seek(-1, os.SEEK_END)
            if reading.read(1) != b"\n":
                handle.write("\n")
    return handle

"""The results file of an eval run: one JSON line per row and grader, flushed as each result
comes; how it is read back (`read_results_lines`: the current line of each pair, the last; the
lines superseded, cut short or not ours), for `--resume` (the current lines it keeps) and the
HTML report alike."""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rubriclib.files import holds_anything, write_atomically
from rubriclib.judging import Details, GradeResult

if TYPE_CHECKING:
    from rubriclib.evals.datasets import Row
    from rubriclib.judging import Grader

VERDICTS = ("pass", "fail", "error")


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


JudgeIdentity = tuple[str, str, int, str | None, str]
"""What a result was judged with, beside its row: (rubric digest, judge model, votes, how its
checklist was answered, protocol). A resumed run keeps a result only when this is its grader's
now; a table's `result_key` is made of it."""


def judge_identity(rubric_digest: str, grader: Grader) -> JudgeIdentity:
    """The identity of the results `grader` gives under the rubric of `rubric_digest`."""
    answers, protocol = grader.checklist_answers, grader.protocol
    return (rubric_digest, grader.model, grader.votes, answers, protocol)


def judged_identity(result: GradeResult) -> JudgeIdentity:
    """The identity a result records (a result written before protocols were recorded was
    asked with tools)."""
    details = result.details
    votes = details.votes.asked if details.votes is not None else 1
    protocol = details.judge.protocol or "tools"
    return (details.rubric.digest, details.judge.model, votes, checklist_answers(details), protocol)


def result_key(row: str, identity: JudgeIdentity) -> str:
    """One row's result under one judge identity, as a short stable name (sha256 hex): what a
    table's results carry, so a resumed table judges only the rows without a result."""
    text = json.dumps([row, *identity], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_resumable(
    path: Path,
    expected: dict[str, JudgeIdentity],
    own_rubrics: dict[tuple[str, str], str] | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    """The current lines of a results file worth keeping (`current_lines`): a verdict (not an
    error) whose result validates, with the identity `expected` of its grader now
    (`judge_identity`; `own_rubrics`: the digest of a row's own rubric, by row and grader;
    `auto` takes either protocol). A pair whose current line is not kept is judged again, and
    its new line supersedes that one."""
    own_rubrics = own_rubrics or {}
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    for key, line in current_lines(path).items():
        try:
            judged = judged_identity(GradeResult.model_validate(line["result"]))
        except (ValueError, KeyError, TypeError):  # a ValidationError is a ValueError
            continue  # not a result of ours: judged again
        wanted = expected.get(key[1])
        if wanted is not None and key in own_rubrics:
            wanted = (own_rubrics[key], *wanted[1:])
        if wanted is not None and wanted[4] == "auto":
            wanted = (*wanted[:4], judged[4])
        if wanted == judged and line.get("verdict") in ("pass", "fail"):
            kept[key] = line
    return kept


def current_lines(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Each (row, grader) of a results file with its current line (`read_results_lines`);
    none when the file is missing."""
    return read_results_lines(path).current if path.exists() else {}


@dataclass
class ResultsLines:
    """A results file read through: each (row, grader) with its current line, the last results
    line naming it (a resumed run appends, so a later line supersedes the earlier ones, which
    stay in the file), and what its other lines were. What `--resume` and the HTML report both
    read a results file as."""

    current: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    read: int = 0
    """Results lines read, superseded ones included."""
    cut: list[int] = field(default_factory=list)
    """The numbers of the lines a kill cut short (not JSON; see `cut_short`)."""
    bad: list[tuple[int, str, str]] = field(default_factory=list)
    """(line number, field, what is wrong) of each line that is no results line of ours
    (`what_is_wrong`): it supersedes nothing."""

    @property
    def superseded(self) -> int:
        """Results lines a later line of their row and grader superseded."""
        return self.read - len(self.current)


def read_results_lines(path: Path) -> ResultsLines:
    """A results file's lines, one by one (OSError when it cannot be read). A line that is not
    JSON was cut short by a kill when it begins as a results line does (`cut_short`), or is the
    last and lacks its newline with a line before it; else it is bad, as is any line
    `what_is_wrong` finds fault with."""
    lines = ResultsLines()
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                last = not raw.endswith(b"\n") and bool(lines.read or lines.bad)
                if last or cut_short(raw):
                    lines.cut.append(number)
                else:
                    lines.bad.append((number, "line", _not_json(error)))
                continue
            if (wrong := what_is_wrong(line)) is not None:
                lines.bad.append((number, *wrong))
                continue
            lines.read += 1
            lines.current[str(line["row"]), str(line["grader"])] = line
    return lines


LINE_START = b'{"row": '
"""How every line `result_line` gives begins, once written as JSON (`row` first)."""


def cut_short(line: bytes) -> bool:
    """Whether a line that is not JSON was cut short by a kill: it begins as every results line
    does (a resumed run ends it with a newline and goes on after it)."""
    line = line.strip()
    return line.startswith(LINE_START) or (bool(line) and LINE_START.startswith(line))


def _not_json(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"not JSON: {error.msg}"
    return "not UTF-8 text"


def what_is_wrong(line: Any) -> tuple[str, str] | None:
    """(field, message) for a line that is not a results line of ours, else None: a JSON
    object naming its row and grader, with a verdict and a result holding a reason, a finite
    score if any, and details naming the rubric and the judge's model (what every version's
    lines hold; `--resume` keeps only those whose result also validates)."""
    if not isinstance(line, dict):
        return "line", f"a results line is a JSON object, not {type(line).__name__}"
    for name in ("row", "grader", "verdict", "result"):
        if name not in line:
            return name, "missing: not a line of a rubriclib results file"
    if not isinstance(line["row"], str | int) or not isinstance(line["grader"], str):
        return "row", "row and grader must be text"
    if line["verdict"] not in VERDICTS:
        return "verdict", f"must be pass, fail or error, not {str(line['verdict'])[:40]!r}"
    result = line["result"]
    if not isinstance(result, dict) or not isinstance(result.get("reason"), str):
        return "result.reason", "missing or not text"
    score = result.get("score")
    if score is not None and (not isinstance(score, int | float) or not math.isfinite(score)):
        return "result.score", "must be a number"
    return _details_wrong(result.get("details"))


def _details_wrong(details: Any) -> tuple[str, str] | None:
    """What `what_is_wrong` finds in a result's details."""
    if not isinstance(details, dict):
        return "result.details", "missing or not an object"
    rubric, judge = details.get("rubric"), details.get("judge")
    if not isinstance(rubric, dict) or not all(
        isinstance(rubric.get(key), str) for key in ("name", "version", "digest")
    ):
        return "result.details.rubric", "needs name, version and digest"
    if not isinstance(judge, dict) or not isinstance(judge.get("model"), str):
        return "result.details.judge", "needs the judge's model"
    usage = judge.get("usage")
    if usage is not None and not (
        isinstance(usage, dict)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in usage.values())
    ):
        return "result.details.judge.usage", "must hold whole numbers of tokens"
    return None


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

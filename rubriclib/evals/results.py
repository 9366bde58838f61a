"""The results file of an eval run: one JSON line per row and grader, flushed as each result
comes, and the lines `--resume` keeps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubriclib.files import write_atomically
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
    """The lines of a results file worth keeping: valid JSON, a verdict (not an error), and the
    (rubric digest, judge model, votes, how its checklist was answered) `expected` of their
    grader now
    (`own_rubrics`: the digest of a row's own rubric, by row and grader). First line of a pair
    wins."""
    own_rubrics = own_rubrics or {}
    kept: dict[tuple[str, str], dict[str, Any]] = {}
    if not path.exists():
        return kept
    with path.open(encoding="utf-8", errors="replace") as handle:
        for text in handle:
            try:
                line = json.loads(text)
                details = GradeResult.model_validate(line["result"]).details
                votes = details.votes.asked if details.votes is not None else 1
                judged = (details.rubric.digest, details.judge.model, votes)
                identity = (*judged, checklist_answers(details))
                key = (str(line["row"]), str(line["grader"]))
            except (ValueError, KeyError, TypeError):  # a ValidationError is a ValueError
                continue  # a line cut short by a kill, or not ours: judged again
            wanted = expected.get(key[1])
            if wanted is not None and key in own_rubrics:
                wanted = (own_rubrics[key], *wanted[1:])
            if wanted == identity and line.get("verdict") in ("pass", "fail"):
                kept.setdefault(key, line)
    return kept


class ResultsFile:
    """The results JSONL: the kept lines first (rewritten whole, through a temporary file),
    then one line per result, flushed as it is written, so an interrupt leaves a valid file."""

    def __init__(self, path: Path, kept: list[dict[str, Any]]) -> None:
        write_atomically(path, "".join(json.dumps(line) + "\n" for line in kept))
        self._handle = path.open("a", encoding="utf-8")

    def write(self, line: dict[str, Any]) -> None:
        self._handle.write(json.dumps(line) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()

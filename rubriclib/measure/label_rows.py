"""A calibration's labels file read row by row: each row's human label (pass or fail; a score
1 to 5 on a 1-5 rubric, passing at its threshold; one of the rubric's label names on a labels
rubric, its verdict by the rubric's map) and its tags, or every problem with them, each naming
the row and field (`calibration.load_labels` raises them before any request)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rubriclib.errors import Problem, printable
from rubriclib.evals import MAX_PROBLEMS, Row
from rubriclib.rubrics import Rubric


@dataclass(frozen=True)
class Label:
    """A human's label of one row: pass or fail, and the 1-5 score it came from, if any; on a
    labels rubric, the label's name (`verdict` is the verdict it means)."""

    verdict: str
    score: int | None = None
    name: str | None = None

    @property
    def answer(self) -> str:
        """What agreement compares: the label's name on a labels rubric, else the verdict."""
        return self.name or self.verdict

    def __str__(self) -> str:
        if self.name is not None:
            return f"{self.name} ({self.verdict})"
        return self.verdict if self.score is None else f"score {self.score} ({self.verdict})"


@dataclass(frozen=True)
class LabelledRow:
    """A labels-file row: what is judged, the human label, and the row's tags."""

    row: Row
    label: Label
    tags: tuple[str, ...] = ()


def read_labels(rows: Iterable[Row], rubric: Rubric) -> tuple[list[LabelledRow], list[Problem]]:
    """Every row with its label, and every problem with a label or tags (up to MAX_PROBLEMS)."""
    labelled: list[LabelledRow] = []
    problems: list[Problem] = []
    skipped = 0
    for row in rows:
        found = read_label(row, rubric)
        if isinstance(found, LabelledRow):
            labelled.append(found)
            continue
        room = MAX_PROBLEMS - len(problems)
        problems.extend(found[:room])
        skipped += max(0, len(found) - room)
    if skipped:
        problems.append(Problem("labels", "rows", f"... and {skipped} more problem(s)"))
    return labelled, problems


def read_label(row: Row, rubric: Rubric) -> LabelledRow | list[Problem]:
    """A row's `label` or `score` and `tags` (kept in its metadata), or every problem with them."""
    metadata = row.item.metadata
    if rubric.labels:
        label, problems = _named_label(metadata, row.where, rubric)
    else:
        label, problems = _verdict_label(metadata, row.where, rubric)
    tags = _tags_of(metadata.get("tags"))
    if tags is None:
        problems.append(
            Problem(row.where, "tags", "must be a list of tags or text split by commas")
        )
    if problems or label is None or tags is None:
        return problems
    return LabelledRow(row, label, tags)


def _named_label(
    metadata: dict[str, Any], where: str, rubric: Rubric
) -> tuple[Label | None, list[Problem]]:
    """A labels rubric's row: `label` must be one of its label names (no score)."""
    labels = rubric.labels or {}
    options = ", ".join(labels)
    raw_label, problems = metadata.get("label"), []
    if metadata.get("score") is not None:
        problems.append(
            Problem(where, "score", f"{rubric.name} is a labels rubric: label one of {options}")
        )
    if raw_label is None:
        return None, [*problems, Problem(where, "label", f"is required (one of {options})")]
    name = raw_label.strip() if isinstance(raw_label, str) else None
    if name not in labels:
        problems.append(
            Problem(where, "label", f"must be one of {options}, not {_shown(raw_label)}")
        )
        return None, problems
    return Label(labels[name], name=name), problems


def _verdict_label(
    metadata: dict[str, Any], where: str, rubric: Rubric
) -> tuple[Label | None, list[Problem]]:
    """A pass-fail or 1-5 rubric's row: `label` pass or fail, or (1-5) a `score` 1 to 5."""
    problems: list[Problem] = []
    verdict: str | None = None
    raw_label, raw_score = metadata.get("label"), metadata.get("score")
    if raw_label is not None:
        text = raw_label.strip().lower() if isinstance(raw_label, str) else None
        if text in ("pass", "fail"):
            verdict = text
        else:
            problems.append(
                Problem(where, "label", f"must be pass or fail, not {_shown(raw_label)}")
            )
    score: int | None = None
    if rubric.scale == "pass-fail":
        if raw_score is not None:
            problems.append(
                Problem(where, "score", f"{rubric.name} is a pass-fail rubric: label pass or fail")
            )
        elif raw_label is None:
            problems.append(Problem(where, "label", "is required (pass or fail)"))
    elif raw_score is None:
        problems.append(
            Problem(where, "score", f"is required: {rubric.name} is a 1-5 rubric (a score 1 to 5)")
        )
    elif (score := _score_of(raw_score)) is None:
        problems.append(
            Problem(where, "score", f"must be an integer from 1 to 5, not {_shown(raw_score)}")
        )
    if score is not None and rubric.pass_threshold is not None:
        by_score = "pass" if score >= rubric.pass_threshold else "fail"
        if verdict is not None and verdict != by_score:
            problems.append(
                Problem(
                    where,
                    "label",
                    f"says {verdict}, but score {score} is a {by_score} "
                    f"(the pass threshold is {rubric.pass_threshold})",
                )
            )
        verdict = by_score
    return (Label(verdict, score) if verdict is not None else None), problems


def _score_of(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 5:
        return value
    return None


def _tags_of(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(tag, str) for tag in value):
        return None
    return tuple(dict.fromkeys(tag.strip() for tag in value if tag.strip()))


def _shown(value: Any) -> str:
    return printable(repr(value), 40)

"""Calibration: how well a judge agrees with human labels. The labels file read into labelled
rows, the run that judges them on the engine, and its agreement numbers (the statistics are
`agreement`'s; the reports are `reports.calibration`'s).

A labels row holds the judged fields and a human `label` (pass or fail) or, for a 1-5 rubric,
a `score` from 1 to 5 (it passes at the rubric's threshold); `tags` (a list, or text split at
commas) group rows for the breakdown. Judge errors are counted apart and left out of accuracy,
kappa and the intervals.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubriclib.errors import EvalError, Problem, printable
from rubriclib.evals import MAX_PROBLEMS, Dataset, Row
from rubriclib.judging import GradeResult
from rubriclib.measure.agreement import (
    Interval,
    accuracy,
    base_rate,
    bootstrap_interval,
    cohen_kappa,
    majority_baseline,
    score_agreement,
    why_kappa_undefined,
)
from rubriclib.measure.citations import CitationCounts, count_citations
from rubriclib.rubrics import Rubric

if TYPE_CHECKING:
    from rubriclib.judging import Grader, Interrupted, RunInfo


@dataclass(frozen=True)
class Label:
    """A human's label of one row: pass or fail, and the 1-5 score it came from, if any."""

    verdict: str
    score: int | None = None

    def __str__(self) -> str:
        return self.verdict if self.score is None else f"score {self.score} ({self.verdict})"


@dataclass(frozen=True)
class LabelledRow:
    """A labels-file row: what is judged, the human label, and the row's tags."""

    row: Row
    label: Label
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judged:
    """A labelled row and the judge's result for it."""

    labelled: LabelledRow
    result: GradeResult

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def judge_score(self) -> int | None:
        return self.result.details.raw_score

    @property
    def disagrees(self) -> bool:
        """The judge gave a verdict, and not the human's."""
        return self.verdict != "error" and self.verdict != self.labelled.label.verdict


def load_labels(path: Path, rubric: Rubric) -> list[LabelledRow]:
    """Every row of the labels file with its label; every bad row or label is a problem, all
    raised at once (EvalError) before any request."""
    if rubric.scale == "pairwise":
        raise EvalError.single(
            str(path),
            "rubric",
            f"{rubric.name} is a pairwise rubric; calibrate compares pass/fail or 1-5 labels, "
            "not winners",
        )
    dataset = Dataset(path, label="labels")
    problems, count = dataset.check()
    if problems:
        raise EvalError(problems)
    if not count:
        raise EvalError.single(str(path), "rows", "has no rows to calibrate against")
    rows, problems = read_labels(dataset.rows(), rubric)
    if problems:
        raise EvalError(problems)
    return rows


def golden_rows(rubric: Rubric) -> list[LabelledRow]:
    """The rubric's goldens as labelled rows (`calibrate --fit` without --labels)."""
    from rubriclib.measure.goldens import golden_item
    from rubriclib.rubrics import load_goldens

    return [
        LabelledRow(
            Row(number, f"{rubric.source}: goldens[{number - 1}]", golden_item(golden)),
            Label(str(golden.expected)),
            tuple(golden.tags),
        )
        for number, golden in enumerate(load_goldens(rubric), start=1)
    ]


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
    metadata, where = row.item.metadata, row.where
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
    tags = _tags_of(metadata.get("tags"))
    if tags is None:
        problems.append(Problem(where, "tags", "must be a list of tags or text split by commas"))
    if problems or verdict is None or tags is None:
        return problems
    return LabelledRow(row, Label(verdict, score), tags)


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


def confusion_matrix(judged: Iterable[Judged]) -> dict[str, dict[str, int]]:
    """Counts by human label (rows) and judge verdict (columns; errors in their own column)."""
    matrix = {
        human: {verdict: 0 for verdict in ("pass", "fail", "error")} for human in ("pass", "fail")
    }
    for one in judged:
        matrix[one.labelled.label.verdict][one.verdict] += 1
    return matrix


def _score_pairs(judged: Iterable[Judged]) -> list[tuple[int, int]]:
    """(human score, judge score) of the rows that have both."""
    pairs: list[tuple[int, int]] = []
    for one in judged:
        human, judge = one.labelled.label.score, one.judge_score
        if human is not None and judge is not None:
            pairs.append((human, judge))
    return pairs


@dataclass(frozen=True)
class Agreement:
    """The agreement numbers of some judged rows (judge errors counted, never scored)."""

    verdicts: int
    """Rows with a pass or fail verdict: what accuracy and kappa are computed over."""
    errors: int
    disagreements: int
    accuracy: float | None
    kappa: float | None
    kappa_undefined: str | None
    base_rate: float | None
    majority: tuple[str, float] | None
    confusion: dict[str, dict[str, int]]
    scores: tuple[float, float, int] | None
    accuracy_interval: Interval | None = None
    kappa_interval: Interval | None = None


def agreement(judged: Sequence[Judged], intervals: bool = False) -> Agreement:
    """Every agreement number of these rows; bootstrap intervals too when `intervals`."""
    pairs = [(one.labelled.label.verdict, one.verdict) for one in judged if one.verdict != "error"]
    return Agreement(
        verdicts=len(pairs),
        errors=len(judged) - len(pairs),
        disagreements=sum(one.disagrees for one in judged),
        accuracy=accuracy(pairs),
        kappa=cohen_kappa(pairs),
        kappa_undefined=why_kappa_undefined(pairs),
        base_rate=base_rate(pairs),
        majority=majority_baseline(pairs),
        confusion=confusion_matrix(judged),
        scores=score_agreement(_score_pairs(judged)),
        accuracy_interval=bootstrap_interval(pairs, accuracy) if intervals else None,
        kappa_interval=bootstrap_interval(pairs, cohen_kappa) if intervals else None,
    )


@dataclass(frozen=True)
class Calibration:
    """A calibration run: every labelled row, the rows judged (in file order; fewer when it was
    interrupted) and how the run went."""

    rubric: Rubric
    labels: str
    """The labels file, as named on the command line."""
    rows: list[LabelledRow]
    judged: list[Judged]
    info: RunInfo | None = None

    @cached_property
    def overall(self) -> Agreement:
        return agreement(self.judged, intervals=True)

    @cached_property
    def by_tag(self) -> dict[str, Agreement]:
        """The agreement of the rows carrying each tag, tags in sorted order."""
        tags = sorted({tag for one in self.judged for tag in one.labelled.tags})
        return {tag: agreement([o for o in self.judged if tag in o.labelled.tags]) for tag in tags}

    @property
    def disagreements(self) -> list[Judged]:
        return [one for one in self.judged if one.disagrees]

    @cached_property
    def citations(self) -> CitationCounts:
        """The citations the judge gave over every row judged, the unverified ones named by
        the row's id and where it is."""
        return count_citations(
            ({"id": one.labelled.row.id, "where": one.labelled.row.where}, one.result)
            for one in self.judged
        )

    @property
    def errors(self) -> list[Judged]:
        return [one for one in self.judged if one.verdict == "error"]

    @property
    def interrupted(self) -> str | None:
        return self.info.interrupted if self.info is not None else None

    @property
    def all_errors(self) -> bool:
        """Rows were judged, and every one ended in a judge error."""
        return bool(self.judged) and len(self.errors) == len(self.judged)


async def run_calibration(
    judge: Grader,
    rubric: Rubric,
    rows: list[LabelledRow],
    labels: str,
    *,
    concurrency: int = 8,
    requests_per_minute: float | None = None,
    on_judgment: Callable[[], None] | None = None,
    interrupt: Interrupted | None = None,
) -> Calibration:
    """Judge every labelled row through the engine (a row lacking a field the rubric requires
    is an error result, with no request). When `interrupt` records a signal, the run stops and
    the calibration holds what was judged until then."""
    from rubriclib.judging import Job, judge_all

    jobs = (Job(rubric, labelled.row.item) for labelled in rows)
    results, info = await judge_all(
        judge,
        jobs,
        len(rows),
        concurrency=concurrency,
        requests_per_minute=requests_per_minute,
        on_judgment=on_judgment,
        interrupt=interrupt,
    )
    judged = [Judged(rows[index], results[index]) for index in sorted(results)]
    return Calibration(rubric, labels, rows, judged, info)

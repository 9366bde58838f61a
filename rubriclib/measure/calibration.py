"""Calibration: how well a judge agrees with human labels. The labels file read into labelled
rows, the run that judges them on the engine, and its agreement numbers (the statistics are
`agreement`'s; the reports are `reports.calibration`'s).

A labels row holds the judged fields and a human `label` (pass or fail) or, for a 1-5 rubric,
a `score` from 1 to 5 (it passes at the rubric's threshold), or, for a labels rubric, one of
its label names (`label_rows` reads them); `tags` (a list, or text split at commas) group rows
for the breakdown. On a labels rubric, accuracy, kappa and the confusion matrix are over the
labels, with the pass-fail agreement by the rubric's map beside them. Judge errors are counted
apart and left out of accuracy, kappa and the intervals. Judged over several trials, every
judgment of a row counts once in those numbers, and the flip rates say how steady the judge
was (`agreement.flip_rates`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from rubriclib.errors import EvalError
from rubriclib.evals import Dataset, Row
from rubriclib.judging import GradeResult
from rubriclib.measure.agreement import (
    FlipRates,
    Interval,
    accuracy,
    base_rate,
    bootstrap_interval,
    cohen_kappa,
    flip_rates,
    majority_baseline,
    score_agreement,
    why_kappa_undefined,
)
from rubriclib.measure.citations import CitationCounts, count_citations
from rubriclib.measure.label_rows import Label, LabelledRow, read_labels
from rubriclib.rubrics import Rubric

if TYPE_CHECKING:
    from rubriclib.judging import Grader, Interrupted, Pacing, RunInfo


@dataclass(frozen=True)
class Judged:
    """A labelled row and the judge's result for it (of its `trial`, from 1)."""

    labelled: LabelledRow
    result: GradeResult
    trial: int = 1

    @property
    def verdict(self) -> str:
        return self.result.verdict

    @property
    def judge_score(self) -> int | None:
        return self.result.details.raw_score

    @property
    def answer(self) -> str:
        """What agreement compares with the human's `Label.answer`: the judge's label on a
        labels rubric, else its verdict (`error` either way for a judge error)."""
        if self.labelled.label.name is not None and self.verdict != "error":
            return self.result.details.label or self.verdict
        return self.verdict

    @property
    def disagrees(self) -> bool:
        """The judge gave a verdict, and not the human's (on a labels rubric: not its label)."""
        return self.verdict != "error" and self.answer != self.labelled.label.answer


def load_labels(path: Path, rubric: Rubric) -> list[LabelledRow]:
    """Every row of the labels file with its label; every bad row or label is a problem, all
    raised at once (EvalError) before any request."""
    if rubric.scale == "pairwise":
        raise EvalError.single(
            str(path),
            "rubric",
            f"{rubric.name} is a pairwise rubric; a labels file holds pass/fail, 1-5 or label "
            "names, not winners",
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
            Label(str(golden.expected), name=golden.expected_label),
            tuple(golden.tags),
        )
        for number, golden in enumerate(load_goldens(rubric), start=1)
    ]


def confusion_matrix(
    judged: Iterable[Judged], labels: Sequence[str] | None = None
) -> dict[str, dict[str, int]]:
    """Counts by human label (rows) and judge verdict (columns; errors in their own column);
    given a labels rubric's `labels`, by human label and judge label, in the rubric's order."""
    answers = list(labels) if labels else ["pass", "fail"]
    matrix = {human: dict.fromkeys([*answers, "error"], 0) for human in answers}
    for one in judged:
        human, judge = (
            (one.labelled.label.answer, one.answer)
            if labels
            else (one.labelled.label.verdict, one.verdict)
        )
        matrix[human][judge] = matrix[human].get(judge, 0) + 1  # a label no longer named
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
    pass_fail: PassFail | None = None
    """On a labels rubric, the agreement of the verdicts the labels mean (else None)."""


@dataclass(frozen=True)
class PassFail:
    """A labels rubric's pass-fail agreement beside its label agreement: the human's and the
    judge's labels each read as the verdict it means."""

    accuracy: float | None
    kappa: float | None
    confusion: dict[str, dict[str, int]]


def agreement(
    judged: Sequence[Judged], intervals: bool = False, labels: Sequence[str] | None = None
) -> Agreement:
    """Every agreement number of these rows; bootstrap intervals too when `intervals`. Given
    a labels rubric's `labels`, accuracy, kappa and the confusion matrix are over the labels,
    the pass-fail agreement beside them; the base rate and majority are the verdicts'."""
    pairs = [(one.labelled.label.answer, one.answer) for one in judged if one.verdict != "error"]
    verdict_pairs = [
        (one.labelled.label.verdict, one.verdict) for one in judged if one.verdict != "error"
    ]
    pass_fail = None
    if labels:
        pass_fail = PassFail(
            accuracy(verdict_pairs), cohen_kappa(verdict_pairs), confusion_matrix(judged)
        )
    return Agreement(
        verdicts=len(pairs),
        errors=len(judged) - len(pairs),
        disagreements=sum(one.disagrees for one in judged),
        accuracy=accuracy(pairs),
        kappa=cohen_kappa(pairs),
        kappa_undefined=why_kappa_undefined(pairs),
        base_rate=base_rate(verdict_pairs),
        majority=majority_baseline(verdict_pairs),
        confusion=confusion_matrix(judged, labels),
        scores=score_agreement(_score_pairs(judged)),
        accuracy_interval=bootstrap_interval(pairs, accuracy) if intervals else None,
        kappa_interval=bootstrap_interval(pairs, cohen_kappa) if intervals else None,
        pass_fail=pass_fail,
    )


@dataclass(frozen=True)
class Calibration:
    """A calibration run: every labelled row, its judgments (in file order, each row's trials
    in turn; fewer when it was interrupted) and how the run went."""

    rubric: Rubric
    labels: str
    """The labels file, as named on the command line."""
    rows: list[LabelledRow]
    judged: list[Judged]
    info: RunInfo | None = None
    trials: int = 1

    @property
    def planned(self) -> int:
        """The judgments the run set out to make: every row, `trials` times."""
        return len(self.rows) * self.trials

    @cached_property
    def flip_rates(self) -> FlipRates:
        """Rows whose verdict (labels rubric: label) changed across trials, and the share of
        verdicts off their row's majority (judge errors left out)."""
        answers: dict[int, list[str]] = {}
        for one in self.judged:
            answers.setdefault(one.labelled.row.number, []).append(one.answer)
        return flip_rates(answers.values())

    @property
    def label_names(self) -> list[str] | None:
        """A labels rubric's label names, in its order (agreement is over them); else None."""
        return list(self.rubric.labels) if self.rubric.labels else None

    @cached_property
    def overall(self) -> Agreement:
        return agreement(self.judged, intervals=True, labels=self.label_names)

    @cached_property
    def by_tag(self) -> dict[str, Agreement]:
        """The agreement of the rows carrying each tag, tags in sorted order."""
        tags = sorted({tag for one in self.judged for tag in one.labelled.tags})
        return {
            tag: agreement(
                [o for o in self.judged if tag in o.labelled.tags], labels=self.label_names
            )
            for tag in tags
        }

    @property
    def disagreements(self) -> list[Judged]:
        return [one for one in self.judged if one.disagrees]

    @property
    def disagreeing_rows(self) -> list[Judged]:
        """The first judgment of each row that disagreed with its label (one per row)."""
        firsts: dict[int, Judged] = {}
        for one in self.disagreements:
            firsts.setdefault(one.labelled.row.number, one)
        return list(firsts.values())

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
        """Rows were judged, and every judgment ended in a judge error."""
        return bool(self.judged) and len(self.errors) == len(self.judged)


async def run_calibration(
    judge: Grader,
    rubric: Rubric,
    rows: list[LabelledRow],
    labels: str,
    *,
    trials: int = 1,
    concurrency: int = 8,
    requests_per_minute: float | None = None,
    on_judgment: Callable[[], None] | None = None,
    interrupt: Interrupted | None = None,
    pacing: Pacing | None = None,
) -> Calibration:
    """Judge every labelled row `trials` times through the engine (each trial its own request
    and cache key; a row lacking a field the rubric requires is an error result, with no
    request), paced by `pacing` when it is part of a longer run. When `interrupt` records a
    signal, the run stops and the calibration holds what was judged until then."""
    from rubriclib.judging import Job, judge_all

    if trials < 1:
        raise ValueError("trials must be at least 1")
    jobs = (
        Job(rubric, labelled.row.item, trial) for labelled in rows for trial in range(1, trials + 1)
    )
    results, info = await judge_all(
        judge,
        jobs,
        len(rows) * trials,
        concurrency=concurrency,
        requests_per_minute=requests_per_minute,
        on_judgment=on_judgment,
        interrupt=interrupt,
        pacing=pacing,
    )
    judged = [
        Judged(rows[index // trials], results[index], index % trials + 1)
        for index in sorted(results)
    ]
    return Calibration(rubric, labels, rows, judged, info, trials)

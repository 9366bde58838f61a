"""Golden regression runs: plan them, judge every golden K times (the statistics over a rubric's
outcomes are `golden_stats`')."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rubriclib.errors import RubricError
from rubriclib.item import Item
from rubriclib.measure.agreement import FlipRates, flip_rates
from rubriclib.measure.golden_stats import GoldenOutcome, RubricReport
from rubriclib.rubrics import Golden, Rubric

logger = logging.getLogger("rubriclib")

if TYPE_CHECKING:
    from rubriclib.judging import Grader, Interrupted, RunInfo


@dataclass(frozen=True)
class GoldensReport:
    """A whole regression run: one report per rubric, in the order given. After an interrupt,
    a golden's outcome holds only the judgments that were made (possibly none)."""

    rubrics: list[RubricReport]
    trials: int
    info: RunInfo | None = None

    @property
    def misses(self) -> int:
        """Judgments that gave a verdict but did not meet their golden (`RubricReport.misses`)."""
        return sum(report.misses for report in self.rubrics)

    @property
    def errors(self) -> int:
        """Judgments that ended in a judge error."""
        return sum(report.errors for report in self.rubrics)

    @property
    def flip_rates(self) -> FlipRates:
        """The flip rates over every golden of every rubric (`RubricReport.flip_rates`)."""
        return flip_rates(o.answers for report in self.rubrics for o in report.outcomes)

    @property
    def ok(self) -> bool:
        """The run finished and every judgment matched its expectation (no judge errors)."""
        return self.status == "ok"

    @property
    def status(self) -> Literal["ok", "regression", "undecided", "interrupted"]:
        """What the run found: `interrupted` by a signal; else `regression` when a judgment
        that gave a verdict missed its golden; `undecided` when none did but judge errors kept
        goldens from being met (an outage, not a regression); `ok` when every judgment met."""
        if self.info is not None and self.info.interrupted is not None:
            return "interrupted"
        if self.misses:
            return "regression"
        return "undecided" if self.errors else "ok"


@dataclass(frozen=True)
class RunPlan:
    """What a regression run judges: each rubric with its goldens (its own, then the extra
    ones that fit it), each golden `trials` times."""

    rubrics: list[tuple[Rubric, list[Golden]]]
    trials: int = 1

    @property
    def judgments(self) -> int:
        return sum(len(goldens) for _, goldens in self.rubrics) * self.trials


def plan_run(
    refs: Sequence[str | Rubric], goldens_file: str | None = None, trials: int = 1
) -> RunPlan:
    """The goldens of each rubric named or given (every resolvable one when none is), with the
    extra goldens of `goldens_file` added to the rubrics they fit (those with expected_winner
    to pairwise rubrics, the others to the rest), each checked for its rubric exactly as the
    rubric's own goldens are. Every problem at once, before any request: RubricError (a label
    that is not one, a value outside an output field's enum, an extra golden named like one of
    a rubric's own, one that fits no rubric...)."""
    from rubriclib.rubrics import (
        GoldensFile,
        list_rubrics,
        load_goldens,
        load_rubric,
        shown_goldens,
    )

    named = refs or [rubric.name for rubric in list_rubrics()]
    rubrics = [ref if isinstance(ref, Rubric) else load_rubric(ref) for ref in named]
    owns = [load_goldens(rubric) for rubric in rubrics]
    added: list[list[Golden]] = [[] for _ in rubrics]
    if goldens_file:
        extra = GoldensFile.read(Path(goldens_file), goldens_file)
        taken = [{golden.name for golden in own} for own in owns]
        added, problems = extra.added_to(list(zip(rubrics, taken, strict=True)))
        if problems:
            raise RubricError(problems)
    plan = [(rubric, own + more) for rubric, own, more in zip(rubrics, owns, added, strict=True)]
    for rubric, goldens in plan:
        for warning in shown_goldens(rubric.name, rubric.examples, goldens):
            logger.warning(warning)
    return RunPlan(plan, trials)


async def run_goldens(
    judge: Grader,
    plan: Sequence[tuple[Rubric, Sequence[Golden]]],
    trials: int = 1,
    concurrency: int = 8,
    on_judgment: Callable[[], None] | None = None,
    interrupt: Interrupted | None = None,
    requests_per_minute: float | None = None,
) -> GoldensReport:
    """Judge every golden of every rubric `trials` times through the engine. When `interrupt`
    records a signal, the run stops and the report holds what was judged until then."""
    from rubriclib.judging import Job, judge_all

    if trials < 1 or concurrency < 1:
        raise ValueError("trials and concurrency must be at least 1")
    jobs = (
        Job(rubric, golden_item(golden), trial)
        for rubric, goldens in plan
        for golden in goldens
        for trial in range(1, trials + 1)
    )
    planned = sum(len(goldens) for _, goldens in plan) * trials
    results, info = await judge_all(
        judge,
        jobs,
        planned,
        concurrency=concurrency,
        requests_per_minute=requests_per_minute,
        on_judgment=on_judgment,
        interrupt=interrupt,
    )
    reports, position = [], 0
    for rubric, goldens in plan:
        outcomes = []
        for golden in goldens:
            judged = [results[i] for i in range(position, position + trials) if i in results]
            outcomes.append(GoldenOutcome(golden, judged))
            position += trials
        reports.append(RubricReport(rubric, outcomes))
    return GoldensReport(reports, trials, info)


def golden_item(golden: Golden) -> Item:
    """The fields of a golden that are judged, as an Item named after the golden."""
    return Item(
        output=golden.output,
        input=golden.input,
        context=golden.context,
        reference=golden.reference,
        baseline=golden.baseline,
        transcript=golden.transcript,
        id=golden.name,
    )

"""`align`'s run on the engine: every labelled row judged with the rubric as it is (through
`run_calibration`, so the verdict cache serves rows judged before), then per fold a revision
built from the other folds' rows alone and judged on the fold it never saw; the paired gain
over every held-out row, and the final revision, its examples chosen from all rows. Every
engine run and optimizer call of an alignment is one run: one pacer per endpoint and key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from rubriclib.measure.align import Comparison, assign_folds, compare, examples_from
from rubriclib.measure.calibration import Agreement, Calibration, Judged, agreement, run_calibration
from rubriclib.measure.label_rows import LabelledRow
from rubriclib.rubrics import Revision, Rubric, revise

if TYPE_CHECKING:
    from rubriclib.judging import Grader, Interrupted, Pacing

Proposer = Callable[[Rubric, Sequence[Judged], "Pacing"], Awaitable["Proposal"]]
"""What proposes guideline lines from a revision's training rows (their disagreements and the
judge's reasons): an optimizer model, asked once per fold and once for the final revision,
its request waiting on the alignment's pacing."""


@dataclass(frozen=True)
class Proposal:
    """Guideline lines an optimizer proposed and what asking it spent."""

    lines: list[str]
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class AlignSettings:
    """How an alignment runs: examples per revision, folds, the judging pace."""

    examples: int = 4
    folds: int = 5
    concurrency: int = 8
    requests_per_minute: float | None = None


@dataclass(frozen=True)
class Fold:
    """One fold: the revision built without its rows, and its rows judged before and with it."""

    number: int
    revision: Revision
    before: list[Judged]
    after: list[Judged]
    proposal: Proposal | None = None
    label_names: list[str] | None = None
    """A labels rubric's label names (agreement is over them); else None."""

    @cached_property
    def agreement_before(self) -> Agreement:
        return agreement(self.before, labels=self.label_names)

    @cached_property
    def agreement_after(self) -> Agreement:
        return agreement(self.after, labels=self.label_names)


@dataclass(frozen=True)
class Alignment:
    """An alignment run: the rubric judged as it is, each fold's held-out judgments, the paired
    comparison, and the final revision (examples from every row)."""

    before: Calibration
    folds: list[Fold] = field(default_factory=list)
    final: Revision | None = None
    final_proposal: Proposal | None = None
    interrupted: str | None = None

    @property
    def rubric(self) -> Rubric:
        return self.before.rubric

    @cached_property
    def after(self) -> list[Judged]:
        """Every row's held-out judgment, in file order."""
        held_out = [one for fold in self.folds for one in fold.after]
        return sorted(held_out, key=lambda one: one.labelled.row.number)

    @cached_property
    def agreement_after(self) -> Agreement:
        return agreement(self.after, intervals=True, labels=self.before.label_names)

    @cached_property
    def comparison(self) -> Comparison:
        return compare(self.before.judged, self.after)

    @property
    def learned(self) -> bool:
        """Whether the final revision shows the judge anything: an example or a guideline line
        (an optimizer can answer every row with no usable line)."""
        return self.final is not None and bool(self.final.examples or self.final.guidelines)

    @property
    def accepted(self) -> bool:
        return self.interrupted is None and self.learned and self.comparison.accepted

    @property
    def rejection(self) -> str:
        """Why a finished run writes nothing (when it is not accepted)."""
        if self.comparison.accepted and not self.learned:
            return (
                "the held-out gain is beyond noise, but the revision from every row learned "
                "nothing (no example chosen, no usable guideline line)"
            )
        return "the revision's held-out gain is not beyond noise"

    @property
    def proposals(self) -> list[Proposal]:
        found = [fold.proposal for fold in self.folds] + [self.final_proposal]
        return [proposal for proposal in found if proposal is not None]

    @property
    def requests(self) -> int:
        """Requests sent: every judgment's attempts and every optimizer call."""
        judgments = [*self.before.judged, *self.after]
        sent = sum(one.result.details.judge.attempts for one in judgments)
        return sent + sum(proposal.requests for proposal in self.proposals)

    @property
    def tokens(self) -> tuple[int, int]:
        """(prompt, completion) tokens over every judgment and optimizer call."""
        usages = [one.result.details.judge.usage for one in [*self.before.judged, *self.after]]
        prompt = sum(usage.prompt_tokens for usage in usages)
        completion = sum(usage.completion_tokens for usage in usages)
        prompt += sum(proposal.prompt_tokens for proposal in self.proposals)
        completion += sum(proposal.completion_tokens for proposal in self.proposals)
        return prompt, completion


async def _revision(
    rubric: Rubric,
    training: Sequence[Judged],
    settings: AlignSettings,
    propose: Proposer | None,
    pacing: Pacing,
) -> tuple[Revision, Proposal | None]:
    """A revision learned from `training` alone: its examples, and the optimizer's lines."""
    proposal = None
    if propose is not None:
        proposal = await propose(rubric, training, pacing)
    examples = examples_from(training, settings.examples, rubric)
    return revise(rubric, examples, proposal.lines if proposal else []), proposal


async def run_alignment(
    judge: Grader,
    rubric: Rubric,
    rows: list[LabelledRow],
    labels: str,
    settings: AlignSettings,
    *,
    propose: Proposer | None = None,
    on_judgment: Callable[[], None] | None = None,
    interrupt: Interrupted | None = None,
) -> Alignment:
    """Judge every row as the rubric is, then each fold with a revision learned from the other
    folds; the final revision from every row. Stops (`interrupted` set, no final revision)
    at the first signal `interrupt` records, and judges no fold when every row was an error."""
    from rubriclib.judging import RunPacing

    pacing = RunPacing(settings.concurrency, settings.requests_per_minute)

    async def judged(revision: Rubric, judged_rows: list[LabelledRow]) -> Calibration:
        return await run_calibration(
            judge,
            revision,
            judged_rows,
            labels,
            concurrency=settings.concurrency,
            on_judgment=on_judgment,
            interrupt=interrupt,
            pacing=pacing,
        )

    before = await judged(rubric, rows)
    if before.interrupted is not None or before.all_errors:
        return Alignment(before, interrupted=before.interrupted)
    folds: list[Fold] = []
    folded = list(zip(before.judged, assign_folds(rows, settings.folds), strict=True))
    for number in range(settings.folds):
        training = [one for one, fold in folded if fold != number]
        held_out = [one for one, fold in folded if fold == number]
        revision, proposal = await _revision(rubric, training, settings, propose, pacing)
        after = await judged(revision.rubric, [one.labelled for one in held_out])
        fold = Fold(number + 1, revision, held_out, after.judged, proposal, before.label_names)
        folds.append(fold)
        if after.interrupted is not None:
            return Alignment(before, folds, interrupted=after.interrupted)
    final, final_proposal = await _revision(rubric, before.judged, settings, propose, pacing)
    return Alignment(before, folds, final, final_proposal)

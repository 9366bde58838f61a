"""Aligning a rubric with labels, the pure parts: whether a labels file can measure a gain,
which fold each row is held out in, which labelled rows become worked examples, the requests a
run will spend, and whether a revision's held-out gain is beyond noise (a paired bootstrap).

Judge errors are data, never a side: a row whose judgment before or after the revision is an
`error` is left out of the paired comparison (and counted); the examples are chosen among
rows the judge answered first.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rubriclib.errors import EvalError, Problem
from rubriclib.item import missing_fields
from rubriclib.measure.agreement import Interval, bootstrap_interval
from rubriclib.measure.calibration import Judged
from rubriclib.measure.label_rows import LabelledRow
from rubriclib.rubrics import Golden, Rubric

MIN_ROWS = 20
"""Fewer labelled rows than this cannot show a held-out gain beyond noise."""
MIN_RARER = 4
"""Nor can fewer rows than this of the rarer verdict (pass or fail)."""
FOLD_SEED = 0
"""The seed of the fold assignment: the same labels always fold the same way."""


def too_few_labels(rows: Sequence[LabelledRow]) -> str | None:
    """Why these rows cannot measure a gain (too few, or too few of the rarer verdict), else
    None."""
    counts = Counter(row.label.verdict for row in rows)
    rarer = min(("pass", "fail"), key=lambda verdict: counts[verdict])
    if len(rows) < MIN_ROWS or counts[rarer] < MIN_RARER:
        return (
            f"too few labels to measure a gain: {len(rows)} row(s), {counts['pass']} pass and "
            f"{counts['fail']} fail; align needs at least {MIN_ROWS} rows and {MIN_RARER} of "
            "the rarer verdict"
        )
    return None


def assign_folds(rows: Sequence[LabelledRow], folds: int, seed: int = FOLD_SEED) -> list[int]:
    """The fold (0 to folds - 1) each row is held out in: each verdict's rows shuffled with a
    fixed seed and dealt in turn, so every fold holds both verdicts in about their share."""
    generator = random.Random(seed)
    assigned = [0] * len(rows)
    dealt = 0
    for verdict in ("pass", "fail"):
        indexes = [index for index, row in enumerate(rows) if row.label.verdict == verdict]
        generator.shuffle(indexes)
        for index in indexes:
            assigned[index] = dealt % folds
            dealt += 1
    return assigned


def _length(judged: Judged) -> int:
    item = judged.labelled.row.item
    return sum(len(text or "") for text in (item.input, item.context, item.reference, item.output))


def _rank(judged: Judged) -> tuple[int, int, int]:
    """Disagreements first, then agreements, then judge errors; shorter first; file order."""
    kind = 0 if judged.disagrees else 2 if judged.verdict == "error" else 1
    return kind, _length(judged), judged.labelled.row.number


def folds_left_empty(rows: Sequence[LabelledRow], folds: int) -> str | None:
    """Why `folds` folds cannot be dealt from these rows (a fold would hold none), else None."""
    if folds > len(rows):
        return f"{folds} folds of {len(rows)} row(s) would leave a fold empty"
    return None


def can_be_example(rubric: Rubric, labelled: LabelledRow) -> bool:
    """Whether a row can be shown as a worked example: not an agent run (an example is shown
    as text), with every field the rubric requires."""
    item = labelled.row.item
    return item.transcript is None and not missing_fields(rubric.requires, item)


def no_example_row(rubric: Rubric, rows: Sequence[LabelledRow]) -> str | None:
    """Why no row can be a worked example (each an agent run, or lacking a field the rubric
    requires), else None: without guideline lines, a revision would have nothing to show."""
    if any(can_be_example(rubric, row) for row in rows):
        return None
    return (
        "no row can be a worked example (an example is shown as text: not an agent run, and "
        f"with every field {rubric.name} requires: {', '.join(rubric.requires) or 'none'})"
    )


def refuse_to_align(
    rubric: Rubric, rows: list[LabelledRow], labels: str, folds: int, guidelines: bool
) -> None:
    """EvalError, before any request, for labels that cannot measure a gain or fill `folds`
    folds, or that no revision could learn from (no row can be an example, no guidelines);
    RubricError for a rubric that is no file to revise."""
    from rubriclib.rubrics import revise

    revise(rubric, [], [])  # only a rubric read from its file can be revised
    if (why := too_few_labels(rows)) is not None:
        raise EvalError([Problem(labels, "", why)])
    if (why := folds_left_empty(rows, folds)) is not None:
        raise EvalError([Problem(labels, "folds", why)])
    if not guidelines and (why := no_example_row(rubric, rows)) is not None:
        advice = "pass optimizer_model for guideline lines instead"
        raise EvalError([Problem(labels, "", f"{why}; {advice}")])


def choose_examples(judged: Sequence[Judged], limit: int, rubric: Rubric) -> list[Judged]:
    """At most `limit` rows to show as worked examples: as many of each human verdict as the
    limit and the rows allow, taken in turn (the verdict of the best row first), so that
    neither verdict leads the judge by number or by position; within a verdict,
    disagreements first, then agreements, then judge errors, shorter first. A row with an agent
    run, or lacking a field the rubric requires, is never one."""
    usable = sorted((one for one in judged if can_be_example(rubric, one.labelled)), key=_rank)
    queues = [
        [one for one in usable if one.labelled.label.verdict == verdict]
        for verdict in ("pass", "fail")
    ]
    queues = sorted((queue for queue in queues if queue), key=lambda queue: _rank(queue[0]))
    chosen: list[Judged] = []
    for turn in range(max(map(len, queues), default=0)):
        chosen += [queue[turn] for queue in queues if turn < len(queue)]
    return chosen[:limit]


def example_of(labelled: LabelledRow, taken: set[str]) -> Golden:
    """A labelled row as a worked example: named by its id (kebab-case; `row-N` when the id
    is none or taken, N its row number), the human's label as `expected`, the row's `why` if
    it has one."""
    item, label = labelled.row.item, labelled.label
    name = re.sub(r"[^a-z0-9]+", "-", str(item.id or "").lower()).strip("-")
    if not name or name in taken:
        name = f"row-{labelled.row.number}"
    taken.add(name)
    why = item.metadata.get("why")
    return Golden(
        name=name,
        input=item.input,
        context=item.context,
        reference=item.reference,
        output=item.output,
        expected=label.verdict,  # type: ignore[arg-type]  # read as pass or fail
        expected_label=label.name,
        expected_score=label.score,
        why=why if isinstance(why, str) and why.strip() else f"A person labelled it {label}.",
    )


def examples_from(judged: Sequence[Judged], limit: int, rubric: Rubric) -> list[Golden]:
    """The worked examples `choose_examples` picks, as goldens."""
    taken: set[str] = set()
    return [example_of(one.labelled, taken) for one in choose_examples(judged, limit, rubric)]


def requests_per_judgment(rubric: Rubric, checklist: str | None) -> int:
    """Requests one judgment sends when nothing is retried: one per checklist item when items
    are asked one by one (tool or probability answers), else one."""
    return len(rubric.checklist) if checklist in ("tool", "probability") else 1


@dataclass(frozen=True)
class Budget:
    """What an alignment will ask: judgments before and held out, optimizer calls, requests."""

    judgments_before: int
    judgments_held_out: int
    optimizer_calls: int
    requests_per_judgment: int

    @property
    def requests(self) -> int:
        judgments = self.judgments_before + self.judgments_held_out
        return judgments * self.requests_per_judgment + self.optimizer_calls


def plan_budget(
    rubric: Rubric, rows: Sequence[LabelledRow], folds: int, checklist: str | None, optimizer: bool
) -> Budget:
    """The requests an alignment spends on a cold cache, with no retry: every row the rubric
    can judge, judged once before and once in the fold that holds it out, and with an
    optimizer one call per fold and one for the final revision (a row lacking a required
    field is an error with no request)."""
    judgeable = sum(not missing_fields(rubric.requires, row.row.item) for row in rows)
    return Budget(
        judgeable,
        judgeable,
        folds + 1 if optimizer else 0,
        requests_per_judgment(rubric, checklist),
    )


@dataclass(frozen=True)
class Comparison:
    """Each row's outcome before and after (True when the judge gave the human's answer), over
    the rows judged both times; `left_out` rows had a judge error before or after."""

    outcomes: list[tuple[bool, bool]]
    left_out: int

    @property
    def gain(self) -> float | None:
        return mean_gain(self.outcomes)

    @property
    def interval(self) -> Interval | None:
        """The paired bootstrap 95% interval of the gain (seeded)."""
        return bootstrap_interval(self.outcomes, mean_gain)

    @property
    def accepted(self) -> bool:
        """The gain is beyond noise: its whole interval is above 0."""
        interval = self.interval
        return interval is not None and interval[0] > 0


def mean_gain(outcomes: Sequence[tuple[bool, bool]]) -> float | None:
    """The mean per-row difference, after minus before (each 1, 0 or -1); None with no rows."""
    return sum(after - before for before, after in outcomes) / len(outcomes) if outcomes else None


def compare(before: Sequence[Judged], after: Sequence[Judged]) -> Comparison:
    """The paired outcomes of the rows judged both times (matched by row number), judge errors
    on either side left out."""
    later = {one.labelled.row.number: one for one in after}
    outcomes: list[tuple[bool, bool]] = []
    left_out = 0
    for first in before:
        second = later.get(first.labelled.row.number)
        if second is None or "error" in (first.verdict, second.verdict):
            left_out += 1
            continue
        outcomes.append((not first.disagrees, not second.disagrees))
    return Comparison(outcomes, left_out)

"""Running an eval: every row x grader through the engine, each result appended to a JSONL file
as it finishes, `--resume` from that file, per-grader statistics and the gate."""

from __future__ import annotations

import asyncio
import bisect
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, Literal

from rubriclib.evals.formats import Condition, Eval, GraderEntry
from rubriclib.evals.judgments import asked, not_extracted, row_rubric
from rubriclib.evals.ledger import Ledger
from rubriclib.evals.results import ResultsFile, result_line
from rubriclib.evals.setup import ReadyRun
from rubriclib.item import Item, missing_fields
from rubriclib.judging import GradeResult, not_judged

if TYPE_CHECKING:
    from rubriclib.evals.datasets import Row
    from rubriclib.judging import Interrupted, Job, Pacing, Target

Status = Literal["passed", "failed", "undecided", "interrupted"]
Engine = Callable[["Iterator[Job]"], AsyncIterator[tuple[int, GradeResult]]]
"""Where a run's judgments are made: given the jobs, it yields `(index, result)` for each,
in any order, exactly once (`judge_stream` on this machine; `ray_engine.RayEngine` on Ray)."""
LISTED_ERRORS = 10
"""Judge errors a report lists by row (the first rows'); the rest are counted."""


@dataclass
class GraderStats:
    """One grader's results so far."""

    grader: GraderEntry
    model: str
    votes: int = 1
    """Votes per judgment the grader's judge casts (a resumed line must have been judged so)."""
    checklist_answers: str | None = None
    """How the grader's judge answers the rubric's checklist, None when it does not ask it
    (so must a resumed line)."""
    passed: int = 0
    failed: int = 0
    errors: int = 0
    score_sum: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    position_flips: int = 0
    """Pairwise: comparisons whose answer changed when the order was swapped."""
    comparisons: int = 0
    """Pairwise: comparisons answered in both orders (what the flip rate is a share of)."""
    outputs: list[dict[str, Any]] = field(default_factory=list)
    """The output fields of each verdict, on a rubric that has them (`measure` sums them)."""
    labels: list[str] = field(default_factory=list)
    """The label of each verdict, on a labels rubric (`measure.label_counts` counts them)."""

    def add(self, result: GradeResult) -> None:
        if result.verdict == "error":
            self.errors += 1
        else:
            self.passed += result.verdict == "pass"
            self.failed += result.verdict == "fail"
            self.score_sum += result.score or 0.0
            if result.details.output is not None:
                self.outputs.append(result.details.output)
            if result.details.label is not None:
                self.labels.append(result.details.label)
        if (pairwise := result.details.pairwise) is not None:
            self.position_flips += pairwise.flips
            self.comparisons += pairwise.comparisons
        usage = result.details.judge.usage
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens

    @property
    def judged(self) -> int:
        """Results, errors included."""
        return self.passed + self.failed + self.errors

    @property
    def pass_rate(self) -> float | None:
        """Passes over all results: a judge error never counts as a pass."""
        return self.passed / self.judged if self.judged else None

    @property
    def mean_score(self) -> float | None:
        """Mean score (0 to 1) of the results that are verdicts."""
        verdicts = self.passed + self.failed
        return self.score_sum / verdicts if verdicts else None

    def bounds(self, metric: str) -> tuple[float, float] | None:
        """The metric's lowest and highest value over every way the errors could have gone."""
        if not self.judged:
            return None
        if metric == "pass_rate":
            return self.passed / self.judged, (self.passed + self.errors) / self.judged
        return self.score_sum / self.judged, (self.score_sum + self.errors) / self.judged


@dataclass(frozen=True)
class ConditionOutcome:
    """A gate condition after the run: the metric's value and whether it held (None: the
    judge errors leave it undecided, or nothing was judged)."""

    condition: Condition
    value: float | None
    holds: bool | None


@dataclass
class EvalReport:
    """What a run of an eval found: the same numbers the CLI prints."""

    eval: Eval
    graders: list[GraderStats]
    rows: int = 0
    resumed: int = 0
    started: float = field(default_factory=time.time)
    finished: float = 0.0
    interrupted: str | None = None
    failures_by_row: Counter[str] = field(default_factory=Counter)
    failed_row_numbers: dict[str, int] = field(default_factory=dict)
    """The number (in reading order) of each row in `failures_by_row`."""
    cases: list[tuple[str, str, GradeResult]] | None = None
    """(row id, grader, result) of every result, kept only when asked (JUnit needs them): in
    reading order once the run ends (rows as read, each row's graders as the eval lists them),
    whichever engine made them and in whatever order they finished."""
    planned_rows: int | None = None
    """The rows the run set out to judge (the dataset's, within the limit), when known."""
    rows_judged: int = 0
    """Rows whose every grader has its result (an interrupt leaves the others unjudged)."""
    not_judged: list[tuple[str, str]] = field(default_factory=list)
    """(row id, grader) of every judgment an interrupt left unmade, kept with `cases`."""
    first_errors: list[tuple[int, str, str, str]] = field(default_factory=list)
    """(row number, row id, grader, reason) of the judge errors of the first rows (at most
    LISTED_ERRORS); the graders' stats count them all."""
    _case_places: list[tuple[int, int]] = field(default_factory=list, repr=False)
    """Each case's row number and grader's place, to put `cases` in reading order."""

    def add(self, number: int, row: str, grader: str, result: GradeResult) -> None:
        """A result of row `row` (the `number`th read) by `grader`."""
        at, stats = next((at, s) for at, s in enumerate(self.graders) if s.grader.name == grader)
        stats.add(result)
        if result.verdict == "error":
            bisect.insort(self.first_errors, (number, row, grader, result.reason))
            del self.first_errors[LISTED_ERRORS:]
        if result.verdict == "fail":
            self.failures_by_row[row] += 1
            self.failed_row_numbers[row] = number
        if self.cases is not None:
            self.cases.append((row, grader, result))
            self._case_places.append((number, at))

    def order_cases(self) -> None:
        """The cases in reading order, however their results came."""
        if self.cases:
            order = sorted(range(len(self.cases)), key=self._case_places.__getitem__)
            self.cases = [self.cases[index] for index in order]
            self._case_places = [self._case_places[index] for index in order]

    @property
    def rows_planned(self) -> int:
        """The rows the run set out to judge: as planned, else as many as it read."""
        return self.rows if self.planned_rows is None else self.planned_rows

    @property
    def gate(self) -> list[ConditionOutcome]:
        stats = {s.grader.name: s for s in self.graders}
        outcomes = []
        for condition in self.eval.gate:
            grader = stats.get(condition.grader)
            bounds = grader.bounds(condition.metric) if grader else None
            value = getattr(grader, condition.metric) if grader else None
            if bounds is None:
                outcomes.append(ConditionOutcome(condition, value, None))
                continue
            low, high = (condition.holds(bound) for bound in bounds)
            outcomes.append(ConditionOutcome(condition, value, low if low == high else None))
        return outcomes

    @property
    def status(self) -> Status:
        """`passed` when every condition holds (and, with no gate, no judge errors);
        `failed` when one fails; `undecided` when judge errors leave one open."""
        if self.interrupted:
            return "interrupted"
        holds = [outcome.holds for outcome in self.gate]
        if False in holds:
            return "failed"
        if None in holds or (not holds and any(s.errors for s in self.graders)):
            return "undecided"
        return "passed"

    @property
    def most_failed_rows(self) -> list[tuple[str, int]]:
        """The rows that failed most graders (at most ten), rows failing as many in reading
        order: the same list in whatever order their results came."""
        numbers = self.failed_row_numbers
        ranked = sorted(self.failures_by_row.items(), key=lambda row: (-row[1], numbers[row[0]]))
        return ranked[:10]


async def run_ready(
    ready: ReadyRun,
    *,
    keep_cases: bool = False,
    on_result: Callable[[GradeResult], None] | None = None,
    interrupt: Interrupted | None = None,
    engine: Engine | None = None,
) -> EvalReport:
    """Judge every row with every grader, as `ready_run` made the eval ready; see `run_eval`.
    With a target, each row's output is written by that model first (once per row, whatever the
    number of graders). `keep_cases` keeps every result in the report (JUnit needs them);
    `on_result` is called with each; an `interrupt` signal ends the run with what it judged.
    `engine` makes the judgments (by default this process's, on the run's concurrency): all
    else (rows, resume, the results file, the report) is the same whichever makes them."""
    judges = ready.judges
    report = EvalReport(
        ready.eval,
        [
            GraderStats(
                g, judges[g.name].model, judges[g.name].votes, judges[g.name].checklist_answers
            )
            for g in ready.eval.graders
        ],
        planned_rows=ready.rows,
    )
    report.cases = [] if keep_cases else None
    await _EvalRun(ready, report, on_result).run(interrupt, engine)
    report.order_cases()
    report.finished = time.time()
    return report


class _EvalRun:
    """One run of a ReadyRun: its rows planned into jobs, each result recorded in the report,
    the results file and the ledger (what was judged, kept and missing)."""

    def __init__(
        self,
        ready: ReadyRun,
        report: EvalReport,
        on_result: Callable[[GradeResult], None] | None,
    ) -> None:
        self.ready = ready
        self.report = report
        self.on_result = on_result
        rows = islice(ready.eval.dataset.rows(), ready.limit)
        self.ledger = Ledger(rows, ready.eval.graders, ready.kept)
        self.outputs = _Outputs(ready.target, ready.kept)
        out = ready.out
        self.results = ResultsFile(out, resume=ready.resume) if out is not None else None

    async def run(self, interrupt: Interrupted | None, engine: Engine | None) -> None:
        """Every job through the engine (`engine`, else this process's), each result recorded
        as it finishes; an `interrupt` signal stops it with what was judged and, with cases
        kept, what was not."""
        report = self.report
        stream = (engine or self.local)(self.jobs())
        try:
            async for index, result in stream:
                if (finished := self.ledger.finished(index, result)) is not None:
                    self.record(*finished)
        except asyncio.CancelledError:
            if interrupt is None or interrupt.signal is None:
                raise
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            report.interrupted = interrupt.signal
            if report.cases is not None:
                report.not_judged = self.ledger.missing()
        finally:
            await self.close()
            report.rows, report.resumed = self.ledger.read, self.ledger.resumed
            report.rows_judged = self.ledger.rows_judged

    def local(self, jobs: Iterator[Job]) -> AsyncIterator[tuple[int, GradeResult]]:
        """The jobs judged in this process, `concurrency` at once."""
        from rubriclib.judging import judge_stream

        ready = self.ready
        return judge_stream(
            ready.judges[ready.eval.graders[0].name],
            jobs,
            concurrency=ready.concurrency,
            requests_per_minute=ready.requests_per_minute,
        )

    def jobs(self) -> Iterator[Job]:
        """Each row's judgments as jobs, pulled as the engine frees up; a result kept from a
        previous run, or a judgment the row cannot make, is recorded without a job."""
        from rubriclib.judging import Job

        for row, graders in self.ledger.each_row():
            for grader in graders:
                judge = self.ready.judges[grader.name]
                if (kept := self.ledger.kept(row, grader)) is not None:
                    self.record(row, grader, kept, write=False)
                elif (error := _unjudgeable(row, grader, judge.model)) is not None:
                    self.record(row, grader, error)
                else:
                    for part in self.ledger.planned(row, grader, asked(row, grader)):
                        item = self.outputs.item(row) if row.sample is None else part.item
                        yield Job(part.rubric, item, judge=judge)

    def record(
        self, row: Row, grader: GraderEntry, result: GradeResult, write: bool = True
    ) -> None:
        """A row's result by a grader: in the ledger, the report, the results file (unless kept
        from it) and `on_result`."""
        number = self.ledger.settle(row, grader)
        self.report.add(number, row.id, grader.name, result)
        if write and self.results is not None:
            line = result_line(row, grader.name, result)
            if self.ready.target is not None and row.id in self.outputs.written:
                line["output"] = self.outputs.written[row.id]
            self.results.write(line)
        if self.on_result is not None:
            self.on_result(result)

    async def close(self) -> None:
        """The results file, every judge and the target closed."""
        if self.results is not None:
            self.results.close()
        for judge in set(self.ready.judges.values()):
            await judge.aclose()
        if self.ready.target is not None:
            await self.ready.target.aclose()


def _unjudgeable(row: Row, grader: GraderEntry, model: str) -> GradeResult | None:
    """The error result when `grader` cannot judge the row (a field its rubric requires is
    missing, its extractor takes nothing from a letta row's messages), else None."""
    if missing := missing_fields(grader.rubric.requires, row.item):
        cause = f"row {row.id} has no {' and no '.join(missing)}"
        return not_judged(grader.rubric, model, cause)
    if (why := not_extracted(row, grader)) is not None:
        return not_judged(row_rubric(row, grader), model, why)
    return None


class _Outputs:
    """Each row's output: the row's own, one kept from a resumed run, or the target's, asked
    once per row however many graders wait for it."""

    def __init__(
        self, target: Target | None, kept: Mapping[tuple[str, str], dict[str, Any]]
    ) -> None:
        self.target = target
        self.written: dict[str, str] = {
            row: line["output"]
            for (row, _), line in kept.items()
            if isinstance(line.get("output"), str)
        }
        self._asked: dict[str, asyncio.Future[str]] = {}

    def item(self, row: Row) -> Item | Callable[[Pacing], Awaitable[Item]]:
        """The row's item, or how the engine gets it: asking the target once, its request
        waiting on the run's pacing."""
        if self.target is None:
            return row.item
        if row.id in self.written:
            return row.item.model_copy(update={"output": self.written[row.id]})
        target = self.target

        async def produce(pacing: Pacing) -> Item:
            if row.id not in self._asked:
                asked = target.generate(row.item, pacing=pacing)
                self._asked[row.id] = asyncio.ensure_future(asked)
            output = await self._asked[row.id]
            self.written[row.id] = output
            return row.item.model_copy(update={"output": output})

        return produce

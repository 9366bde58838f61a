"""A rubric's goldens judged: each golden's outcome, and the agreement statistics over them
(accuracy, kappa, counts: verdicts, pairwise winners or labels)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from rubriclib.judging import GradeResult, cite_matches
from rubriclib.measure.agreement import (
    FlipRates,
    Interval,
    Pair,
    accuracy,
    bootstrap_interval,
    cohen_kappa,
    flip_rates,
)
from rubriclib.measure.citations import CitationCounts, count_citations, verified_citations
from rubriclib.rubrics import Golden, Rubric

GoldenStatus = Literal["ok", "miss", "error", "not judged"]

WINNER_ORDER = {
    "output": ("output", "tie", "baseline"),
    "baseline": ("baseline", "tie", "output"),
    "tie": ("tie", "output", "baseline"),
}
"""Each expected winner of a pairwise golden, and the judged winners it is counted against
(the expected one first)."""


@dataclass(frozen=True)
class GoldenOutcome:
    """One golden's K judgments."""

    golden: Golden
    results: list[GradeResult]

    @property
    def verdicts(self) -> list[str]:
        return [result.verdict for result in self.results]

    @property
    def expected_answer(self) -> str:
        """The expected verdict; on a pairwise golden the expected winner, on a labels
        rubric's the expected label."""
        return (
            self.golden.expected_winner or self.golden.expected_label or str(self.golden.expected)
        )

    @property
    def answers(self) -> list[str]:
        """Each judgment's verdict; on a pairwise golden, its winner (`output`, `baseline`,
        `tie`) or `error`."""
        return [answer_of(self.golden, result) for result in self.results]

    def uncited(self, result: GradeResult) -> list[str]:
        """The golden's `cites` that no verified citation of `result` quotes (`cite_matches`)."""
        verified = verified_citations(result)
        return [quote for quote in self.golden.cites if not cite_matches(quote, verified)]

    def unmatched(self, result: GradeResult) -> list[str]:
        """The golden's `expected_output` fields `result` gave another value (or none) for,
        each as `field: expected X, got Y`."""
        expected, given = self.golden.expected_output or {}, result.details.output or {}
        return [
            f"{name}: expected {value!r}, got {given.get(name)!r}"
            for name, value in expected.items()
            if given.get(name) != value or type(given.get(name)) is not type(value)
        ]

    @property
    def met(self) -> list[bool]:
        """Per judgment: it gave the expected verdict (pairwise: winner; labels: label), cited
        every quote of the golden's `cites` and gave its `expected_output`."""
        return [
            answer == self.expected_answer
            and not self.uncited(result)
            and not self.unmatched(result)
            for result, answer in zip(self.results, self.answers, strict=True)
        ]

    @property
    def agreed(self) -> bool:
        """It was judged, and every judgment met it: the expected verdict (pairwise: winner)
        and, when the golden lists `cites`, a verified citation of each."""
        return bool(self.results) and all(self.met)

    @property
    def flaky(self) -> bool:
        """The judgments did not all give the same verdict (pairwise: winner)."""
        return len(set(self.answers)) > 1

    @property
    def flipped(self) -> bool:
        """The judgments that gave a verdict did not all give the same one (pairwise: winner;
        unlike `flaky`, a judge error beside a verdict is no flip)."""
        return len(set(self.answers) - {"error"}) > 1

    @property
    def status(self) -> GoldenStatus:
        """`ok`: every judgment met it; `miss`: a judgment that gave a verdict did not (a
        regression); `error`: none missed, but a judge error kept it from being met (an outage
        measures nothing); `not judged`: no judgment was made (an interrupt)."""
        if not self.results:
            return "not judged"
        judged = zip(self.answers, self.met, strict=True)
        if any(not met and answer != "error" for answer, met in judged):
            return "miss"
        return "error" if "error" in self.answers else "ok"


@dataclass(frozen=True)
class RubricReport:
    """Every golden outcome of one rubric, with its agreement statistics."""

    rubric: Rubric
    outcomes: list[GoldenOutcome]

    @property
    def counts(self) -> dict[str, Any]:
        """Every judgment counted once, on the basis `accuracy` uses. Pass-fail and 1-5: true /
        false pass / fail and judge errors. Pairwise: for each expected winner present
        (`expected_output`, ...), the judged winners (the expected one first), and errors."""
        cells = Counter(self.pairs)
        errors = sum(count for (_, answer), count in cells.items() if answer == "error")
        expected = {answer for answer, _ in cells}
        if self.rubric.scale == "labels":
            labels = list(self.rubric.labels or {})
            matrix = {
                f"expected_{name}": {answer: cells[name, answer] for answer in labels}
                for name in labels
                if name in expected
            }
            return {
                **matrix,
                "errors": errors,
                "verdicts": _verdict_counts(Counter(self.verdict_pairs)),
            }
        if self.rubric.scale != "pairwise":
            return {**_verdict_counts(cells), "errors": errors}
        counts: dict[str, Any] = {
            f"expected_{winner}": {answer: cells[winner, answer] for answer in answers}
            for winner, answers in WINNER_ORDER.items()
            if winner in expected
        }
        return {**counts, "errors": errors}

    @property
    def misses(self) -> int:
        """Judgments that gave a verdict but did not meet their golden: a verdict (pairwise: a
        winner) other than the golden's, or the golden's without citing each of its `cites`."""
        return sum(
            answer != "error" and not met
            for outcome in self.outcomes
            for answer, met in zip(outcome.answers, outcome.met, strict=True)
        )

    @property
    def uncited(self) -> int:
        """Judgments that gave the golden's verdict (pairwise: winner) but missed a quote of
        its `cites` (counted in `misses`; accuracy and kappa measure verdicts alone)."""
        return sum(
            answer == outcome.expected_answer and bool(outcome.uncited(result))
            for outcome in self.outcomes
            for result, answer in zip(outcome.results, outcome.answers, strict=True)
        )

    @property
    def unmatched(self) -> int:
        """Judgments that gave the golden's verdict and cites but another value for one of its
        `expected_output` fields (counted in `misses`)."""
        return sum(
            answer == outcome.expected_answer
            and not outcome.uncited(result)
            and bool(outcome.unmatched(result))
            for outcome in self.outcomes
            for result, answer in zip(outcome.results, outcome.answers, strict=True)
        )

    @property
    def asks_cites(self) -> bool:
        """Some golden of the rubric lists `cites`."""
        return any(outcome.golden.cites for outcome in self.outcomes)

    @property
    def asks_output(self) -> bool:
        """Some golden of the rubric lists `expected_output`."""
        return any(outcome.golden.expected_output for outcome in self.outcomes)

    @cached_property
    def citations(self) -> CitationCounts:
        """The citations the judge gave over every judgment, the unverified ones named by
        golden and trial."""
        return count_citations(
            ({"golden": outcome.golden.name, "trial": trial}, result)
            for outcome in self.outcomes
            for trial, result in enumerate(outcome.results, start=1)
        )

    @property
    def errors(self) -> int:
        """Judgments that ended in a judge error."""
        return sum(answer == "error" for _, answer in self.pairs)

    @property
    def corrected(self) -> int:
        """Judgments that needed a corrective turn (whether or not it gave a verdict)."""
        return sum(
            result.details.judge.corrected
            for outcome in self.outcomes
            for result in outcome.results
        )

    @property
    def modes(self) -> dict[str, int]:
        """How many judgments used each tool mode (`required`, `named`, `auto`)."""
        return dict(
            Counter(
                str(result.details.judge.mode)
                for outcome in self.outcomes
                for result in outcome.results
            )
        )

    @property
    def judgments(self) -> int:
        return sum(len(outcome.results) for outcome in self.outcomes)

    @property
    def pairs(self) -> list[Pair]:
        """(expected, judged verdict) for every judgment; a judge error's verdict is `error`.
        On a pairwise rubric, (expected winner, judged winner)."""
        return [
            (outcome.expected_answer, answer)
            for outcome in self.outcomes
            for answer in outcome.answers
        ]

    @property
    def verdict_pairs(self) -> list[Pair]:
        """(expected, judged verdict) for every judgment: on a labels rubric, the pass-fail
        summary beside its labels (a label's verdict by the rubric's map)."""
        return [
            (str(outcome.golden.expected), result.verdict)
            for outcome in self.outcomes
            for result in outcome.results
        ]

    @property
    def judged(self) -> int:
        """Judgments that gave a verdict (pairwise: a winner), what accuracy is over."""
        return len(self._judged_pairs)

    @property
    def accuracy(self) -> float | None:
        """Share of the judgments that gave a verdict that matched (judge errors are counted
        apart, `errors`, and left out, as from kappa); None when none did."""
        return accuracy(self._judged_pairs)

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa of judged vs expected verdicts (errors left out); None if undefined."""
        return cohen_kappa(self._judged_pairs)

    @cached_property
    def accuracy_interval(self) -> Interval | None:
        """The bootstrap 95% interval of `accuracy` (see rubriclib.measure.agreement)."""
        return bootstrap_interval(self._judged_pairs, accuracy)

    @cached_property
    def kappa_interval(self) -> Interval | None:
        """The bootstrap 95% interval of `kappa`."""
        return bootstrap_interval(self._judged_pairs, cohen_kappa)

    @property
    def _judged_pairs(self) -> list[Pair]:
        return [pair for pair in self.pairs if pair[1] != "error"]

    @property
    def flaky(self) -> list[str]:
        return [outcome.golden.name for outcome in self.outcomes if outcome.flaky]

    @property
    def flipped(self) -> list[str]:
        """The goldens whose verdict (pairwise: winner) changed across trials."""
        return [outcome.golden.name for outcome in self.outcomes if outcome.flipped]

    @property
    def flip_rates(self) -> FlipRates:
        """Goldens flipped across trials and the share of verdicts off their golden's majority
        (judge errors left out; see `agreement.flip_rates`)."""
        return flip_rates(outcome.answers for outcome in self.outcomes)

    @property
    def score_pairs(self) -> list[tuple[int, int]]:
        """(expected_score, raw_score) for every scored judgment of a golden with expected_score."""
        return [
            (outcome.golden.expected_score, result.details.raw_score)
            for outcome in self.outcomes
            if outcome.golden.expected_score is not None
            for result in outcome.results
            if result.details.raw_score is not None
        ]

    @property
    def exact_score_agreement(self) -> float | None:
        pairs = self.score_pairs
        return sum(expected == got for expected, got in pairs) / len(pairs) if pairs else None

    @property
    def mean_absolute_error(self) -> float | None:
        pairs = self.score_pairs
        return sum(abs(expected - got) for expected, got in pairs) / len(pairs) if pairs else None

    @property
    def ok(self) -> bool:
        return all(outcome.agreed for outcome in self.outcomes)


def _verdict_counts(cells: Mapping[Pair, int]) -> dict[str, int]:
    """True / false pass / fail among (expected, judged verdict) counts."""
    return {
        "true_pass": cells.get(("pass", "pass"), 0),
        "false_pass": cells.get(("fail", "pass"), 0),
        "true_fail": cells.get(("fail", "fail"), 0),
        "false_fail": cells.get(("pass", "fail"), 0),
    }


def answer_of(golden: Golden, result: GradeResult) -> str:
    """What a judgment of `golden` found: its verdict; on a pairwise golden the winner, on a
    labels rubric's golden the label."""
    pairwise = result.details.pairwise
    if golden.expected_label is not None and result.verdict != "error":
        return result.details.label or result.verdict
    if golden.expected_winner is None or result.verdict == "error":
        return result.verdict
    winner = pairwise.winner if pairwise is not None else None
    return str(winner) if winner is not None else result.verdict

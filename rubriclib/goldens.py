"""Golden regression runs: judge every golden K times, then agreement statistics and reports."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rubriclib.result import GradeResult, judge_details, make_result
from rubriclib.rubric import Golden, Rubric

if TYPE_CHECKING:
    from rubriclib.judge import Judge


@dataclass(frozen=True)
class GoldenOutcome:
    """One golden's K judgments."""

    golden: Golden
    results: list[GradeResult]

    @property
    def verdicts(self) -> list[str]:
        return [result.verdict for result in self.results]

    @property
    def agreed(self) -> bool:
        """Every judgment gave the expected verdict."""
        return all(verdict == self.golden.expected for verdict in self.verdicts)

    @property
    def flaky(self) -> bool:
        """The judgments did not all give the same verdict."""
        return len(set(self.verdicts)) > 1


@dataclass(frozen=True)
class RubricReport:
    """Every golden outcome of one rubric, with its agreement statistics."""

    rubric: Rubric
    outcomes: list[GoldenOutcome]

    @property
    def counts(self) -> dict[str, int]:
        """true/false pass/fail (judged vs expected) and judge errors, over every judgment."""
        counts = Counter(
            _confusion_cell(outcome.golden.expected, verdict)
            for outcome in self.outcomes
            for verdict in outcome.verdicts
        )
        return {
            cell: counts[cell]
            for cell in ("true_pass", "false_pass", "true_fail", "false_fail", "errors")
        }

    @property
    def corrected(self) -> int:
        """Judgments that needed a corrective turn (whether or not it gave a verdict)."""
        return sum(
            bool(result.details["judge"].get("corrected"))
            for outcome in self.outcomes
            for result in outcome.results
        )

    @property
    def modes(self) -> dict[str, int]:
        """How many judgments used each tool mode (`required`, `named`, `auto`)."""
        return dict(
            Counter(
                str(result.details["judge"].get("mode"))
                for outcome in self.outcomes
                for result in outcome.results
            )
        )

    @property
    def judgments(self) -> int:
        return sum(len(outcome.results) for outcome in self.outcomes)

    @property
    def accuracy(self) -> float | None:
        """Share of all judgments that matched; a judge error counts as a miss."""
        counts = self.counts
        return (
            (counts["true_pass"] + counts["true_fail"]) / self.judgments if self.judgments else None
        )

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa of judged vs expected verdicts (errors left out); None if undefined."""
        counts = self.counts
        n = sum(counts[c] for c in ("true_pass", "false_pass", "true_fail", "false_fail"))
        if not n:
            return None
        observed = (counts["true_pass"] + counts["true_fail"]) / n
        judged_pass = (counts["true_pass"] + counts["false_pass"]) / n
        expected_pass = (counts["true_pass"] + counts["false_fail"]) / n
        chance = judged_pass * expected_pass + (1 - judged_pass) * (1 - expected_pass)
        return None if chance == 1 else (observed - chance) / (1 - chance)

    @property
    def flaky(self) -> list[str]:
        return [outcome.golden.name for outcome in self.outcomes if outcome.flaky]

    @property
    def score_pairs(self) -> list[tuple[int, int]]:
        """(expected_score, raw_score) for every scored judgment of a golden with expected_score."""
        return [
            (outcome.golden.expected_score, result.details["raw_score"])
            for outcome in self.outcomes
            if outcome.golden.expected_score is not None
            for result in outcome.results
            if "raw_score" in result.details
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


@dataclass(frozen=True)
class RunReport:
    """A whole regression run: one report per rubric, in the order given."""

    rubrics: list[RubricReport]
    trials: int

    @property
    def ok(self) -> bool:
        """Every judgment of every golden matched its expectation (no judge errors)."""
        return all(report.ok for report in self.rubrics)


async def run_goldens(
    judge: Judge,
    plan: Sequence[tuple[Rubric, Sequence[Golden]]],
    trials: int = 1,
    concurrency: int = 8,
    on_judgment: Callable[[], None] | None = None,
) -> RunReport:
    """Judge every golden of every rubric `trials` times, `concurrency` requests at once."""
    if trials < 1 or concurrency < 1:
        raise ValueError("trials and concurrency must be at least 1")
    jobs = [
        (rubric, golden) for rubric, goldens in plan for golden in goldens for _ in range(trials)
    ]
    gate = asyncio.Semaphore(concurrency)

    async def judge_one(rubric: Rubric, golden: Golden) -> GradeResult:
        async with gate:
            try:
                result = await judge.agrade(
                    rubric, golden.output, golden.input, golden.context, golden.reference
                )
            except Exception as error:  # never lose a judgment, whatever went wrong
                details = judge_details(
                    judge.model, None, 0, 0, {"prompt_tokens": 0, "completion_tokens": 0}
                )
                result = make_result(rubric, details, "error", f"unexpected {type(error).__name__}")
        if on_judgment is not None:
            on_judgment()
        return result

    results = iter(await asyncio.gather(*(judge_one(rubric, golden) for rubric, golden in jobs)))
    reports = [
        RubricReport(
            rubric,
            [GoldenOutcome(golden, [next(results) for _ in range(trials)]) for golden in goldens],
        )
        for rubric, goldens in plan
    ]
    return RunReport(reports, trials)


def _confusion_cell(expected: str, verdict: str) -> str:
    if verdict == "error":
        return "errors"
    return f"{'true' if verdict == expected else 'false'}_{verdict}"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _decimal(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def format_table(run: RunReport) -> str:
    """A report for people."""
    lines = []
    for report in run.rubrics:
        counts = report.counts
        rubric = report.rubric
        summary = (
            f"{rubric.name}@{rubric.version}  accuracy {_percent(report.accuracy)}  "
            f"kappa {_decimal(report.kappa)}  "
            f"true pass {counts['true_pass']}, false pass {counts['false_pass']}, "
            f"true fail {counts['true_fail']}, false fail {counts['false_fail']}, "
            f"judge errors {counts['errors']}, flaky {len(report.flaky)}, "
            f"corrected {report.corrected}"
        )
        if report.score_pairs:
            summary += (
                f"  exact score {_percent(report.exact_score_agreement)}"
                f"  MAE {_decimal(report.mean_absolute_error)}"
            )
        lines.append(summary)
        width = max((len(outcome.golden.name) for outcome in report.outcomes), default=0)
        for outcome in report.outcomes:
            mark = "ok  " if outcome.agreed else "MISS"
            flaky = "  FLAKY" if outcome.flaky else ""
            got = ", ".join(outcome.verdicts)
            lines.append(
                f"  {mark} {outcome.golden.name:<{width}}  expected {outcome.golden.expected}"
                f"  got {got}{flaky}"
            )
            if not outcome.agreed:
                miss = next(r for r in outcome.results if r.verdict != outcome.golden.expected)
                lines.append(f"       {' '.join(miss.reason.split())[:160]}")
        lines.append("")
    goldens = sum(len(report.outcomes) for report in run.rubrics)
    missed = sum(not outcome.agreed for report in run.rubrics for outcome in report.outcomes)
    errors = sum(report.counts["errors"] for report in run.rubrics)
    lines.append(
        f"{'OK' if run.ok else 'REGRESSION'}: {len(run.rubrics)} rubric(s), {goldens} golden(s) "
        f"x {run.trials} trial(s); {missed} golden(s) missed, {errors} judge error(s)"
    )
    return "\n".join(lines)


def to_json(run: RunReport) -> dict[str, Any]:
    """The whole run, every GradeResult included."""
    return {
        "ok": run.ok,
        "trials": run.trials,
        "rubrics": [
            {
                "rubric": report.rubric.identity,
                "counts": report.counts,
                "judgments": report.judgments,
                "corrected": report.corrected,
                "modes": report.modes,
                "accuracy": report.accuracy,
                "kappa": report.kappa,
                "flaky": report.flaky,
                "exact_score_agreement": report.exact_score_agreement,
                "mean_absolute_error": report.mean_absolute_error,
                "goldens": [
                    {
                        "name": outcome.golden.name,
                        "expected": outcome.golden.expected,
                        "expected_score": outcome.golden.expected_score,
                        "verdicts": outcome.verdicts,
                        "agreed": outcome.agreed,
                        "flaky": outcome.flaky,
                        "results": [result.model_dump(mode="json") for result in outcome.results],
                    }
                    for outcome in report.outcomes
                ],
            }
            for report in run.rubrics
        ],
    }


def format_json(run: RunReport) -> str:
    return json.dumps(to_json(run), indent=2)


def format_junit(run: RunReport) -> str:
    """JUnit XML: one testcase per golden and trial, so CI shows regressions natively."""
    root = ElementTree.Element("testsuites", name="rubriclib test-goldens")
    for report in run.rubrics:
        rubric = report.rubric
        counts = report.counts
        misses = counts["false_pass"] + counts["false_fail"]
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name=f"{rubric.name}@{rubric.version}",
            tests=str(report.judgments),
            failures=str(misses),
            errors=str(counts["errors"]),
        )
        properties = ElementTree.SubElement(suite, "properties")
        ElementTree.SubElement(
            properties, "property", name="corrected", value=str(report.corrected)
        )
        for outcome in report.outcomes:
            for trial, result in enumerate(outcome.results, start=1):
                case = ElementTree.SubElement(
                    suite,
                    "testcase",
                    classname=f"{rubric.name}@{rubric.version}",
                    name=f"{outcome.golden.name} [trial {trial}]",
                    time=f"{result.details['judge']['latency_ms'] / 1000:.3f}",
                )
                if result.details["judge"].get("corrected"):
                    marks = ElementTree.SubElement(case, "properties")
                    ElementTree.SubElement(marks, "property", name="corrected", value="true")
                if result.verdict == "error":
                    element = ElementTree.SubElement(case, "error", message="judge error")
                    element.text = result.reason
                elif result.verdict != outcome.golden.expected:
                    message = f"expected {outcome.golden.expected}, got {result.verdict}"
                    element = ElementTree.SubElement(case, "failure", message=message)
                    element.text = result.reason
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)


FORMATTERS = {"table": format_table, "json": format_json, "junit": format_junit}

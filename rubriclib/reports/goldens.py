"""Reports of a golden run: a table for people, JSON for programs (JUnit XML for CI is
`goldens_junit`'s)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from rubriclib.errors import printable
from rubriclib.judging import (
    GradeResult,
    failed_items,
    failed_items_text,
    pairwise_stats,
)
from rubriclib.measure import GoldenOutcome, GoldensReport, RubricReport, kappa_band
from rubriclib.reports.common import (
    citations_json,
    citations_text,
    decimal_text,
    flip_rates_json,
    flip_rates_text,
    interval_json,
    interval_text,
    one_line,
    pairwise_text,
    percent_text,
    quotes_text,
    run_json,
    unjudged_text,
)
from rubriclib.reports.goldens_junit import format_junit, interrupted_signal

_REASON_WIDTH = 160
_QUOTE_WIDTH = 80


def _results(run: GoldensReport) -> list[GradeResult]:
    return [result for report in run.rubrics for o in report.outcomes for result in o.results]


def _planned(run: GoldensReport) -> int:
    if run.info is not None:
        return run.info.planned
    return run.trials * sum(len(report.outcomes) for report in run.rubrics)


def _summary_line(report: RubricReport) -> str:
    rubric = report.rubric
    summary = (
        f"{printable(rubric.name)}@{printable(rubric.version)}  "
        f"accuracy {percent_text(report.accuracy)}{_judged_text(report)}"
        f"{interval_text(report.accuracy_interval, percent_text)}"
        f"  kappa {decimal_text(report.kappa)}"
        f"{f' {kappa_band(report.kappa)}' if report.kappa is not None else ''}"
        f"{interval_text(report.kappa_interval, decimal_text)}  "
        f"{counts_text(report.counts)}, flaky {len(report.flaky)}, "
        f"corrected {report.corrected}"
    )
    if report.asks_cites:
        summary += f", missed cites {report.uncited}"
    if report.asks_output:
        summary += f", missed output fields {report.unmatched}"
    if cited := citations_text(report.citations):
        summary += f"  citations {cited}"
    if report.score_pairs:
        summary += (
            f"  exact score {percent_text(report.exact_score_agreement)}"
            f"  MAE {decimal_text(report.mean_absolute_error)}"
        )
    if report.rubric.scale == "pairwise":
        summary += f"  {pairwise_text(pairwise_stats(_rubric_results(report)))}"
    return summary


def _judged_text(report: RubricReport) -> str:
    """What accuracy is over when judge errors were left out of it: ` of 13 judged (2 judge
    error(s) left out)`; nothing when every judgment gave a verdict."""
    if not report.errors:
        return ""
    return f" of {report.judged} judged ({report.errors} judge error(s) left out)"


def _rubric_results(report: RubricReport) -> list[GradeResult]:
    return [result for outcome in report.outcomes for result in outcome.results]


def counts_text(counts: dict[str, Any]) -> str:
    """`RubricReport.counts` as text: true / false pass / fail, or on a pairwise or labels
    rubric the judged answers per expected one (a labels rubric's verdicts after them); then
    judge errors."""
    if "true_pass" in counts:
        return f"{_verdicts_text(counts)}, judge errors {counts['errors']}"
    answers = [
        f"{key.replace('_', ' ', 1)}: got "
        + ", ".join(f"{answer} {count}" for answer, count in cell.items())
        for key, cell in counts.items()
        if key.startswith("expected_")
    ]
    text = "; ".join([*answers, f"judge errors {counts['errors']}"])
    return (
        f"{text}; by verdict: {_verdicts_text(counts['verdicts'])}"
        if "verdicts" in counts
        else text
    )


def _verdicts_text(counts: dict[str, Any]) -> str:
    return (
        f"true pass {counts['true_pass']}, false pass {counts['false_pass']}, "
        f"true fail {counts['true_fail']}, false fail {counts['false_fail']}"
    )


def _outcome_lines(report: RubricReport, trials: int) -> list[str]:
    names = [printable(outcome.golden.name) for outcome in report.outcomes]
    width = max(map(len, names), default=0)
    marks = [_MARKS[outcome.status] for outcome in report.outcomes]
    mark_width = max(4, *map(len, marks))
    lines = []
    for name, outcome, mark in zip(names, report.outcomes, marks, strict=True):
        expected = f"{name:<{width}}  expected {outcome.expected_answer}"
        mark = f"{mark:<{mark_width}}"
        if not outcome.results:
            lines.append(f"  {mark} {expected}  -- not judged")
            continue
        flaky = "  FLAKY" if outcome.flaky else ""
        partial = f"  (judged {len(outcome.results)} of {trials})"
        partial = partial if len(outcome.results) < trials else ""
        lines.append(f"  {mark} {expected}  got {', '.join(outcome.answers)}{flaky}{partial}")
        if not outcome.agreed:
            lines.append(f"{' ' * (mark_width + 3)}{_miss_text(outcome)}")
    return lines


_MARKS = {"ok": "ok", "miss": "MISS", "error": "ERROR", "not judged": "--"}
"""A golden's mark: met, missed (a regression), kept from being met by a judge error (an
outage, not a miss), or not judged (an interrupt); a rubric's marks are padded alike."""


def _miss_text(outcome: GoldenOutcome) -> str:
    """Why a golden was not met, from its first judgment that missed (else its first judge
    error): the judge's reason when the verdict was wrong or none came, else the quotes of
    `cites` it did not cite or the output fields it got wrong."""
    result, answer = min(
        (
            (result, answer)
            for result, answer, met in zip(
                outcome.results, outcome.answers, outcome.met, strict=True
            )
            if not met
        ),
        key=lambda judged: judged[1] == "error",
    )
    if answer != outcome.expected_answer:
        return one_line(result.reason, _REASON_WIDTH)
    if uncited := outcome.uncited(result):
        return f"not cited: {quotes_text(uncited, _QUOTE_WIDTH)}"
    return one_line(f"output fields: {'; '.join(outcome.unmatched(result))}", _REASON_WIDTH)


def goldens_last_line(run: GoldensReport) -> str:
    """The report's summary line: OK, REGRESSION (a judged golden missed), UNDECIDED (judge
    errors alone kept goldens from being met: no regression measured) or INTERRUPTED, with the
    run's tally, where goldens missed and goldens a judge error kept from being judged are
    counted apart."""
    statuses = Counter(o.status for report in run.rubrics for o in report.outcomes)
    goldens = statuses.total()
    tally = (
        f"{len(run.rubrics)} rubric(s), {goldens} golden(s) x {run.trials} trial(s); "
        f"{statuses['miss']} golden(s) missed, "
    )
    if statuses["error"]:
        tally += unjudged_text(statuses["error"], goldens, "golden", run.errors)
    else:
        tally += f"{run.errors} judge error(s)"
    if statuses["not judged"]:
        tally += f", {statuses['not judged']} golden(s) not judged"
    interrupted = interrupted_signal(run)
    if interrupted is None:
        verdict = {"ok": "OK", "regression": "REGRESSION", "undecided": "UNDECIDED"}[run.status]
        measured = "; no regression measured" if run.status == "undecided" else ""
        return f"{verdict}: {tally}{measured}"
    judged = len(_results(run))
    return (
        f"INTERRUPTED ({printable(interrupted)}): judged {judged} of {_planned(run)} "
        f"judgment(s); {tally}"
    )


def format_table(run: GoldensReport) -> str:
    """A report for people; the last line is the verdict (OK, REGRESSION, UNDECIDED or
    INTERRUPTED)."""
    lines: list[str] = []
    for report in run.rubrics:
        lines.append(_summary_line(report))
        if failed := failed_items(report.rubric, _rubric_results(report)):
            lines.append(f"  {failed_items_text(failed)}")
        if run.trials > 1:
            rates = flip_rates_text(report.flip_rates, run.trials, "golden", report.errors)
            lines.append(f"  {rates}")
        if run.trials > 1 and report.flipped:
            flipped = ", ".join(printable(name) for name in report.flipped)
            lines.append(f"  flipped across trials: {flipped}")
        lines.extend(_outcome_lines(report, run.trials))
        lines.append("")
    if run.trials > 1 and len(run.rubrics) > 1:
        lines.append(
            f"all rubrics {flip_rates_text(run.flip_rates, run.trials, 'golden', run.errors)}"
        )
    lines.append(goldens_last_line(run))
    return "\n".join(lines)


def _run_json(run: GoldensReport) -> dict[str, Any]:
    results = _results(run)
    return {
        **run_json(run.info, results),
        "planned": _planned(run),
        "judged": len(results),
        "interrupted": interrupted_signal(run),
    }


def _golden_json(outcome: GoldenOutcome) -> dict[str, Any]:
    return {
        **outcome.golden.model_dump(mode="json"),  # every field of the golden
        "verdicts": outcome.verdicts,
        "answers": outcome.answers,
        "agreed": outcome.agreed,
        "status": outcome.status,
        "met": outcome.met,
        "uncited": [outcome.uncited(result) for result in outcome.results],
        "unmatched": [outcome.unmatched(result) for result in outcome.results],
        "flaky": outcome.flaky,
        "flipped": outcome.flipped,
        "results": [result.model_dump(mode="json") for result in outcome.results],
    }


def _rubric_json(report: RubricReport, trials: int) -> dict[str, Any]:
    return {
        "rubric": report.rubric.identity,
        "counts": report.counts,
        "judgments": report.judgments,
        "judged": report.judged,
        "errors": report.errors,
        "corrected": report.corrected,
        "misses": report.misses,
        "uncited": report.uncited,
        "unmatched": report.unmatched,
        "citations": citations_json(report.citations),
        "modes": report.modes,
        "accuracy": report.accuracy,
        "accuracy_interval": interval_json(report.accuracy_interval),
        "kappa": report.kappa,
        "kappa_interval": interval_json(report.kappa_interval),
        "kappa_band": kappa_band(report.kappa) if report.kappa is not None else None,
        "flaky": report.flaky,
        "flip_rates": flip_rates_json(report.flip_rates if trials > 1 else None),
        "exact_score_agreement": report.exact_score_agreement,
        "mean_absolute_error": report.mean_absolute_error,
        "pairwise": (
            pairwise_stats(_rubric_results(report)) if report.rubric.scale == "pairwise" else None
        ),
        "checklist_failures": failed_items(report.rubric, _rubric_results(report)),
        "goldens": [_golden_json(outcome) for outcome in report.outcomes],
    }


def to_json(run: GoldensReport) -> dict[str, Any]:
    """The whole run, every GradeResult included, text exactly as received."""
    return {
        "ok": run.ok,
        "status": run.status,
        "trials": run.trials,
        "run": _run_json(run),
        "flip_rates": flip_rates_json(run.flip_rates if run.trials > 1 else None),
        "rubrics": [_rubric_json(report, run.trials) for report in run.rubrics],
    }


def format_json(run: GoldensReport) -> str:
    """`to_json` as ASCII JSON: control characters and lone surrogates escaped as \\uXXXX."""
    return json.dumps(to_json(run), indent=2)


GOLDENS_FORMATTERS: dict[str, Callable[[GoldensReport], str]] = {
    "table": format_table,
    "json": format_json,
    "junit": format_junit,
}

"""Reports of a golden run: a table for people, JSON for programs, JUnit XML for CI."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from rubriclib.errors import printable
from rubriclib.item import Transcript
from rubriclib.judging import (
    GradeResult,
    failed_items,
    failed_items_text,
    fence,
    pairwise_stats,
    run_blocks,
)
from rubriclib.measure import GoldenOutcome, RubricReport, RunReport, answer_of, kappa_band
from rubriclib.reports.common import (
    citations_json,
    citations_text,
    decimal_text,
    interval_json,
    interval_text,
    junit_text,
    junit_totals,
    latency_seconds,
    one_line,
    pairwise_text,
    percent_text,
    quotes_text,
    run_json,
    xml_element,
    xml_properties,
)

_REASON_WIDTH = 160
_QUOTE_WIDTH = 80


def _interrupted(run: RunReport) -> str | None:
    return run.info.interrupted if run.info is not None else None


def _results(run: RunReport) -> list[GradeResult]:
    return [result for report in run.rubrics for o in report.outcomes for result in o.results]


def _planned(run: RunReport) -> int:
    if run.info is not None:
        return run.info.planned
    return run.trials * sum(len(report.outcomes) for report in run.rubrics)


def _summary_line(report: RubricReport) -> str:
    rubric = report.rubric
    summary = (
        f"{printable(rubric.name)}@{printable(rubric.version)}  "
        f"accuracy {percent_text(report.accuracy)}"
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
    lines = []
    for name, outcome in zip(names, report.outcomes, strict=True):
        expected = f"{name:<{width}}  expected {outcome.expected_answer}"
        if not outcome.results:
            lines.append(f"  --   {expected}  -- not judged")
            continue
        mark = "ok  " if outcome.agreed else "MISS"
        flaky = "  FLAKY" if outcome.flaky else ""
        partial = f"  (judged {len(outcome.results)} of {trials})"
        partial = partial if len(outcome.results) < trials else ""
        lines.append(f"  {mark} {expected}  got {', '.join(outcome.answers)}{flaky}{partial}")
        if not outcome.agreed:
            lines.append(f"       {_miss_text(outcome)}")
    return lines


def _miss_text(outcome: GoldenOutcome) -> str:
    """Why a golden was missed, from its first judgment that missed: the judge's reason when
    the verdict was wrong, else the quotes of `cites` it did not cite."""
    result, answer = next(
        (result, answer)
        for result, answer, met in zip(outcome.results, outcome.answers, outcome.met, strict=True)
        if not met
    )
    if answer != outcome.expected_answer:
        return one_line(result.reason, _REASON_WIDTH)
    if uncited := outcome.uncited(result):
        return f"not cited: {quotes_text(uncited, _QUOTE_WIDTH)}"
    return one_line(f"output fields: {'; '.join(outcome.unmatched(result))}", _REASON_WIDTH)


def goldens_last_line(run: RunReport) -> str:
    """The report's summary line: OK, REGRESSION or INTERRUPTED, with the run's tally."""
    outcomes = [outcome for report in run.rubrics for outcome in report.outcomes]
    missed = sum(bool(outcome.results) and not outcome.agreed for outcome in outcomes)
    not_judged = sum(not outcome.results for outcome in outcomes)
    tally = (
        f"{len(run.rubrics)} rubric(s), {len(outcomes)} golden(s) x {run.trials} trial(s); "
        f"{missed} golden(s) missed, {run.errors} judge error(s)"
    )
    if not_judged:
        tally += f", {not_judged} golden(s) not judged"
    interrupted = _interrupted(run)
    if interrupted is None:
        return f"{'OK' if run.ok else 'REGRESSION'}: {tally}"
    judged = len(_results(run))
    return (
        f"INTERRUPTED ({printable(interrupted)}): judged {judged} of {_planned(run)} "
        f"judgment(s); {tally}"
    )


def format_table(run: RunReport) -> str:
    """A report for people; the last line is the verdict (OK, REGRESSION or INTERRUPTED)."""
    lines: list[str] = []
    for report in run.rubrics:
        lines.append(_summary_line(report))
        if failed := failed_items(report.rubric, _rubric_results(report)):
            lines.append(f"  {failed_items_text(failed)}")
        if run.trials > 1 and report.flaky:
            flipped = ", ".join(printable(name) for name in report.flaky)
            lines.append(f"  flipped across trials: {flipped}")
        lines.extend(_outcome_lines(report, run.trials))
        lines.append("")
    lines.append(goldens_last_line(run))
    return "\n".join(lines)


def _run_json(run: RunReport) -> dict[str, Any]:
    results = _results(run)
    return {
        **run_json(run.info, results),
        "planned": _planned(run),
        "judged": len(results),
        "interrupted": _interrupted(run),
    }


def _golden_json(outcome: GoldenOutcome) -> dict[str, Any]:
    return {
        **outcome.golden.model_dump(mode="json"),  # every field of the golden
        "verdicts": outcome.verdicts,
        "answers": outcome.answers,
        "agreed": outcome.agreed,
        "met": outcome.met,
        "uncited": [outcome.uncited(result) for result in outcome.results],
        "unmatched": [outcome.unmatched(result) for result in outcome.results],
        "flaky": outcome.flaky,
        "results": [result.model_dump(mode="json") for result in outcome.results],
    }


def _rubric_json(report: RubricReport) -> dict[str, Any]:
    return {
        "rubric": report.rubric.identity,
        "counts": report.counts,
        "judgments": report.judgments,
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
        "exact_score_agreement": report.exact_score_agreement,
        "mean_absolute_error": report.mean_absolute_error,
        "pairwise": (
            pairwise_stats(_rubric_results(report)) if report.rubric.scale == "pairwise" else None
        ),
        "checklist_failures": failed_items(report.rubric, _rubric_results(report)),
        "goldens": [_golden_json(outcome) for outcome in report.outcomes],
    }


def to_json(run: RunReport) -> dict[str, Any]:
    """The whole run, every GradeResult included, text exactly as received."""
    return {
        "ok": run.ok,
        "trials": run.trials,
        "run": _run_json(run),
        "rubrics": [_rubric_json(report) for report in run.rubrics],
    }


def format_json(run: RunReport) -> str:
    """`to_json` as ASCII JSON: control characters and lone surrogates escaped as \\uXXXX."""
    return json.dumps(to_json(run), indent=2)


def _system_out(outcome: GoldenOutcome, result: GradeResult) -> str:
    """What a CI reader needs to see why a case failed: the golden's fields and the reason."""
    golden = outcome.golden
    fields = {
        "input": golden.input,
        "context": golden.context,
        "reference": golden.reference,
        "agent run": run_text(golden.transcript),
        "output": golden.output,
        "baseline": golden.baseline,
        "why": golden.why,
        "judge reason": result.reason,
    }
    return "\n".join(
        f"--- {label} ---\n{text}" for label, text in fields.items() if text is not None
    )


def run_text(transcript: Transcript | None) -> str | None:
    """A golden's run as the judge is shown it (blocks [M1] on), for a CI reader."""
    if transcript is None:
        return None
    return fence(run_blocks(transcript, budget=sys.maxsize)[0])


def _case(
    suite: ElementTree.Element,
    classname: str,
    outcome: GoldenOutcome,
    trial: int,
    result: GradeResult | None,
    skip_message: str,
) -> None:
    """One testcase: skipped when not judged, else passed, or a failure or error with its story."""
    case = xml_element(
        suite,
        "testcase",
        classname=classname,
        name=f"{outcome.golden.name} [trial {trial}]",
        time=f"{latency_seconds(result) if result else 0:.3f}",
    )
    if result is None:
        xml_element(case, "skipped", message=skip_message)
        return
    if result.details.judge.corrected:
        xml_properties(case, {"corrected": "true"})
    expected, got = outcome.expected_answer, answer_of(outcome.golden, result)
    if result.verdict == "error":
        xml_element(case, "error", result.reason, message="judge error")
    elif got != expected:
        message = f"expected {expected}, got {got}"
        xml_element(case, "failure", result.reason, message=message)
    elif uncited := outcome.uncited(result):
        quoted = ", ".join(f'"{quote}"' for quote in uncited)
        message = f"expected {expected}, got {got} but did not cite {quoted}"
        xml_element(case, "failure", f"not cited: {quoted}\n{result.reason}", message=message)
    elif unmatched := outcome.unmatched(result):
        fields = "; ".join(unmatched)
        message = f"expected {expected}, got {got} but output fields differ: {fields}"
        xml_element(case, "failure", f"{fields}\n{result.reason}", message=message)
    else:
        return
    xml_element(case, "system-out", _system_out(outcome, result))


def _suite(root: ElementTree.Element, report: RubricReport, run: RunReport) -> ElementTree.Element:
    """One testsuite per rubric: its totals as attributes, its identity as properties."""
    rubric = report.rubric
    interrupted = _interrupted(run)
    suite = xml_element(root, "testsuite", name=f"{rubric.name}@{rubric.version}")
    properties = {"version": rubric.version, "digest": rubric.digest}
    properties["corrected"] = str(report.corrected)
    if interrupted is not None:
        properties["interrupted"] = interrupted
    xml_properties(suite, properties)
    # Jenkins splits a classname at its last dot into package and class: `name@1.0.0` would
    # file every case under class `0` and start a new history on each version bump. A rubric
    # name is kebab-case (no dots) and stays the same across versions; dots are replaced anyway.
    classname = rubric.name.replace(".", "_")
    skip_message = "not judged: interrupted" if interrupted is not None else "not judged"
    for outcome in report.outcomes:
        for trial in range(1, max(run.trials, len(outcome.results)) + 1):
            result = outcome.results[trial - 1] if trial <= len(outcome.results) else None
            _case(suite, classname, outcome, trial, result, skip_message)
    skipped = sum(max(run.trials - len(outcome.results), 0) for outcome in report.outcomes)
    junit_totals(
        suite,
        tests=report.judgments + skipped,
        failures=report.misses,
        errors=report.errors,
        skipped=skipped,
        time=sum(
            latency_seconds(result) for outcome in report.outcomes for result in outcome.results
        ),
    )
    if run.info is not None:  # UTC, without an offset, as the Ant JUnit schema wants
        started = datetime.fromtimestamp(run.info.started, UTC)
        suite.set("timestamp", started.strftime("%Y-%m-%dT%H:%M:%S"))
    return suite


def format_junit(run: RunReport) -> str:
    """JUnit XML: a testsuite per rubric, a testcase per golden and trial (`<golden> [trial N]`),
    every text through `xml_safe`; totals on <testsuites>, whose time is the run's wall time."""
    root = ElementTree.Element("testsuites", name="rubriclib test-goldens")
    interrupted = _interrupted(run)
    if interrupted is not None:
        xml_properties(root, {"interrupted": interrupted})
    suites = [_suite(root, report, run) for report in run.rubrics]

    def total(name: str) -> int:
        return sum(int(suite.get(name, "0")) for suite in suites)

    info = run.info
    time = info.finished - info.started if info else sum(float(s.get("time", 0)) for s in suites)
    junit_totals(root, total("tests"), total("failures"), total("errors"), total("skipped"), time)
    return junit_text(root)


GOLDENS_FORMATTERS: dict[str, Callable[[RunReport], str]] = {
    "table": format_table,
    "json": format_json,
    "junit": format_junit,
}

"""A goldens run as JUnit XML for CI: a testsuite per rubric, a testcase per golden and trial;
a miss is a failure, a judge error an error (an outage, not a regression)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from datetime import UTC, datetime

from rubriclib.item import Transcript
from rubriclib.judging import GradeResult, fence, run_blocks
from rubriclib.measure import FlipRates, GoldenOutcome, GoldensReport, RubricReport, answer_of
from rubriclib.reports.common import (
    junit_text,
    junit_totals,
    latency_seconds,
    xml_element,
    xml_properties,
)


def interrupted_signal(run: GoldensReport) -> str | None:
    """The signal that interrupted the run (`SIGINT`, `SIGTERM`), None when it finished."""
    return run.info.interrupted if run.info is not None else None


def flip_rates_properties(rates: FlipRates, trials: int) -> dict[str, str]:
    """Flip rates as JUnit properties (none after a single trial: nothing to compare); a share
    with four decimals, left out when nothing was compared."""
    if trials < 2:
        return {}
    shares = {"flipped_share": rates.flipped_share, "disagreement": rates.disagreement}
    return {
        "trials": str(trials),
        "flipped": str(rates.flipped),
        "compared": str(rates.compared),
        **{name: f"{share:.4f}" for name, share in shares.items() if share is not None},
    }


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


def _suite(
    root: ElementTree.Element, report: RubricReport, run: GoldensReport
) -> ElementTree.Element:
    """One testsuite per rubric: its totals as attributes, its identity as properties."""
    rubric = report.rubric
    interrupted = interrupted_signal(run)
    suite = xml_element(root, "testsuite", name=f"{rubric.name}@{rubric.version}")
    properties = {"version": rubric.version, "digest": rubric.digest}
    properties["corrected"] = str(report.corrected)
    properties.update(flip_rates_properties(report.flip_rates, run.trials))
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


def format_junit(run: GoldensReport) -> str:
    """JUnit XML: a testsuite per rubric, a testcase per golden and trial (`<golden> [trial N]`),
    every text through `xml_safe`; totals on <testsuites>, whose time is the run's wall time."""
    root = ElementTree.Element("testsuites", name="rubriclib test-goldens")
    interrupted = interrupted_signal(run)
    properties = flip_rates_properties(run.flip_rates, run.trials)
    if interrupted is not None:
        properties["interrupted"] = interrupted
    if properties:
        xml_properties(root, properties)
    suites = [_suite(root, report, run) for report in run.rubrics]

    def total(name: str) -> int:
        return sum(int(suite.get(name, "0")) for suite in suites)

    info = run.info
    time = info.finished - info.started if info else sum(float(s.get("time", 0)) for s in suites)
    junit_totals(root, total("tests"), total("failures"), total("errors"), total("skipped"), time)
    return junit_text(root)

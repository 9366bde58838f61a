"""Reports of a golden run: a table for people, JSON for programs, JUnit XML for CI.

Every report stays valid whatever text a judge or a goldens file holds: the table shows
control characters as escapes (`printable`), JUnit XML replaces what XML 1.0 cannot carry
(`xml_safe`), and JSON keeps text exactly, escaped by `json.dumps`.
"""

from __future__ import annotations

import json
import re
import unicodedata
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from rubriclib import __version__
from rubriclib.agreement import Interval, kappa_band
from rubriclib.goldens import GoldenOutcome, RubricReport, RunInfo, RunReport, answer_of
from rubriclib.result import GradeResult, pairwise_stats

# Unicode categories `printable` shows as escapes: controls (ANSI escape sequences start with
# one, C1 controls included), format characters (bidi overrides, zero-width and tag characters
# that reorder or hide text), lone surrogates (no terminal encoding can carry them) and the
# line and paragraph separators.
_UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

# What `xml_safe` replaces: characters XML 1.0 forbids even as references (C0 controls but tab,
# newline and carriage return; surrogates; U+FFFE, U+FFFF) and those its section 2.2 asks
# documents to avoid (DEL, C1 controls, noncharacters).
_XML_UNSAFE = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
    + "".join(f"\\U{plane:04x}fffe\\U{plane:04x}ffff" for plane in range(1, 17))
    + "]"
)

_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_BLANKS = re.compile(r"[ \t\r\n]+")
_REASON_WIDTH = 160


def _escape(char: str) -> str:
    """One character as a visible Python-style escape: \\n, \\x1b, \\u202e, \\U000e0041."""
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str, limit: int | None = None) -> str:
    """Text safe to print on a terminal: controls, format characters, surrogates and line
    separators shown as escapes (\\x1b, \\n, \\u202e); longer than `limit` cut with "..."."""
    if text.isprintable() and (limit is None or len(text) <= limit):
        return text
    pieces: list[str] = []
    length = 0
    for char in text:
        piece = _escape(char) if unicodedata.category(char) in _UNPRINTABLE else char
        if limit is not None and length + len(piece) > limit:
            return "".join(pieces) + "..."
        pieces.append(piece)
        length += len(piece)
    return "".join(pieces)


def xml_safe(text: str) -> str:
    """Text XML 1.0 can carry: characters it forbids or discourages shown as escapes like
    `printable`'s (\\x1b, \\ud800); tab, newline and carriage return are kept."""
    return _XML_UNSAFE.sub(lambda match: _escape(match.group()), text)


def one_line(text: str, limit: int) -> str:
    """Text on one line for the table: blanks and line breaks collapsed, the rest `printable`."""
    return printable(_BLANKS.sub(" ", text).strip(), limit)


def percent_text(value: float | None) -> str:
    """A share as a percentage with one decimal (`n/a` when None)."""
    return "n/a" if value is None else f"{value:.1%}"


def decimal_text(value: float | None) -> str:
    """A number with two decimals (`n/a` when None)."""
    return "n/a" if value is None else f"{value:.2f}"


def _judge_value(result: GradeResult, key: str) -> Any:
    """`details.judge[key]`, or None when a result (built by hand) lacks it."""
    judge = result.details.get("judge")
    return judge.get(key) if isinstance(judge, dict) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def token_count(result: GradeResult, key: str) -> int:
    """`details.judge.usage[key]` (prompt_tokens, completion_tokens), or 0 when absent."""
    usage = _judge_value(result, "usage")
    return _count(usage.get(key)) if isinstance(usage, dict) else 0


def _seconds(result: GradeResult) -> float:
    return _count(_judge_value(result, "latency_ms")) / 1000


def _interrupted(run: RunReport) -> str | None:
    return run.info.interrupted if run.info is not None else None


def _results(run: RunReport) -> list[GradeResult]:
    return [result for report in run.rubrics for o in report.outcomes for result in o.results]


def _planned(run: RunReport) -> int:
    if run.info is not None:
        return run.info.planned
    return run.trials * sum(len(report.outcomes) for report in run.rubrics)


def _summary_line(report: RubricReport) -> str:
    counts = report.counts
    rubric = report.rubric
    summary = (
        f"{printable(rubric.name)}@{printable(rubric.version)}  "
        f"accuracy {percent_text(report.accuracy)}"
        f"{interval_text(report.accuracy_interval, percent_text)}"
        f"  kappa {decimal_text(report.kappa)}"
        f"{f' {kappa_band(report.kappa)}' if report.kappa is not None else ''}"
        f"{interval_text(report.kappa_interval, decimal_text)}  "
        f"true pass {counts['true_pass']}, false pass {counts['false_pass']}, "
        f"true fail {counts['true_fail']}, false fail {counts['false_fail']}, "
        f"judge errors {counts['errors']}, flaky {len(report.flaky)}, "
        f"corrected {report.corrected}"
    )
    if report.score_pairs:
        summary += (
            f"  exact score {percent_text(report.exact_score_agreement)}"
            f"  MAE {decimal_text(report.mean_absolute_error)}"
        )
    if report.rubric.scale == "pairwise":
        summary += f"  {pairwise_text(pairwise_stats(_rubric_results(report)))}"
    return summary


def pairwise_text(stats: dict[str, Any]) -> str:
    """Win / tie / loss rates of the output against the baseline, and the position-flip rate."""
    text = (
        f"output win {percent_text(stats['win_rate'])}, tie {percent_text(stats['tie_rate'])}, "
        f"loss {percent_text(stats['loss_rate'])}; position flips "
        f"{percent_text(stats['flip_rate'])}"
    )
    if stats["comparisons"]:
        text += f" ({stats['position_flips']} of {stats['comparisons']})"
    return text


def _rubric_results(report: RubricReport) -> list[GradeResult]:
    return [result for outcome in report.outcomes for result in outcome.results]


def interval_text(interval: Interval | None, show: Callable[[float | None], str]) -> str:
    """The 95% interval to print beside a number (empty when there is none)."""
    if interval is None:
        return ""
    return f"  (95% interval {show(interval[0])} to {show(interval[1])})"


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
            miss = next(
                result
                for result, answer in zip(outcome.results, outcome.answers, strict=True)
                if answer != outcome.expected_answer
            )
            lines.append(f"       {one_line(miss.reason, _REASON_WIDTH)}")
    return lines


def _last_line(run: RunReport) -> str:
    outcomes = [outcome for report in run.rubrics for outcome in report.outcomes]
    missed = sum(bool(outcome.results) and not outcome.agreed for outcome in outcomes)
    not_judged = sum(not outcome.results for outcome in outcomes)
    errors = sum(report.counts["errors"] for report in run.rubrics)
    tally = (
        f"{len(run.rubrics)} rubric(s), {len(outcomes)} golden(s) x {run.trials} trial(s); "
        f"{missed} golden(s) missed, {errors} judge error(s)"
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
        if run.trials > 1 and report.flaky:
            flipped = ", ".join(printable(name) for name in report.flaky)
            lines.append(f"  flipped across trials: {flipped}")
        lines.extend(_outcome_lines(report, run.trials))
        lines.append("")
    lines.append(_last_line(run))
    return "\n".join(lines)


def iso_time(timestamp: float) -> str:
    """A time.time() value as ISO 8601 UTC, e.g. 2025-01-31T09:30:00.250Z."""
    moment = datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")
    return moment.replace("+00:00", "Z")


def run_json(info: RunInfo | None, results: list[GradeResult]) -> dict[str, Any]:
    """What a run was (version, judge, endpoint, times, tokens summed over `results`), for the
    `run` object of a JSON report."""
    return {
        "rubriclib_version": __version__,
        "judge_model": info.judge_model if info else None,
        "endpoint": info.endpoint if info else None,
        "started": iso_time(info.started) if info else None,
        "finished": iso_time(info.finished) if info else None,
        "duration_seconds": round(info.finished - info.started, 3) if info else None,
        "usage": {
            key: sum(token_count(result, key) for result in results)
            for key in ("prompt_tokens", "completion_tokens")
        },
    }


def _run_json(run: RunReport) -> dict[str, Any]:
    results = _results(run)
    return {
        **run_json(run.info, results),
        "planned": _planned(run),
        "judged": len(results),
        "interrupted": _interrupted(run),
    }


def _golden_json(outcome: GoldenOutcome) -> dict[str, Any]:
    golden = outcome.golden
    return {
        "name": golden.name,
        "expected": golden.expected,
        "expected_winner": golden.expected_winner,
        "expected_score": golden.expected_score,
        "tags": list(golden.tags),
        "why": golden.why,
        "input": golden.input,
        "context": golden.context,
        "reference": golden.reference,
        "output": golden.output,
        "baseline": golden.baseline,
        "verdicts": outcome.verdicts,
        "answers": outcome.answers,
        "agreed": outcome.agreed,
        "flaky": outcome.flaky,
        "results": [result.model_dump(mode="json") for result in outcome.results],
    }


def _interval_json(interval: Interval | None) -> dict[str, float] | None:
    return None if interval is None else {"low": interval[0], "high": interval[1]}


def _rubric_json(report: RubricReport) -> dict[str, Any]:
    return {
        "rubric": report.rubric.identity,
        "counts": report.counts,
        "judgments": report.judgments,
        "corrected": report.corrected,
        "modes": report.modes,
        "accuracy": report.accuracy,
        "accuracy_interval": _interval_json(report.accuracy_interval),
        "kappa": report.kappa,
        "kappa_interval": _interval_json(report.kappa_interval),
        "kappa_band": kappa_band(report.kappa) if report.kappa is not None else None,
        "flaky": report.flaky,
        "exact_score_agreement": report.exact_score_agreement,
        "mean_absolute_error": report.mean_absolute_error,
        "pairwise": (
            pairwise_stats(_rubric_results(report)) if report.rubric.scale == "pairwise" else None
        ),
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


def xml_element(
    parent: ElementTree.Element, tag: str, text: str | None = None, **attributes: str
) -> ElementTree.Element:
    """A child element whose text and attributes have passed through `xml_safe`."""
    safe = {name: xml_safe(value) for name, value in attributes.items()}
    element = ElementTree.SubElement(parent, tag, safe)
    if text is not None:
        element.text = xml_safe(text)
    return element


def xml_properties(parent: ElementTree.Element, values: dict[str, str]) -> None:
    properties = xml_element(parent, "properties")
    for name, value in values.items():
        xml_element(properties, "property", name=name, value=value)


def _system_out(outcome: GoldenOutcome, result: GradeResult) -> str:
    """What a CI reader needs to see why a case failed: the golden's fields and the reason."""
    golden = outcome.golden
    fields = {
        "input": golden.input,
        "context": golden.context,
        "reference": golden.reference,
        "output": golden.output,
        "baseline": golden.baseline,
        "why": golden.why,
        "judge reason": result.reason,
    }
    return "\n".join(
        f"--- {label} ---\n{text}" for label, text in fields.items() if text is not None
    )


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
        time=f"{_seconds(result) if result else 0:.3f}",
    )
    if result is None:
        xml_element(case, "skipped", message=skip_message)
        return
    if _judge_value(result, "corrected"):
        xml_properties(case, {"corrected": "true"})
    expected, got = outcome.expected_answer, answer_of(outcome.golden, result)
    if result.verdict == "error":
        xml_element(case, "error", result.reason, message="judge error")
    elif got != expected:
        message = f"expected {expected}, got {got}"
        xml_element(case, "failure", result.reason, message=message)
    else:
        return
    xml_element(case, "system-out", _system_out(outcome, result))


def junit_totals(
    element: ElementTree.Element, tests: int, failures: int, errors: int, skipped: int, time: float
) -> None:
    """The JUnit totals as attributes, in the usual order; `time` in seconds."""
    totals = {"tests": tests, "failures": failures, "errors": errors, "skipped": skipped}
    for name, value in totals.items():
        element.set(name, str(value))
    element.set("time", f"{max(time, 0.0):.3f}")


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
    counts = report.counts
    skipped = sum(max(run.trials - len(outcome.results), 0) for outcome in report.outcomes)
    junit_totals(
        suite,
        tests=report.judgments + skipped,
        failures=counts["false_pass"] + counts["false_fail"],
        errors=counts["errors"],
        skipped=skipped,
        time=sum(_seconds(result) for outcome in report.outcomes for result in outcome.results),
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
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)


FORMATTERS: dict[str, Callable[[RunReport], str]] = {
    "table": format_table,
    "json": format_json,
    "junit": format_junit,
}

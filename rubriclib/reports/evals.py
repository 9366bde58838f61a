"""Reports of an eval run: a table for people, JSON for dashboards, JUnit XML for CI (a testcase
per row and grader). Text passes through the same guards as the golden reports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from typing import Any

from rubriclib._version import __version__
from rubriclib.errors import printable
from rubriclib.evals import EvalReport, GraderStats
from rubriclib.judging import pairwise_stats
from rubriclib.measure import label_counts, summarise_outputs
from rubriclib.reports.common import (
    iso_time,
    junit_text,
    junit_totals,
    one_line,
    pairwise_text,
    percent_text,
    xml_element,
    xml_properties,
)
from rubriclib.reports.output_fields import labels_text, output_field_lines, output_heading

HEADINGS = ("grader", "rubric", "judged", "pass", "fail", "error", "pass rate", "mean", "tokens")
VERDICT_WORDS = {
    "passed": "PASSED: every gate condition holds",
    "failed": "FAILED: a gate condition does not hold",
    "undecided": "UNDECIDED: judge errors leave the gate open",
}


def _decimal(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _row_of(stats: GraderStats) -> tuple[str, ...]:
    rubric = stats.grader.rubric
    return (
        printable(stats.grader.name),
        f"{rubric.name}@{rubric.version}",
        str(stats.judged),
        str(stats.passed),
        str(stats.failed),
        str(stats.errors),
        percent_text(stats.pass_rate),
        _decimal(stats.mean_score),
        f"{stats.prompt_tokens + stats.completion_tokens:,}",
    )


def grader_pairwise(stats: GraderStats, report: EvalReport) -> dict[str, Any] | None:
    """A pairwise grader's win / tie / loss counts and rates and its position-flip rate (None
    for other graders). Wins, ties and losses follow from the stats (a win passes and scores
    1, a tie fails and scores 0.5, a loss scores 0); the stats count the flips."""
    if stats.grader.rubric.scale != "pairwise":
        return None
    if report.cases is not None:
        mine = [result for _, grader, result in report.cases if grader == stats.grader.name]
        return pairwise_stats(mine)
    ties = round(2 * (stats.score_sum - stats.passed))
    counts = {"win": stats.passed, "tie": ties, "loss": stats.failed - ties}
    decided = stats.passed + stats.failed
    flips, comparisons = stats.position_flips, stats.comparisons
    return {
        **counts,
        "errors": stats.errors,
        **{f"{key}_rate": value / decided if decided else None for key, value in counts.items()},
        "position_flips": flips,
        "comparisons": comparisons,
        "flip_rate": flips / comparisons if comparisons else None,
    }


def grader_output(stats: GraderStats) -> dict[str, Any] | None:
    """What the grader's judges filled in the rubric's output fields, summed over its verdicts
    (`measure.summarise_outputs`); None when the rubric has no output fields."""
    schema = stats.grader.rubric.output
    return summarise_outputs(schema, stats.outputs) if schema else None


def grader_labels(stats: GraderStats) -> dict[str, int] | None:
    """On a labels rubric, how many of the grader's verdicts gave each label, in the rubric's
    order, zeros kept (`measure.label_counts`); None on any other rubric."""
    labels = stats.grader.rubric.labels
    return label_counts(labels, stats.labels) if labels else None


def _labels_words(stats: GraderStats) -> str | None:
    """The label counts as the table, JUnit and the HTML report word them."""
    counts, labels = grader_labels(stats), stats.grader.rubric.labels
    return labels_text(counts, labels) if counts is not None and labels else None


def _output_lines(stats: GraderStats) -> list[str]:
    """The table's indented lines under a grader with labels or output fields."""
    words = _labels_words(stats)
    lines = [f"  labels: {one_line(words, 300)}"] if words is not None else []
    summary = grader_output(stats)
    if summary is None:
        return lines
    fields = [f"    {name}: {one_line(text, 200)}" for name, text in output_field_lines(summary)]
    return [*lines, f"  {output_heading(summary, stats.judged)}:", *fields]


def eval_last_line(report: EvalReport) -> str:
    """The one-line verdict of the run."""
    judged = sum(stats.judged for stats in report.graders)
    if report.interrupted:
        planned, done = report.rows_planned, report.rows_judged
        return (
            f"INTERRUPTED ({report.interrupted}): {done} of {planned} rows judged; "
            f"{planned - done} not judged (interrupted); {judged} result(s); the gate was not "
            "decided"
        )
    errors = sum(stats.errors for stats in report.graders)
    if not report.eval.gate:
        word = "UNDECIDED: judge errors, and no gate" if errors else "PASSED: no gate to hold"
    else:
        word = VERDICT_WORDS[report.status]
    return f"{word} ({judged} result(s), {errors} judge error(s), {report.rows} row(s))"


def format_table(report: EvalReport) -> str:
    """The report for people."""
    ev = report.eval
    lines = [
        f"{printable(ev.name)} ({ev.shape} eval): {report.rows} row(s) x {len(ev.graders)} "
        f"grader(s)"
        + (f", {report.resumed} result(s) kept from a previous run" if report.resumed else ""),
        "",
    ]
    table = [HEADINGS, *(_row_of(stats) for stats in report.graders)]
    widths = [max(len(row[column]) for row in table) for column in range(len(HEADINGS))]
    for row, stats in zip(table, [None, *report.graders], strict=True):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
        lines += _output_lines(stats) if stats else []
    pairwise = [(s, grader_pairwise(s, report)) for s in report.graders]
    if any(found is not None for _, found in pairwise):
        lines += ["", "pairwise (the output against the baseline):"]
        for stats, found in pairwise:
            if found is not None:
                lines.append(f"  {printable(stats.grader.name)}: {pairwise_text(found)}")
    if report.gate:
        lines += ["", "gate:"]
        for outcome in report.gate:
            mark = {True: "ok  ", False: "FAIL", None: "??  "}[outcome.holds]
            lines.append(f"  {mark} {outcome.condition}: {_decimal(outcome.value)}")
    if report.eval.reward:
        reward = next(s for s in report.graders if s.grader.name == report.eval.reward)
        lines += ["", f"reward ({report.eval.reward} mean score): {_decimal(reward.mean_score)}"]
    if report.most_failed_rows:
        lines += ["", "rows that failed most graders:"]
        total = len(report.graders)
        for row_id, count in report.most_failed_rows:
            lines.append(f"  row {one_line(row_id, 60)}: failed {count} of {total}")
        if (more := len(report.failures_by_row) - len(report.most_failed_rows)) > 0:
            lines.append(f"  ... and {more} more")
    lines += _error_lines(report)
    if ev.skipped:
        lines += ["", "not run:"] + [f"  {printable(line)}" for line in ev.skipped]
    lines += ["", eval_last_line(report)]
    return "\n".join(lines)


def _error_lines(report: EvalReport) -> list[str]:
    """The rows with judge errors (the first rows'), each with its error's first line."""
    if not report.first_errors:
        return []
    lines = ["", "rows with judge errors (the first line of each error):"]
    for _, row_id, grader, reason in report.first_errors:
        first = reason.strip().splitlines()[0] if reason.strip() else "(no reason given)"
        lines.append(f"  row {one_line(row_id, 60)}, {printable(grader)}: {one_line(first, 160)}")
    more = sum(stats.errors for stats in report.graders) - len(report.first_errors)
    return lines + ([f"  ... and {more} more"] if more > 0 else [])


def to_json(report: EvalReport) -> dict[str, Any]:
    """The whole report as data."""
    ev = report.eval
    return {
        "eval": {"name": ev.name, "path": str(ev.path), "shape": ev.shape},
        "status": report.status,
        "run": {
            "rubriclib_version": __version__,
            "started": iso_time(report.started),
            "finished": iso_time(report.finished or report.started),
            "duration_seconds": round(max(report.finished - report.started, 0.0), 3),
            "rows": report.rows,
            "rows_planned": report.rows_planned,
            "rows_judged": report.rows_judged,
            "resumed": report.resumed,
            "interrupted": report.interrupted,
        },
        "graders": [
            {
                "name": stats.grader.name,
                "rubric": stats.grader.rubric.identity,
                "judge_model": stats.model,
                "judged": stats.judged,
                "pass": stats.passed,
                "fail": stats.failed,
                "error": stats.errors,
                "pass_rate": stats.pass_rate,
                "mean_score": stats.mean_score,
                "pairwise": grader_pairwise(stats, report),
                "usage": {
                    "prompt_tokens": stats.prompt_tokens,
                    "completion_tokens": stats.completion_tokens,
                },
                **({"labels": labels} if (labels := grader_labels(stats)) is not None else {}),
                **({"output": output} if (output := grader_output(stats)) else {}),
            }
            for stats in report.graders
        ],
        "gate": [
            {
                "condition": str(outcome.condition),
                "grader": outcome.condition.grader,
                "metric": outcome.condition.metric,
                "op": outcome.condition.op,
                "threshold": outcome.condition.value,
                "value": outcome.value,
                "holds": outcome.holds,
            }
            for outcome in report.gate
        ],
        "reward": ev.reward,
        "most_failed_rows": [{"row": r, "failed": n} for r, n in report.most_failed_rows],
        "first_judge_errors": [
            {"row": row, "grader": grader, "reason": reason}
            for _, row, grader, reason in report.first_errors
        ],
        "not_run": ev.skipped,
    }


def format_json(report: EvalReport) -> str:
    return json.dumps(to_json(report), indent=2)


def grader_class(stats: GraderStats) -> str:
    """A grader's JUnit classname: dots split it for Jenkins, so the name is kept whole."""
    return stats.grader.name.replace(".", "_")


def format_junit(report: EvalReport) -> str:
    """A testsuite per grader and a testcase per row (classname: the grader; name: the row id),
    built from `report.cases`, which the run keeps when JUnit is asked for."""
    root = ElementTree.Element("testsuites", name=f"rubriclib eval {report.eval.name}")
    if report.interrupted:
        xml_properties(root, {"interrupted": report.interrupted})
    cases = report.cases or []
    tests = failures = errors = 0
    for stats in report.graders:
        rubric = stats.grader.rubric
        suite = xml_element(root, "testsuite", name=stats.grader.name)
        xml_properties(
            suite,
            {
                "rubric": rubric.name,
                "version": rubric.version,
                "digest": rubric.digest,
                "judge_model": stats.model,
                **_output_properties(stats),
            },
        )
        seconds = 0.0
        for row, grader, result in cases:
            if grader != stats.grader.name:
                continue
            latency = result.details.judge.latency_ms / 1000
            seconds += latency
            case = xml_element(
                suite,
                "testcase",
                classname=grader_class(stats),
                name=f"row {row}",
                time=f"{latency:.3f}",
            )
            if result.verdict == "error":
                xml_element(case, "error", result.reason, message="judge error")
            elif result.verdict == "fail":
                xml_element(case, "failure", result.reason, message="fail")
        skipped = [row for row, grader in report.not_judged if grader == stats.grader.name]
        for row in skipped:
            case = xml_element(
                suite, "testcase", classname=grader_class(stats), name=f"row {row}", time="0.000"
            )
            xml_element(case, "skipped", message="not judged: interrupted")
        count = stats.judged + len(skipped)
        junit_totals(suite, count, stats.failed, stats.errors, len(skipped), seconds)
        suite.set("timestamp", iso_time(report.started).removesuffix("Z")[:19])
        tests, failures, errors = (
            tests + count,
            failures + stats.failed,
            errors + stats.errors,
        )
    elapsed = max(report.finished - report.started, 0.0)
    junit_totals(root, tests, failures, errors, len(report.not_judged), elapsed)
    return junit_text(root)


def _output_properties(stats: GraderStats) -> dict[str, str]:
    """A grader's label counts and output fields as JUnit properties: `labels` (as the table
    words them), `output.counted` (the judgments summed) and `output.FIELD` (what they filled
    in, as the table words it); none without labels or fields."""
    words = _labels_words(stats)
    labels = {"labels": words} if words is not None else {}
    summary = grader_output(stats)
    if summary is None:
        return labels
    fields = {f"output.{name}": text for name, text in output_field_lines(summary)}
    return {**labels, "output.counted": str(summary["counted"]), **fields}


EVAL_FORMATTERS: dict[str, Callable[[EvalReport], str]] = {
    "table": format_table,
    "json": format_json,
    "junit": format_junit,
}

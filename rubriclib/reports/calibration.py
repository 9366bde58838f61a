"""Reports of a calibration run: a table for people, JSON for programs, and the disagreements
as a goldens YAML file to review. Text passes through the same guards as the golden reports."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import yaml

from rubriclib.errors import printable
from rubriclib.evals import Row
from rubriclib.judging import failed_items, failed_items_text
from rubriclib.measure import (
    CONFIDENCE,
    RESAMPLES,
    SEED,
    Agreement,
    Calibration,
    Judged,
    kappa_band,
)
from rubriclib.reports.common import (
    citations_json,
    citations_text,
    decimal_text,
    flip_rates_json,
    flip_rates_text,
    interval_json,
    interval_text,
    one_line,
    percent_text,
    run_json,
    unjudged_text,
)

_REASON_WIDTH = 120
_GOLDEN_REASON_WIDTH = 500


def _row_name(row: Row) -> str:
    where = printable(row.where)
    return where if row.id == str(row.number) else f"{where} (id {printable(row.id, 40)})"


def agreement_lines(numbers: Agreement) -> list[str]:
    lines = [f"  accuracy       {percent_text(numbers.accuracy)}"]
    lines[0] += interval_text(numbers.accuracy_interval, percent_text)
    if numbers.kappa is None:
        lines.append(f"  Cohen's kappa  undefined: {numbers.kappa_undefined}")
    else:
        band = kappa_band(numbers.kappa)
        lines.append(
            f"  Cohen's kappa  {decimal_text(numbers.kappa)} {band}"
            + interval_text(numbers.kappa_interval, decimal_text)
        )
    if (by_verdict := numbers.pass_fail) is not None:
        kappa = "undefined" if by_verdict.kappa is None else decimal_text(by_verdict.kappa)
        lines.append(
            f"  pass/fail      accuracy {percent_text(by_verdict.accuracy)}, kappa {kappa} "
            "(each label read as the verdict it means)"
        )
    if numbers.majority is not None:
        label, score = numbers.majority
        lines.append(f"  base rate      {percent_text(numbers.base_rate)} of human labels are pass")
        lines.append(f"  majority       always saying {label} would score {percent_text(score)}")
    if numbers.scores is not None:
        exact, error, count = numbers.scores
        lines.append(
            f"  scores         exact {percent_text(exact)}, "
            f"mean absolute error {decimal_text(error)} over {count} scored row(s)"
        )
    return lines


def _confusion_lines(matrix: dict[str, dict[str, int]], judged: str = "verdict") -> list[str]:
    """The matrix as a table: a row per human label, a column per judge `judged` (verdict, or
    label on a labels rubric), then errors."""
    columns = list(next(iter(matrix.values())))
    width = max(13, *(len(column) + 7 for column in columns))
    human_width = max(6, *map(len, matrix))
    lines = [
        f"confusion (rows: human label; columns: judge {judged})",
        " " * (8 + human_width) + "".join(f"{'judge ' + column:>{width}}" for column in columns),
    ]
    for human, counts in matrix.items():
        cells = "".join(f"{counts[column]:>{width}}" for column in columns)
        lines.append(f"  human {human:<{human_width}}{cells}")
    return lines


def _tag_lines(by_tag: dict[str, Agreement]) -> list[str]:
    names = {tag: printable(tag, 40) for tag in by_tag}
    width = max(map(len, names.values()), default=0)
    lines = ["by tag"] if by_tag else []
    for tag, numbers in by_tag.items():
        kappa = "undefined" if numbers.kappa is None else decimal_text(numbers.kappa)
        lines.append(
            f"  {names[tag]:<{width}}  {numbers.verdicts} with a verdict, "
            f"accuracy {percent_text(numbers.accuracy)}, kappa {kappa}, "
            f"{numbers.disagreements} disagreement(s), {numbers.errors} judge error(s)"
        )
    return lines


def _judge_said(one: Judged) -> str:
    """The judge's answer as the reports word it: `fail`, `fail (score 2)`, on a labels
    rubric `partly-resolved (fail)`."""
    if one.labelled.label.name is not None and one.verdict != "error":
        return f"{printable(one.answer, 60)} ({one.verdict})"
    score = one.judge_score
    return one.verdict if score is None else f"{one.verdict} (score {score})"


def _case_line(one: Judged, trials: int) -> str:
    trial = f" [trial {one.trial}]" if trials > 1 else ""
    return (
        f"  {_row_name(one.labelled.row)}{trial}  human {one.labelled.label}  judge "
        f"{_judge_said(one)}: {one_line(one.result.reason, _REASON_WIDTH)}"
    )


def calibration_last_line(calibration: Calibration) -> str:
    """The report's summary line: CALIBRATED, UNDECIDED (every row ended in a judge error: an
    outage measures nothing) or INTERRUPTED, with the headline numbers."""
    numbers = calibration.overall
    kappa = "undefined" if numbers.kappa is None else decimal_text(numbers.kappa)
    if numbers.kappa is not None:
        kappa += f" ({kappa_band(numbers.kappa)})"
    tally = (
        f"accuracy {percent_text(numbers.accuracy)}, kappa {kappa} over {numbers.verdicts} "
        f"verdict(s); {numbers.disagreements} disagreement(s), {numbers.errors} judge error(s)"
    )
    if calibration.interrupted is None:
        if calibration_status(calibration) == "calibrated":
            return f"CALIBRATED: {tally}"
        rows, errors = len(calibration.rows), len(calibration.errors)
        return f"UNDECIDED: {unjudged_text(rows, rows, 'row', errors)}; nothing measured"
    signal = printable(calibration.interrupted)
    return f"INTERRUPTED ({signal}): judged {calibration_progress(calibration)}; {tally}"


def calibration_progress(calibration: Calibration) -> str:
    """How much of the run was judged: `3 of 8 row(s)`, over several trials `7 of 12
    judgment(s) (4 row(s) x 3 trials)`."""
    judged = len(calibration.judged)
    if calibration.trials == 1:
        return f"{judged} of {len(calibration.rows)} row(s)"
    return (
        f"{judged} of {calibration.planned} judgment(s) "
        f"({len(calibration.rows)} row(s) x {calibration.trials} trials)"
    )


def format_table(calibration: Calibration) -> str:
    """A report for people: the numbers, the confusion matrix, tags, disagreements, errors."""
    rubric, trials = calibration.rubric, calibration.trials
    lines = [
        f"{printable(rubric.name)}@{printable(rubric.version)} against "
        f"{printable(calibration.labels)}: {len(calibration.rows)} labelled row(s)"
        + (f" x {trials} trials" if trials > 1 else ""),
        *agreement_lines(calibration.overall),
    ]
    if trials > 1:
        errors = len(calibration.errors)
        lines.append(
            f"  flip rates     {flip_rates_text(calibration.flip_rates, trials, 'row', errors)}"
        )
    if cited := citations_text(calibration.citations):
        lines.append(f"  citations      {cited}")
    judged = "label" if calibration.label_names else "verdict"
    lines += _confusion_lines(calibration.overall.confusion, judged)
    lines += _tag_lines(calibration.by_tag)
    results = [one.result for one in calibration.judged]
    if failed := failed_items(rubric, results):
        lines.append(failed_items_text(failed))
    for title, cases in (
        ("disagreements", calibration.disagreements),
        ("judge errors", calibration.errors),
    ):
        if cases:
            lines.append(f"{title} ({len(cases)})")
            lines.extend(_case_line(one, trials) for one in cases)
    lines.extend(["", calibration_last_line(calibration)])
    return "\n".join(lines)


def agreement_json(numbers: Agreement) -> dict[str, Any]:
    exact, error, count = numbers.scores if numbers.scores is not None else (None, None, 0)
    majority = numbers.majority
    return {
        "verdicts": numbers.verdicts,
        "judge_errors": numbers.errors,
        "disagreements": numbers.disagreements,
        "accuracy": numbers.accuracy,
        "accuracy_interval": interval_json(numbers.accuracy_interval),
        "kappa": numbers.kappa,
        "kappa_interval": interval_json(numbers.kappa_interval),
        "kappa_band": None if numbers.kappa is None else kappa_band(numbers.kappa),
        "kappa_undefined": numbers.kappa_undefined,
        "base_rate": numbers.base_rate,
        "majority_baseline": None
        if majority is None
        else {"label": majority[0], "accuracy": majority[1]},
        "confusion": numbers.confusion,
        "exact_score_agreement": exact,
        "mean_absolute_error": error,
        "scored_pairs": count,
        **({"pass_fail": asdict(numbers.pass_fail)} if numbers.pass_fail is not None else {}),
    }


def _case_json(one: Judged) -> dict[str, Any]:
    row, label = one.labelled.row, one.labelled.label
    return {
        "row": row.number,
        "where": row.where,
        "id": row.id,
        "label": label.verdict,
        "score": label.score,
        "verdict": one.verdict,
        "judge_score": one.judge_score,
        "reason": one.result.reason,
        "tags": list(one.labelled.tags),
        "trial": one.trial,
        **(
            {"human_label": label.name, "judge_label": one.result.details.label}
            if label.name is not None
            else {}
        ),
    }


def calibration_status(calibration: Calibration) -> str:
    """The summary line's word: `calibrated`, `undecided` (every row a judge error) or
    `interrupted`."""
    if calibration.interrupted is not None:
        return "interrupted"
    return "undecided" if calibration.all_errors else "calibrated"


def to_json(calibration: Calibration) -> dict[str, Any]:
    """The whole calibration: rubric identity, run, numbers, tags, disagreements, errors."""
    info, results = calibration.info, [one.result for one in calibration.judged]
    return {
        "rubric": calibration.rubric.identity,
        "status": calibration_status(calibration),
        "labels": calibration.labels,
        "run": {
            **run_json(info, results),
            "rows": len(calibration.rows),
            "planned": calibration.planned,
            "judged": len(calibration.judged),
            "interrupted": calibration.interrupted,
        },
        "bootstrap": {"resamples": RESAMPLES, "seed": SEED, "confidence": CONFIDENCE},
        "trials": calibration.trials,
        "flip_rates": flip_rates_json(calibration.flip_rates if calibration.trials > 1 else None),
        **agreement_json(calibration.overall),
        "tags": {tag: agreement_json(numbers) for tag, numbers in calibration.by_tag.items()},
        "disagreement_rows": [_case_json(one) for one in calibration.disagreements],
        "judge_error_rows": [_case_json(one) for one in calibration.errors],
        "checklist_failures": failed_items(calibration.rubric, results),
        "citations": citations_json(calibration.citations),
    }


def format_json(calibration: Calibration) -> str:
    return json.dumps(to_json(calibration), indent=2)


CALIBRATION_FORMATTERS: dict[str, Callable[[Calibration], str]] = {
    "table": format_table,
    "json": format_json,
}


def golden_name(row: Row) -> str:
    """A stable golden name for a row: `calibration-line-12` (JSONL, CSV), else
    `calibration-row-3`."""
    line = re.search(r":(\d+)$", row.where)
    return f"calibration-line-{line.group(1)}" if line else f"calibration-row-{row.number}"


def disagreement_goldens(calibration: Calibration) -> list[dict[str, Any]]:
    """Each row the judge disagreed with as a golden expecting the human's label (its first
    disagreeing trial's reason), ready to review and add."""
    goldens = []
    for one in calibration.disagreeing_rows:
        item, label = one.labelled.row.item, one.labelled.label
        golden: dict[str, Any] = {"name": golden_name(one.labelled.row)}
        for field in ("input", "context", "reference"):
            if (value := getattr(item, field)) is not None:
                golden[field] = value
        golden["output"] = item.output
        golden["expected"] = label.answer  # a labels rubric's golden expects the label
        if label.score is not None:
            golden["expected_score"] = label.score
        said = _judge_said(one)
        golden["tags"] = ["calibration"]
        golden["why"] = (
            f"human label {label}; the judge said {said}: "
            f"{one_line(one.result.reason, _GOLDEN_REASON_WIDTH)}"
        )
        goldens.append(golden)
    return goldens


def goldens_yaml(calibration: Calibration) -> str:
    """The disagreements as a goldens YAML file (the format of goldens/NAME.yaml)."""
    header = (
        f"# Disagreements between the judge and human labels ({printable(calibration.labels)}) for "
        f"{calibration.rubric.name}@{calibration.rubric.version}.\n"
        "# Review each one: keep the goldens where the human was right, then add them.\n"
    )
    goldens = disagreement_goldens(calibration)
    if not goldens:
        return header + "[]\n"
    return header + yaml.safe_dump(goldens, sort_keys=False, allow_unicode=True, width=100)

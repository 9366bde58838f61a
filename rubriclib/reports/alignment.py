"""Reports of an alignment: a table for people and JSON for programs, each with the held-out
agreement before and after, the paired gain and its interval, every fold, the examples and
guideline lines of the final revision, what was spent, and the unified diff of the rubric file."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rubriclib.errors import printable
from rubriclib.measure import CONFIDENCE, RESAMPLES, SEED, Alignment, Budget
from rubriclib.reports.calibration import agreement_json, agreement_lines
from rubriclib.reports.common import decimal_text, interval_json, one_line, percent_text

_PREVIEW = 80
_LISTED = 10
"""Row ids the table lists of those a revision turned right or wrong; JSON has every row."""


def revision_diff(alignment: Alignment, destination: str | None = None) -> str:
    """The unified diff of the rubric file and its final revision (`destination`: where the
    revision goes, when not the file itself); empty without a revision."""
    if alignment.final is None:
        return ""
    source = _shown_path(alignment.rubric.path)
    lines = difflib.unified_diff(
        alignment.final.original.splitlines(keepends=True),
        alignment.final.text.splitlines(keepends=True),
        fromfile=source,
        tofile=source if destination is None else _shown_path(Path(destination)),
    )
    return "".join(f"{printable(line.rstrip(chr(10)))}\n" for line in lines)


def _shown_path(path: Path) -> str:
    """A path as the diff names it: relative to the working folder when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:+.1f} points"


def _gain_text(alignment: Alignment) -> str:
    comparison = alignment.comparison
    interval = comparison.interval
    shown = (
        ""
        if interval is None
        else f" (paired bootstrap 95% interval {_points(interval[0])} to {_points(interval[1])})"
    )
    return (
        f"{_points(comparison.gain)}{shown} over {len(comparison.outcomes)} row(s); "
        f"{comparison.left_out} left out for a judge error before or after"
    )


def alignment_last_line(alignment: Alignment) -> str:
    """The summary line: ALIGNED, NOT ALIGNED or INTERRUPTED, with the held-out numbers."""
    before = alignment.before.overall.accuracy
    after = alignment.agreement_after.accuracy
    numbers = f"held-out agreement {percent_text(before)} -> {percent_text(after)}"
    if alignment.interrupted is not None:
        return f"INTERRUPTED ({printable(alignment.interrupted)}): nothing written"
    if alignment.accepted and alignment.final is not None:
        return f"ALIGNED: {numbers}, {_gain_text(alignment)}"
    why = "not beyond noise" if not alignment.comparison.accepted else "the revision is empty"
    return f"NOT ALIGNED: {numbers}, {_gain_text(alignment)}: {why}, nothing written"


def _fold_lines(alignment: Alignment) -> list[str]:
    lines = ["per fold (each judged by a revision built from the other folds)"]
    for fold in alignment.folds:
        before, after = fold.agreement_before, fold.agreement_after
        lines.append(
            f"  fold {fold.number}  {len(fold.after)} row(s): agreement "
            f"{percent_text(before.accuracy)} -> {percent_text(after.accuracy)}, kappa "
            f"{decimal_text(before.kappa)} -> {decimal_text(after.kappa)}; "
            f"{len(fold.revision.examples)} example(s), "
            f"{len(fold.revision.guidelines)} guideline line(s)"
        )
    return lines


def row_verdicts(alignment: Alignment) -> list[dict[str, Any]]:
    """Each held-out row in file order: its number, id, the human's answer, its fold, and the
    judge's answer before and after (`error` for a judge error)."""
    rows = [
        {
            "row": before.labelled.row.number,
            "id": before.labelled.row.item.id,
            "label": before.labelled.label.answer,
            "fold": fold.number,
            "before": before.answer,
            "after": after.answer,
        }
        for fold in alignment.folds
        for before, after in zip(fold.before, fold.after, strict=True)
    ]
    return sorted(rows, key=lambda row: row["row"])


def _changed_lines(alignment: Alignment) -> list[str]:
    """The held-out rows the revision turned right or wrong, by id (or row number)."""
    lines = []
    for turned, right in (("right", True), ("wrong", False)):
        names = [
            printable(str(row["id"] or f"row {row['row']}"))
            for row in row_verdicts(alignment)
            if row["before"] != row["after"] and (row["after"] == row["label"]) == right
        ]
        if names:
            shown = ", ".join(names[:_LISTED]) + (
                f" and {len(names) - _LISTED} more" if len(names) > _LISTED else ""
            )
            lines.append(f"  turned {turned} held out ({len(names)}): {shown}")
    return lines


def _revision_lines(alignment: Alignment) -> list[str]:
    final = alignment.final
    if final is None:
        return []
    lines = [
        f"revision {printable(final.rubric.version)}: {len(final.examples)} example(s) chosen "
        "from every row, disagreements first"
    ]
    for example in final.examples:
        expected = example.expected_label or example.expected
        lines.append(
            f"  example {example.name} (expected {expected}): {one_line(example.output, _PREVIEW)}"
        )
    lines.extend(f"  guideline: {one_line(line, 200)}" for line in final.guidelines)
    return lines


def format_table(alignment: Alignment, destination: str | None = None) -> str:
    """A report for people: before, after, gain, folds, the revision, what it spent, the diff."""
    rubric, before = alignment.rubric, alignment.before
    prompt, completion = alignment.tokens
    lines = [
        f"{printable(rubric.name)}@{printable(rubric.version)} against "
        f"{printable(before.labels)}: {len(before.rows)} labelled row(s), "
        f"{len(alignment.folds)} fold(s)",
        "before (the rubric as it is)",
        *agreement_lines(before.overall),
        "after (each row judged by the revision that did not learn from it)",
        *agreement_lines(alignment.agreement_after),
        f"gain  {_gain_text(alignment)}",
        *_fold_lines(alignment),
        *_changed_lines(alignment),
        *_revision_lines(alignment),
        f"spent {alignment.requests} request(s), {prompt} prompt and {completion} completion "
        "token(s)",
    ]
    if diff := revision_diff(alignment, destination):
        lines += ["", diff.rstrip("\n")]
    lines.extend(["", alignment_last_line(alignment)])
    return "\n".join(lines)


def to_json(alignment: Alignment, destination: str | None = None) -> dict[str, Any]:
    """The whole alignment: rubric, labels, numbers before and after, gain, folds, each held-out
    row's answers before and after, the revision (its examples, guideline lines and diff),
    requests and tokens."""
    comparison, final = alignment.comparison, alignment.final
    prompt, completion = alignment.tokens
    return {
        "rubric": alignment.rubric.identity,
        "labels": alignment.before.labels,
        "rows": len(alignment.before.rows),
        "accepted": alignment.accepted,
        "interrupted": alignment.interrupted,
        "bootstrap": {"resamples": RESAMPLES, "seed": SEED, "confidence": CONFIDENCE},
        "before": agreement_json(alignment.before.overall),
        "after": agreement_json(alignment.agreement_after),
        "gain": comparison.gain,
        "gain_interval": interval_json(comparison.interval),
        "compared_rows": len(comparison.outcomes),
        "left_out_rows": comparison.left_out,
        "folds": [
            {
                "fold": fold.number,
                "rows": len(fold.after),
                "accuracy_before": fold.agreement_before.accuracy,
                "accuracy_after": fold.agreement_after.accuracy,
                "kappa_before": fold.agreement_before.kappa,
                "kappa_after": fold.agreement_after.kappa,
                "examples": [example.name for example in fold.revision.examples],
                "guidelines": fold.revision.guidelines,
            }
            for fold in alignment.folds
        ],
        "row_verdicts": row_verdicts(alignment),
        "revision": None
        if final is None
        else {
            "version": final.rubric.version,
            "digest": final.rubric.digest,
            "examples": [example.model_dump(exclude_none=True) for example in final.examples],
            "guidelines": final.guidelines,
            "diff": revision_diff(alignment, destination),
        },
        "requests": alignment.requests,
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }


def format_json(alignment: Alignment, destination: str | None = None) -> str:
    return json.dumps(to_json(alignment, destination), indent=2)


ALIGNMENT_FORMATTERS: dict[str, Callable[[Alignment, str | None], str]] = {
    "table": format_table,
    "json": format_json,
}


def budget_text(budget: Budget, rows: int, folds: int) -> str:
    """--dry-run's plan: what would be judged and asked, and the requests it would send."""
    lines = [
        f"plan: {rows} labelled row(s), {folds} fold(s)",
        f"  judged before        {budget.judgments_before} judgment(s)",
        f"  judged held out      {budget.judgments_held_out} judgment(s) (each row once, in the "
        "fold that leaves it out)",
        f"  requests/judgment    {budget.requests_per_judgment}",
        f"  optimizer calls      {budget.optimizer_calls}",
        f"  requests             at most {budget.requests} on a cold cache, before any retry",
        "dry run: no request sent",
    ]
    return "\n".join(lines)

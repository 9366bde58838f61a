"""`rubriclib calibrate`: measure a judge against human labels."""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click

from rubriclib.cli.app import (
    BadInput,
    Progress,
    ReportFiles,
    interrupted_exit,
    judging,
    main,
    writable,
)
from rubriclib.cli.options import (
    CONCURRENCY_OPTION,
    FROZEN_OPTION,
    HTML_REPORT_OPTION,
    MODEL_OPTION,
    NO_CACHE_OPTION,
    REQUESTS_PER_MINUTE_OPTION,
    checklist_options,
    concurrency_setting,
    flag_judge,
    refuse_unlocked,
)
from rubriclib.files import write_atomically

if TYPE_CHECKING:
    from rubriclib.measure.calibration import Calibration


@main.command("calibrate")
@click.argument("ref")
@click.option(
    "--labels",
    "labels_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="Rows to judge with a human `label` (pass/fail) or, for a 1-5 rubric, a `score`: "
    ".jsonl, .csv, .json or .yaml.",
)
@MODEL_OPTION
@CONCURRENCY_OPTION
@REQUESTS_PER_MINUTE_OPTION
@click.option(
    "--format",
    "report_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="A table for people, JSON for programs.",
)
@click.option("--out", help="Write the report here, not stdout (checked before any judge call).")
@HTML_REPORT_OPTION
@click.option(
    "--to-goldens",
    "goldens_out",
    help="Write every disagreement here as a goldens YAML file, to review and add.",
)
@click.option("--force", is_flag=True, help="Let --to-goldens replace an existing file.")
@click.option(
    "--min-kappa",
    type=click.FloatRange(min=-1, max=1),
    help="Exit 1 when Cohen's kappa is below this (or undefined).",
)
@NO_CACHE_OPTION
@FROZEN_OPTION
@checklist_options
def calibrate(
    ref: str,
    labels_file: str,
    model: str | None,
    concurrency: int | None,
    requests_per_minute: float | None,
    report_format: str,
    out: str | None,
    html_report: str | None,
    goldens_out: str | None,
    force: bool,
    min_kappa: float | None,
    no_cache: bool,
    frozen: bool,
    checklist: Literal["tool", "probability"] | None,
) -> None:
    """Judge human-labelled rows and report how well the judge agrees with the humans.

    Reports accuracy, Cohen's kappa (with the base rate and the always-majority baseline),
    the confusion matrix, bootstrap 95% intervals, a breakdown by tag and every disagreement
    with the judge's reason. Exit 0 when the report is made (1 with --min-kappa unmet),
    2 for bad input, 3 when every row ended in a judge error, 130/143 when interrupted (the
    report holds what was judged).

    \b
    Examples:
      rubriclib calibrate groundedness --labels labelled.jsonl
      rubriclib calibrate answer-correctness --labels scores.csv --to-goldens review.yaml
      rubriclib calibrate groundedness --labels labelled.jsonl --report calibration.html
      rubriclib calibrate groundedness --labels labelled.jsonl --checklist  (the other mode)
    """
    from rubriclib.judging.engine import interruptible
    from rubriclib.measure.calibration import load_labels, run_calibration
    from rubriclib.rubrics.registry import load_rubric

    reports = ReportFiles.checked(out, html_report)
    goldens_path = _goldens_destination(goldens_out, force, reports)
    rubric = load_rubric(ref)
    if frozen:
        refuse_unlocked([rubric])
    rows = load_labels(Path(labels_file), rubric)  # every bad row: exit 2 before any request
    judge = flag_judge([rubric], model, checklist, no_cache)  # a missing key stops here

    with interruptible() as interrupt:  # through the report: a second signal cannot cut it

        def run(progress: Progress | None) -> Coroutine[Any, Any, Calibration]:
            return run_calibration(
                judge,
                rubric,
                rows,
                labels_file,
                concurrency=concurrency_setting(concurrency),
                requests_per_minute=requests_per_minute,
                on_judgment=progress,
                interrupt=interrupt,
            )

        calibration = judging(len(rows), run, interrupt, [judge])
        _finish(calibration, report_format, reports, (goldens_path, goldens_out))
        sys.exit(_exit_code(calibration, min_kappa))


def _finish(
    calibration: Calibration,
    report_format: str,
    reports: ReportFiles,
    goldens: tuple[Path | None, str | None],
) -> None:
    """Print (or write) the report, write the disagreements as goldens and the HTML report
    when asked."""
    from rubriclib.reports.calibration import FORMATTERS, goldens_yaml, last_line
    from rubriclib.reports.pages import calibration_page

    text = FORMATTERS[report_format](calibration)
    if goldens[0] is not None:
        _write_goldens(goldens[0], goldens_yaml(calibration))
    reports.write(text, last_line(calibration), lambda: calibration_page(calibration))
    if goldens[0] is not None:
        count = len(calibration.disagreements)
        click.echo(f"rubriclib: wrote {count} disagreement(s) as goldens to {goldens[1]}", err=True)


def _goldens_destination(path: str | None, force: bool, reports: ReportFiles) -> Path | None:
    """Where --to-goldens writes, checked before any judge call: writable, neither --out nor
    --report (one would replace the other), and not an existing file unless --force."""
    if path is None:
        return None
    target = writable(path, "--to-goldens")
    for option, other in (("--out", reports.destination), ("--report", reports.page)):
        if other is not None and target.resolve() == other.resolve():
            raise BadInput(f"--to-goldens: names the same file as {option}")
    if target.exists() and not force:
        raise BadInput(f"--to-goldens: {target} exists; pass --force to replace it")
    return target


def _write_goldens(path: Path, text: str) -> None:
    """Write the goldens file, warning when it is past the size a goldens file may have."""
    from rubriclib.rubrics.reading import MAX_FILE_BYTES

    write_atomically(path, text)
    if len(text.encode("utf-8")) > MAX_FILE_BYTES:
        click.echo(
            f"rubriclib: warning: {path} is over {MAX_FILE_BYTES} bytes, the limit for a goldens "
            "file: keep the goldens you review and split the rest",
            err=True,
        )


def _exit_code(calibration: Calibration, min_kappa: float | None) -> int:
    """130/143 when interrupted, 3 when every row ended in a judge error, 1 when --min-kappa is
    not met, else 0: a calibration is a measurement, not a gate."""
    if calibration.interrupted is not None:
        judged = f"{len(calibration.judged)} of {len(calibration.rows)} row(s)"
        return interrupted_exit(calibration.interrupted, judged)
    if calibration.all_errors:
        return 3
    kappa = calibration.overall.kappa
    if min_kappa is not None and (kappa is None or kappa < min_kappa):
        shown = "undefined" if kappa is None else f"{kappa:.2f}"
        click.echo(f"rubriclib: kappa {shown} is below --min-kappa {min_kappa}", err=True)
        return 1
    return 0

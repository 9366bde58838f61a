"""`rubriclib calibrate`: measure a judge against human labels."""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    PROTOCOL_OPTION,
    REQUESTS_PER_MINUTE_OPTION,
    SEED_OPTION,
    TABLE_OR_JSON_OPTION,
    TEMPERATURE_OPTION,
    checklist_options,
    concurrency_setting,
    evidence_options,
    file_option,
    flag_judge,
    refuse_unlocked,
)
from rubriclib.files import write_atomically

if TYPE_CHECKING:
    from rubriclib.judging import Interrupted, Judge
    from rubriclib.measure import Calibration, LabelledRow
    from rubriclib.rubrics import Rubric
    from rubriclib.settings import AnswerMode, Protocol


@main.command("calibrate")
@click.argument("ref")
@file_option(
    "--labels",
    "labels_file",
    help="Rows to judge with a human `label` (pass/fail; on a labels rubric, one of its label "
    "names) or, for a 1-5 rubric, a `score`: .jsonl, .csv, .json or .yaml. Required, but with "
    "--fit, which fits on the goldens without.",
)
@MODEL_OPTION
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Judge every row this many times: each judgment counts in the agreement numbers, "
    "and the report adds the flip rates (rows whose verdict changed, verdicts off their row's "
    "majority).",
)
@CONCURRENCY_OPTION
@REQUESTS_PER_MINUTE_OPTION
@TABLE_OR_JSON_OPTION
@click.option("--out", help="Write the report here, not stdout (checked before any judge call).")
@HTML_REPORT_OPTION
@click.option(
    "--to-goldens",
    "goldens_out",
    help="Write every disagreement here as a goldens YAML file, to review and add.",
)
@click.option(
    "--fit",
    is_flag=True,
    help="Fit this judge model's profile for the rubric on the rows' probability answers "
    "(with --checklist-answers probability; pass-fail rubrics) and write it to "
    "rubriclib-profiles/MODEL/RUBRIC@VERSION.yaml, where runs with that model find it.",
)
@click.option("--force", is_flag=True, help="Let --to-goldens or --fit replace an existing file.")
@click.option(
    "--min-kappa",
    type=click.FloatRange(min=-1, max=1),
    help="Exit 1 when Cohen's kappa is below this (or undefined).",
)
@NO_CACHE_OPTION
@FROZEN_OPTION
@TEMPERATURE_OPTION
@checklist_options
@PROTOCOL_OPTION
@SEED_OPTION
@evidence_options
def calibrate(
    ref: str,
    labels_file: str | None,
    model: str | None,
    trials: int,
    concurrency: int | None,
    requests_per_minute: float | None,
    report_format: str,
    out: str | None,
    html_report: str | None,
    goldens_out: str | None,
    fit: bool,
    force: bool,
    min_kappa: float | None,
    no_cache: bool,
    frozen: bool,
    temperature: float,
    checklist: AnswerMode | None,
    protocol: Protocol | None,
    seed: int | None,
    evidence: dict[str, Any],
) -> None:
    """Judge human-labelled rows and report how well the judge agrees with the humans.

    Reports accuracy, Cohen's kappa (with the base rate and the always-majority baseline),
    the confusion matrix, bootstrap 95% intervals, a breakdown by tag and every disagreement
    with the judge's reason. Exit 0 when the report is made (1 with --min-kappa unmet),
    2 for bad input, 3 when every row ended in a judge error, 130/143 when interrupted (the
    report holds what was judged). With --trials K every row is judged K times.

    \b
    Examples:
      rubriclib calibrate groundedness --labels labelled.jsonl
      rubriclib calibrate answer-correctness --labels scores.csv --to-goldens review.yaml
      rubriclib calibrate groundedness --labels labelled.jsonl --report calibration.html
      rubriclib calibrate groundedness --labels labelled.jsonl --trials 3  (flip rates too)
      rubriclib calibrate groundedness --labels labelled.jsonl --checklist  (the other mode)
      rubriclib calibrate groundedness --checklist-answers probability --fit  (on the goldens)
    """
    from rubriclib.judging import interruptible

    reports = ReportFiles.checked(out, html_report)
    goldens_path = _goldens_destination(goldens_out, force, reports)
    if fit and trials > 1:
        raise BadInput("--fit: fits one judgment of each row: leave out --trials")
    rubric, rows, labels = _labelled_rows(ref, labels_file, fit, frozen, checklist)
    judge = flag_judge(  # a missing key stops here
        [rubric],
        model,
        checklist,
        no_cache,
        temperature=temperature,
        protocol=protocol,
        seed=seed,
        evidence=evidence,
    )
    profile = _profile_destination(judge.model, rubric, force) if fit else None
    in_flight = concurrency_setting(concurrency)

    with interruptible() as interrupt:  # through the report: a second signal cannot cut it
        pace = (trials, in_flight, requests_per_minute)
        calibration = _judged(judge, rubric, rows, labels, pace, interrupt)
        _finish(calibration, report_format, reports, (goldens_path, goldens_out))
        if profile is not None and calibration.interrupted is None:
            _write_profile(calibration, judge.model, profile)
        sys.exit(_exit_code(calibration, min_kappa))


def _labelled_rows(
    ref: str,
    labels_file: str | None,
    fit: bool,
    frozen: bool,
    checklist: str | None,
) -> tuple[Rubric, list[LabelledRow], str]:
    """The rubric, its rows to judge (the labels file's, or for --fit without --labels the
    goldens) and the name the report gives them: every bad input exits 2 before any request."""
    from rubriclib.measure import golden_rows, load_labels
    from rubriclib.rubrics import load_rubric

    if labels_file is None and not fit:
        raise BadInput("--labels: a labels file is required (or --fit, to fit on the goldens)")
    rubric = load_rubric(ref)
    if frozen:
        refuse_unlocked([rubric])
    if fit:
        _refuse_fit(rubric, checklist)
    if labels_file is None:
        return rubric, golden_rows(rubric), "goldens"
    return rubric, load_labels(Path(labels_file), rubric), labels_file


def _judged(
    judge: Judge,
    rubric: Rubric,
    rows: list[LabelledRow],
    labels: str,
    pace: tuple[int, int, float | None],
    interrupt: Interrupted,
) -> Calibration:
    """Judge every labelled row (`pace`: trials of each, judgments in flight, requests per
    minute), with progress on a terminal, until the end or the first signal `interrupt`
    records."""
    from rubriclib.measure import run_calibration

    trials, in_flight, requests_per_minute = pace

    def run(progress: Progress | None) -> Coroutine[Any, Any, Calibration]:
        return run_calibration(
            judge,
            rubric,
            rows,
            labels,
            trials=trials,
            concurrency=in_flight,
            requests_per_minute=requests_per_minute,
            on_judgment=progress,
            interrupt=interrupt,
        )

    return judging(len(rows) * trials, run, interrupt, [judge])


def _refuse_fit(rubric: Rubric, checklist: str | None) -> None:
    """--fit: exit 2 unless the rows are judged by probability answers on a pass-fail rubric."""
    if checklist != "probability":
        raise BadInput("--fit: fits probability answers: add --checklist-answers probability")
    if rubric.scale != "pass-fail":
        raise BadInput(f"--fit: {rubric.name} is {rubric.scale}; profiles are for pass-fail")


def _profile_destination(model: str, rubric: Rubric, force: bool) -> Path:
    """Where --fit writes the profile, checked before any judge call."""
    from rubriclib.config import find_project
    from rubriclib.judging import profile_path

    path = profile_path(find_project()[0], model, rubric)
    if path.exists() and not force:
        raise BadInput(f"--fit: {path} exists; pass --force to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    return writable(str(path), "--fit")


def _write_profile(calibration: Calibration, model: str, path: Path) -> None:
    """Fit the profile on the calibration's probability answers and write it, saying how it
    measured (cross-validated first: the figure to quote)."""
    from rubriclib.judging import profile_text
    from rubriclib.measure import calibration_evidence, cross_validated

    rows = calibration_evidence(calibration)
    left_out = len(calibration.judged) - len(rows)
    if len(rows) < 2 or len({row.label for row in rows}) < 2:
        click.echo(
            f"rubriclib: --fit: no profile written: {len(rows)} row(s) with probability answers "
            "and both verdicts among them are needed",
            err=True,
        )
        return
    fitted = cross_validated(rows)
    measured = {
        "rows": len(rows),
        "left_out": left_out,
        "cross_validated_accuracy": round(fitted.cross_validated, 4),
        "in_sample_accuracy": round(fitted.in_sample, 4),
        "calibration_error": round(fitted.calibration_error, 4),
        "item_weights": bool(fitted.profile.item_weights),
        "labels": calibration.labels,
    }
    write_atomically(path, profile_text(fitted.profile, model, calibration.rubric, measured))
    click.echo(
        f"rubriclib: wrote the judge profile {path}: cross-validated accuracy "
        f"{fitted.cross_validated:.0%} on {len(rows)} row(s) (in-sample {fitted.in_sample:.0%}; "
        f"{left_out} row(s) without every item's p(yes) left out"
        f"{'; items weighted each' if fitted.profile.item_weights else ''})",
        err=True,
    )


def _finish(
    calibration: Calibration,
    report_format: str,
    reports: ReportFiles,
    goldens: tuple[Path | None, str | None],
) -> None:
    """Print (or write) the report, write the disagreements as goldens and the HTML report
    when asked."""
    from rubriclib.reports import (
        CALIBRATION_FORMATTERS,
        calibration_last_line,
        calibration_page,
        goldens_yaml,
    )

    text = CALIBRATION_FORMATTERS[report_format](calibration)
    if goldens[0] is not None:
        _write_goldens(goldens[0], goldens_yaml(calibration))
    reports.write(text, calibration_last_line(calibration), lambda: calibration_page(calibration))
    if goldens[0] is not None:
        count = len(calibration.disagreeing_rows)
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
    from rubriclib.rubrics import MAX_FILE_BYTES

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
    from rubriclib.reports import calibration_progress

    if calibration.interrupted is not None:
        return interrupted_exit(calibration.interrupted, calibration_progress(calibration))
    if calibration.all_errors:
        return 3
    kappa = calibration.overall.kappa
    if min_kappa is not None and (kappa is None or kappa < min_kappa):
        shown = "undefined" if kappa is None else f"{kappa:.2f}"
        click.echo(f"rubriclib: kappa {shown} is below --min-kappa {min_kappa}", err=True)
        return 1
    return 0

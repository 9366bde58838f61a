"""`rubriclib align`: a rubric's next version learned from human labels, written only when its
held-out agreement rises beyond noise."""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rubriclib.cli.app import BadInput, Progress, interrupted_exit, judging, main, say, writable
from rubriclib.cli.options import (
    CONCURRENCY_OPTION,
    FROZEN_OPTION,
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
    refuse_without_checklist,
)
from rubriclib.files import write_atomically, write_new

if TYPE_CHECKING:
    from rubriclib.judging import Judge
    from rubriclib.measure import Alignment, AlignSettings, LabelledRow
    from rubriclib.rubrics import Rubric
    from rubriclib.settings import AnswerMode, Protocol


@main.command("align")
@click.argument("ref")
@file_option(
    "--labels",
    "labels_file",
    help="The labels file calibrate reads (rows with a human `label`, or a 1-5 `score`): "
    ".jsonl, .csv, .json or .yaml. Required.",
)
@click.option(
    "--examples",
    "example_count",
    type=click.IntRange(min=0),
    default=4,
    show_default=True,
    help="Worked examples a revision shows at most (0: guideline lines only, with "
    "--optimizer-model).",
)
@click.option(
    "--folds",
    type=click.IntRange(min=2),
    default=5,
    show_default=True,
    help="Cross-validation folds.",
)
@click.option(
    "--optimizer-model",
    help="Also ask this model (at the judge's endpoint) for at most three guideline lines "
    "learned from the disagreements, added under their own heading in the body.",
)
@click.option("--out", help="Write the revision to this new file (never over an existing one).")
@click.option("--write", is_flag=True, help="Replace the rubric file with its revision.")
@click.option("--dry-run", is_flag=True, help="Show the plan and its request budget; send nothing.")
@click.option(
    "--max-requests",
    type=click.IntRange(min=1),
    help="Refuse to start when the plan needs more requests than this.",
)
@TABLE_OR_JSON_OPTION
@MODEL_OPTION
@TEMPERATURE_OPTION
@CONCURRENCY_OPTION
@REQUESTS_PER_MINUTE_OPTION
@NO_CACHE_OPTION
@FROZEN_OPTION
@checklist_options
@PROTOCOL_OPTION
@SEED_OPTION
@evidence_options
def align(
    ref: str,
    labels_file: str | None,
    example_count: int,
    folds: int,
    optimizer_model: str | None,
    out: str | None,
    write: bool,
    dry_run: bool,
    max_requests: int | None,
    report_format: str,
    model: str | None,
    temperature: float,
    concurrency: int | None,
    requests_per_minute: float | None,
    no_cache: bool,
    frozen: bool,
    checklist: AnswerMode | None,
    protocol: Protocol | None,
    seed: int | None,
    evidence: dict[str, Any],
) -> None:
    """Revise a rubric from human labels: worked examples (and, with --optimizer-model,
    guideline lines) learned from the rows the judge gets wrong, accepted only when agreement
    on rows the revision did not learn from rises beyond noise.

    Every row is judged with the rubric as it is, then (K-fold cross-validation) by a
    revision built from the other folds' rows alone; the revision is accepted when the
    paired bootstrap 95% interval of the per-row gain is above 0. The report shows agreement
    before and after, each fold, the examples and lines chosen, the requests and tokens spent
    and the diff of the rubric file. The revision is the next minor version. Exit 0 when
    accepted (written with --out or --write), 1 when not (nothing written), 2 for bad input or
    too few labels (under 20 rows or 4 of the rarer verdict), 3 when every row ended in a judge
    error, 130/143 when interrupted (nothing written).

    \b
    Examples:
      rubriclib align groundedness --labels labelled.jsonl --dry-run
      rubriclib align rubrics/support.md --labels labelled.jsonl --write
      rubriclib align groundedness --labels labelled.jsonl --out rubrics/groundedness.md
      rubriclib align rubrics/support.md --labels labelled.jsonl --optimizer-model gpt-4o --write
    """
    from rubriclib.measure import AlignSettings, plan_budget
    from rubriclib.reports import budget_text

    if example_count == 0 and optimizer_model is None:
        raise BadInput("--examples 0: nothing to learn without --optimizer-model")
    rubric, rows = _labelled_rows(ref, labels_file, frozen, folds)
    if optimizer_model is None:
        _refuse_without_examples(rubric, rows, labels_file or "")
    refuse_without_checklist([rubric], checklist)
    destination = _destination(rubric, out, write)
    budget = plan_budget(rubric, rows, folds, checklist, optimizer_model is not None)
    if max_requests is not None and budget.requests > max_requests:
        raise BadInput(
            f"--max-requests: the plan needs up to {budget.requests} request(s), over "
            f"{max_requests}; label fewer rows or raise --max-requests"
        )
    if dry_run:
        click.echo(budget_text(budget, len(rows), folds))
        return
    judge = flag_judge(
        [rubric],
        model,
        checklist,
        no_cache,
        temperature=temperature,
        protocol=protocol,
        seed=seed,
        evidence=evidence,
    )
    settings = AlignSettings(
        example_count, folds, concurrency_setting(concurrency), requests_per_minute
    )
    total = budget.judgments_before + budget.judgments_held_out
    alignment = _aligned(judge, rubric, rows, labels_file or "", settings, optimizer_model, total)
    sys.exit(_finish(alignment, report_format, destination))


def _labelled_rows(
    ref: str, labels_file: str | None, frozen: bool, folds: int
) -> tuple[Rubric, list[LabelledRow]]:
    """The rubric and its labelled rows, refused (exit 2, before any request) when they are
    too few to measure a gain, or to fill every fold."""
    from rubriclib.measure import folds_left_empty, load_labels, too_few_labels
    from rubriclib.rubrics import load_rubric

    if labels_file is None:
        raise BadInput("--labels: a labels file is required")
    rubric = load_rubric(ref)
    if frozen:
        refuse_unlocked([rubric])
    rows = load_labels(Path(labels_file), rubric)
    if (why := too_few_labels(rows)) is not None:
        raise BadInput(f"{labels_file}: {why}")
    if (why := folds_left_empty(rows, folds)) is not None:
        raise BadInput(f"--folds: {why}")
    return rubric, rows


def _refuse_without_examples(rubric: Rubric, rows: list[LabelledRow], labels: str) -> None:
    """Refused before any request: without an optimizer, a revision is only its worked
    examples, and no row can be one (every row an agent run, or missing a required field)."""
    from rubriclib.measure import no_example_row

    if (why := no_example_row(rubric, rows)) is not None:
        raise BadInput(f"{labels}: {why}; pass --optimizer-model for guideline lines instead")


def _destination(rubric: Rubric, out: str | None, write: bool) -> Path | None:
    """Where an accepted revision goes, checked before any request: --out (a new file) or the
    rubric's own file (--write; never a built-in); None: report only."""
    if out is not None and write:
        raise BadInput("--out and --write: choose one (a new file, or the rubric in place)")
    if write:
        if not rubric.source.startswith("file:"):
            kind = "a built-in" if rubric.source.startswith("builtin:") else "an installed pack's"
            raise BadInput(
                f"--write: {rubric.name} is {kind} rubric and cannot be written in place; "
                "pass --out FILE to write its revision to your project"
            )
        return rubric.path
    if out is None:
        return None
    target = writable(out, "--out")
    if target.exists():
        raise BadInput(
            f"--out: {target} exists; align writes a new file (use --write for the rubric)"
        )
    return target


def _aligned(
    judge: Judge,
    rubric: Rubric,
    rows: list[LabelledRow],
    labels: str,
    settings: AlignSettings,
    optimizer_model: str | None,
    total: int,
) -> Alignment:
    """The alignment run, with progress on a terminal, until its end or the first signal."""
    from rubriclib.judging import EndpointError, interruptible, redact
    from rubriclib.measure import guidelines_proposer, run_alignment

    propose = guidelines_proposer(judge, optimizer_model) if optimizer_model else None
    with interruptible() as interrupt:

        def run(progress: Progress | None) -> Coroutine[Any, Any, Alignment]:
            return run_alignment(
                judge,
                rubric,
                rows,
                labels,
                settings,
                propose=propose,
                on_judgment=progress,
                interrupt=interrupt,
            )

        try:
            return judging(total, run, interrupt, [judge])
        except EndpointError as error:
            say(f"the optimizer model could not be asked: {redact(str(error), judge.api_key)}")
            say("nothing written")
            sys.exit(3)


def _finish(alignment: Alignment, report_format: str, destination: Path | None) -> int:
    """Print the report; write an accepted revision where it goes; the exit code."""
    from rubriclib.reports import ALIGNMENT_FORMATTERS

    shown = str(destination) if destination is not None else None
    click.echo(ALIGNMENT_FORMATTERS[report_format](alignment, shown))
    if alignment.interrupted is not None:
        judged = len(alignment.before.judged) + len(alignment.after)
        return interrupted_exit(alignment.interrupted, f"{judged} judgment(s); nothing written")
    if alignment.before.all_errors:
        say("every row ended in a judge error: nothing measured, nothing written")
        return 3
    if not alignment.accepted or alignment.final is None:
        say(f"{alignment.rejection}: nothing written")
        return 1
    if destination is None:
        say("accepted; pass --out FILE or --write to write the revision")
        return 0
    revision = alignment.final
    if destination == alignment.rubric.path:
        write_atomically(destination, revision.text)
    else:
        write_new(destination, revision.text)
    say(
        f"wrote {revision.rubric.name}@{revision.rubric.version} to {destination}; "
        "`rubriclib check` will say the lock needs updating (`rubriclib lock`)"
    )
    return 0

"""`rubriclib eval`: judge a dataset with an eval file's graders."""

from __future__ import annotations

import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rubriclib.cli.app import (
    SIGNAL_EXIT_CODES,
    Progress,
    judging,
    main,
    refuse_to_empty,
    report_destinations,
    say,
    stop_if_refused,
)
from rubriclib.cli.evals.choice import EvalChoice, with_eval_choice
from rubriclib.cli.evals.dry_run import show_dry_run
from rubriclib.cli.evals.engines import judged_on, refuse_engine, with_engine_options
from rubriclib.cli.options import (
    CONCURRENCY_OPTION,
    FORMAT_OPTION,
    FROZEN_OPTION,
    POLL_SECONDS_OPTION,
)
from rubriclib.files import write_atomically

if TYPE_CHECKING:
    from rubriclib.evals import EvalReport


@main.command("eval")
@with_eval_choice
@CONCURRENCY_OPTION
@click.option(
    "--out",
    help="Write one JSON line per row and grader here, as each finishes. A file that already "
    "holds results is refused unless --resume continues it or --force replaces it.",
)
@click.option(
    "--report",
    "report_path",
    help="Write the report here (a FILE.html: the HTML report); print only its last line.",
)
@FORMAT_OPTION
@click.option(
    "--resume",
    is_flag=True,
    help="Continue --out: keep its results that still match, judge the rest and append them "
    "(every line stays; a row and grader's last line is its current one).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Let --out replace a file that already holds results (once the first new result is in).",
)
@click.option("--dry-run", is_flag=True, help="Check everything and show the plan; send nothing.")
@click.option(
    "--show-prompts",
    is_flag=True,
    help="With --dry-run: show the first row's prompt per grader (each field cut to 2,000 "
    "characters); `rubriclib render` shows any one whole.",
)
@click.option(
    "--batch",
    "use_batch",
    is_flag=True,
    help="Send the requests through the provider's Batch API (cheaper, up to 24h); the state "
    "file sits beside --out, and --resume polls what was submitted instead of sending it again.",
)
@POLL_SECONDS_OPTION
@click.option(
    "--price-per-million",
    type=click.FloatRange(min=0),
    help="With --dry-run: the live price per million prompt tokens, for a cost estimate.",
)
@click.option(
    "--batch-discount",
    type=click.FloatRange(0, 1),
    default=0.5,
    show_default=True,
    help="With --dry-run --batch: the batch price as a share of the live price.",
)
@FROZEN_OPTION
@with_engine_options
def eval_command(
    chosen: EvalChoice,
    concurrency: int | None,
    out: str | None,
    report_path: str | None,
    report_format: str,
    resume: bool,
    force: bool,
    dry_run: bool,
    show_prompts: bool,
    use_batch: bool,
    poll_seconds: float,
    price_per_million: float | None,
    batch_discount: float,
    frozen: bool,
    engine: str,
    address: str | None,
) -> None:
    """Judge a dataset with an eval file's graders (rubriclib, waza or letta-evals shape).

    Exit 0 when every gate condition holds, 1 when one fails, 2 for bad input, 3 when judge
    errors leave the gate undecided, 130/143 when interrupted (what was judged is kept).

    \b
    Examples:
      rubriclib eval examples/support/eval.yaml --dry-run
      rubriclib eval eval.yaml --out results.jsonl --format junit --report eval.xml
      rubriclib eval eval.yaml --out results.jsonl --report report.html
      rubriclib eval eval.yaml --out results.jsonl --resume
      rubriclib eval eval.yaml --out results.jsonl --batch      (then --batch --resume)
      rubriclib eval eval.yaml --out results.jsonl --engine ray --address HEAD:6379
    """
    from rubriclib.evals import open_eval_batch, run_ready
    from rubriclib.judging import interruptible
    from rubriclib.reports import is_html

    if resume and out is None:
        raise click.UsageError("--resume needs --out: the results file to resume from")
    if resume and force:
        raise click.UsageError("--resume and --force: choose one (continue --out, or replace it)")
    if use_batch and out is None and not dry_run:
        raise click.UsageError("--batch needs --out: the batch state file is kept beside it")
    # every refusal before the plan, any key or request, and before a state file is touched
    prepared = chosen.prepared(frozen=frozen, batch="--batch" if use_batch else None)
    refuse_engine(engine, address, use_batch, prepared.eval)
    if dry_run:
        prices = (price_per_million, batch_discount)
        show_dry_run(prepared.eval, chosen, show_prompts, use_batch, prices)
        return
    results, report_target = report_destinations(out, report_path, html_only=False)
    refuse_to_empty(results, resume, force)
    ready = chosen.ready(prepared, concurrency=concurrency, out=results, resume=resume, force=force)
    batch = None
    if use_batch and results:
        ready, batch = open_eval_batch(ready, resume, poll_seconds, say)
    keep_cases = report_format == "junit" or is_html(report_path)
    # through the report: a second signal cannot cut it
    with judged_on(engine, ready, address) as ray, interruptible() as interrupt:

        def run(progress: Progress | None) -> Coroutine[Any, Any, EvalReport]:
            return run_ready(
                ready, keep_cases=keep_cases, on_result=progress, interrupt=interrupt, engine=ray
            )

        report = judging(ready.judgments, run, interrupt, [batch] if batch else [])
        stop_if_refused(batch)
        finish(report, report_format, report_path, report_target, results)


def finish(
    report: EvalReport,
    report_format: str,
    report_path: str | None,
    target: Path | None,
    results: Path | None = None,
) -> None:
    """Print (or write to --report) the report and exit by the gate, or by the signal that
    stopped the run; `results` is the --out file an HTML report is built from."""
    from rubriclib.reports import eval_last_line, eval_report_text

    text = eval_report_text(report, report_format, report_path, results)
    if report_path is not None and target is not None:
        write_atomically(target, text + "\n")
        click.echo(f"{eval_last_line(report)} (report: {report_path})")
    else:
        click.echo(text)
    if report.interrupted:
        click.echo(
            f"rubriclib: interrupted by {report.interrupted}; results so far are kept", err=True
        )
        sys.exit(SIGNAL_EXIT_CODES[report.interrupted])
    sys.exit({"passed": 0, "failed": 1, "undecided": 3}[report.status])

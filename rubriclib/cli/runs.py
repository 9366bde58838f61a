"""Commands that judge: judge one output, test-goldens, and the verdict cache."""

from __future__ import annotations

import json
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rubriclib.cli.app import (
    SIGNAL_EXIT_CODES,
    Progress,
    ReportFiles,
    interrupted_exit,
    judging,
    main,
    say,
    stop_if_refused,
)
from rubriclib.cli.judged_inputs import JudgedInputs, with_judged_inputs
from rubriclib.cli.options import (
    CONCURRENCY_OPTION,
    FORMAT_OPTION,
    FROZEN_OPTION,
    HTML_REPORT_OPTION,
    MODEL_OPTION,
    NO_CACHE_OPTION,
    POLL_SECONDS_OPTION,
    PROTOCOL_OPTION,
    REQUESTS_PER_MINUTE_OPTION,
    SEED_OPTION,
    TEMPERATURE_OPTION,
    checklist_options,
    concurrency_setting,
    evidence_options,
    file_option,
    flag_judge,
    refuse_unlocked,
    votes_option,
)

if TYPE_CHECKING:
    from rubriclib.batch import BatchRun
    from rubriclib.judging import GradeResult, Interrupted, Judge
    from rubriclib.measure import GoldensReport
    from rubriclib.rubrics import Rubric
    from rubriclib.settings import AnswerMode, Protocol


@main.command("judge")
@click.argument("ref")
@with_judged_inputs
@MODEL_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the GradeResult as JSON.")
@NO_CACHE_OPTION
@votes_option("Independent judgments; the majority wins (1-5: the median), a tie fails.", 1)
@TEMPERATURE_OPTION
@FROZEN_OPTION
@checklist_options
@PROTOCOL_OPTION
@SEED_OPTION
@evidence_options
def judge_command(
    ref: str,
    inputs: JudgedInputs,
    model: str | None,
    as_json: bool,
    no_cache: bool,
    votes: int,
    temperature: float,
    frozen: bool,
    checklist: AnswerMode | None,
    protocol: Protocol | None,
    seed: int | None,
    evidence: dict[str, Any],
) -> None:
    """Judge one output. Exit 0 pass, 1 fail, 3 judge error.

    A pairwise rubric compares --output with --baseline (judged in both orders): exit 0 when
    the output wins, 1 for a tie or a loss.

    The endpoint comes from OPENAI_BASE_URL and OPENAI_API_KEY.

    \b
    Examples:
      rubriclib judge groundedness --output "1969." --context "Apollo 11 landed in 1969."
      rubriclib judge preference --input "..." --output @new.txt --baseline @old.txt
      rubriclib judge ./rubrics/house-style.md --output @answer.txt --checklist
    """
    import asyncio

    from rubriclib.judging import interruptible
    from rubriclib.rubrics import load_rubric

    rubric = load_rubric(ref)
    texts = inputs.read(rubric)
    if frozen:
        refuse_unlocked([rubric])
    judge = flag_judge(
        [rubric],
        model,
        checklist,
        no_cache,
        votes=votes,
        temperature=temperature,
        protocol=protocol,
        seed=seed,
        evidence=evidence,
    )

    async def judge_once(interrupt: Interrupted) -> GradeResult | str:
        with interrupt.cancelling_current_task():
            try:
                return await judge.agrade(rubric, **texts)
            except asyncio.CancelledError:
                if interrupt.signal is None:
                    raise
                return interrupt.signal
            finally:
                await judge.aclose()

    with interruptible() as interrupt:  # a second signal cannot cut the answer short
        result = asyncio.run(judge_once(interrupt))
        if isinstance(result, str):
            click.echo(f"rubriclib: interrupted by {result}; nothing was judged", err=True)
            sys.exit(SIGNAL_EXIT_CODES[result])
        _print_result(result, rubric, as_json)
        sys.exit({"pass": 0, "fail": 1, "error": 3}[result.verdict])


def _print_result(result: GradeResult, rubric: Rubric, as_json: bool) -> None:
    """`judge`'s answer: the result as JSON, or its verdict, rubric and reason on one line."""
    if as_json:
        click.echo(result.model_dump_json(indent=2))
        return
    colour = {"pass": "green", "fail": "red", "error": "yellow"}[result.verdict]
    label = f" ({result.details.label})" if result.details.label else ""
    click.echo(
        f"{click.style(result.verdict.upper(), fg=colour, bold=True)} "
        f"{rubric.name}@{rubric.version}{label}: {result.reason}"
    )


@main.command("test-goldens")
@click.argument("refs", nargs=-1)
@MODEL_OPTION
@click.option(
    "--trials",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Judge every golden this many times (for agreement statistics).",
)
@votes_option("Votes per judgment: each trial is the majority of this many (1-5: the median).", 1)
@TEMPERATURE_OPTION
@CONCURRENCY_OPTION
@file_option(
    "--goldens",
    "goldens_file",
    help="A YAML file of extra goldens, added to every rubric in the run they fit (goldens "
    "with expected_winner to pairwise rubrics, the others to the rest).",
)
@FORMAT_OPTION
@click.option("--out", help="Write the report here, not stdout (checked before any judge call).")
@HTML_REPORT_OPTION
@NO_CACHE_OPTION
@FROZEN_OPTION
@REQUESTS_PER_MINUTE_OPTION
@click.option(
    "--batch",
    "use_batch",
    is_flag=True,
    help="Send the requests through the provider's Batch API (cheaper, up to 24h); the state "
    "file sits beside --out.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="With --batch: poll the batches the state file records instead of submitting again.",
)
@POLL_SECONDS_OPTION
@checklist_options
@PROTOCOL_OPTION
@SEED_OPTION
@evidence_options
def test_goldens(
    refs: Sequence[str],
    model: str | None,
    trials: int,
    votes: int,
    temperature: float,
    concurrency: int | None,
    goldens_file: str | None,
    report_format: str,
    out: str | None,
    html_report: str | None,
    no_cache: bool,
    frozen: bool,
    requests_per_minute: float | None,
    use_batch: bool,
    resume: bool,
    poll_seconds: float,
    checklist: AnswerMode | None,
    protocol: Protocol | None,
    seed: int | None,
    evidence: dict[str, Any],
) -> None:
    """Regression run: judge every golden of each rubric (every resolvable one when no REF).

    Exit 0 when every judgment matched its golden, 1 when a judged golden missed, 3 when only
    judge errors kept goldens from agreeing, 130/143 when interrupted (the report is written).

    \b
    Examples:
      rubriclib test-goldens
      rubriclib test-goldens ./rubrics/house-style.md --trials 3 --format junit --out goldens.xml
      rubriclib test-goldens groundedness --votes 3
      rubriclib test-goldens groundedness --trials 3 --report goldens.html
      rubriclib test-goldens ./rubrics/house-style.md --checklist
    """
    from rubriclib.judging import interruptible
    from rubriclib.measure import plan_run, run_goldens

    _refuse_batch_flags(use_batch, resume, out)
    reports = ReportFiles.checked(out, html_report)
    plan = plan_run(refs, goldens_file, trials)  # every bad golden: exit 2 before any request
    rubrics = [rubric for rubric, _ in plan.rubrics]
    if frozen:
        refuse_unlocked(rubrics)
    judge = flag_judge(
        rubrics,
        model,
        checklist,
        no_cache,
        votes=votes,
        temperature=temperature,
        protocol=protocol,
        seed=seed,
        evidence=evidence,
    )
    in_flight = concurrency_setting(concurrency)
    state = reports.destination  # a batch's state file sits beside the report
    batch = _batch_run(judge, state, resume, poll_seconds) if state and use_batch else None
    if batch is not None:  # every judgment at once, unpaced: the provider runs the batch
        judge, in_flight = batch.judges["judge"], batch.in_flight(plan.judgments)
        requests_per_minute = None

    with interruptible() as interrupt:  # through the report: a second signal cannot cut it

        def run(progress: Progress | None) -> Coroutine[Any, Any, GoldensReport]:
            return run_goldens(
                judge, plan.rubrics, trials, in_flight, progress, interrupt, requests_per_minute
            )

        run_report = judging(plan.judgments, run, interrupt, [judge, *([batch] if batch else [])])
        stop_if_refused(batch)
        _finish(run_report, report_format, reports)


def _refuse_batch_flags(use_batch: bool, resume: bool, out: str | None) -> None:
    """--batch needs --out (the state file is kept beside it), --resume needs --batch."""
    if use_batch and out is None:
        raise click.UsageError("--batch needs --out: the batch state file is kept beside it")
    if resume and not use_batch:
        raise click.UsageError("--resume resumes a --batch run: add --batch")


def _batch_run(judge: Judge, destination: Path, resume: bool, poll: float) -> BatchRun:
    """`judge` rebuilt to send through the Batch API, the state file beside the report."""
    from rubriclib.batch import open_batch_run

    return open_batch_run(
        {"judge": judge}, destination, resume=resume, poll_seconds=poll, progress=say
    )


def _finish(run: GoldensReport, report_format: str, reports: ReportFiles) -> None:
    """Print (or write) the report, and the HTML one when asked; exit by what the run found."""
    from rubriclib.reports import GOLDENS_FORMATTERS, goldens_last_line, goldens_page

    reports.write(
        GOLDENS_FORMATTERS[report_format](run), goldens_last_line(run), lambda: goldens_page(run)
    )
    sys.exit(_exit_code(run))


def _exit_code(run: GoldensReport) -> int:
    """130/143 when interrupted, 1 when a judged golden missed (a regression), 3 when only judge
    errors kept goldens from agreeing (undecided), 0 when every judgment matched."""
    if run.info is not None and run.info.interrupted is not None:
        judged = sum(report.judgments for report in run.rubrics)
        return interrupted_exit(run.info.interrupted, f"{judged} of {run.info.planned}")
    return {"regression": 1, "undecided": 3}.get(run.status, 0)


@main.group()
def cache() -> None:
    """The verdict cache and the rubric cache: where they are, what they hold, and clearing them.

    Commands that judge keep every verdict (never an error) in the verdict cache, keyed by the
    endpoint, model, exact messages, tools and sampling settings, so an unchanged rerun sends
    nothing. Remote rubrics are kept, by sha256, in the rubric cache (`rubrics/` beside it),
    so a run works offline. The folder is $RUBRICLIB_CACHE_DIR, else ~/.cache/rubriclib.
    """


@cache.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def cache_info(as_json: bool) -> None:
    """Print where each cache is, what it holds and its size."""
    from rubriclib.judging import VerdictCache
    from rubriclib.rubrics import RubricStore

    info = VerdictCache().info()
    rubrics = RubricStore().info()
    if as_json:
        click.echo(json.dumps({**info, "rubrics": rubrics}, indent=2))
        return
    click.echo(f"path: {info['path']}\nentries: {info['entries']}\nbytes: {info['bytes']}")
    click.echo(
        f"rubric cache: {rubrics['path']}\nrubric files: {rubrics['files']} "
        f"({rubrics['references']} reference(s))\nrubric bytes: {rubrics['bytes']}"
    )


@cache.command("clear")
@click.option("--verdicts", "only_verdicts", is_flag=True, help="Clear only the verdict cache.")
@click.option("--rubrics", "only_rubrics", is_flag=True, help="Clear only the rubric cache.")
def cache_clear(only_verdicts: bool, only_rubrics: bool) -> None:
    """Delete every cached verdict and every fetched remote rubric (or only one cache); an
    offline run then needs the rubrics fetched again."""
    from rubriclib.judging import VerdictCache
    from rubriclib.rubrics import RubricStore

    both = only_verdicts == only_rubrics
    if both or only_verdicts:
        click.echo(f"Removed {VerdictCache().clear()} cached verdict(s)")
    if both or only_rubrics:
        store = RubricStore()
        click.echo(f"Removed {store.clear()} fetched rubric(s) from {store.folder}")

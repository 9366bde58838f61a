"""`rubriclib batch`: offline batch files (prepare, collect) and the batches of an `eval --batch`
run (status, cancel)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rubriclib.cli.app import BadInput, main, refuse_to_empty, writable
from rubriclib.cli.evals.choice import EvalChoice, with_eval_choice
from rubriclib.cli.evals.evaluate import finish
from rubriclib.cli.options import FORMAT_OPTION

if TYPE_CHECKING:
    from rubriclib.evals import ReadyRun
    from rubriclib.judging import Interrupted


@main.group("batch")
def batch_group() -> None:
    """Judge through batch files: prepare requests offline, collect the answers, and follow or
    cancel the batches an `eval --batch` run submitted.

    \b
    Examples:
      rubriclib batch prepare eval.yaml --to requests.jsonl
      vllm run-batch -i requests.jsonl -o output.jsonl --model MODEL
      rubriclib batch collect eval.yaml --from output.jsonl --out results.jsonl
      rubriclib batch status results.jsonl
    """


def offline(chosen: EvalChoice, out: Path | None = None, force: bool = False) -> ReadyRun:
    """The chosen eval, checked and made ready with judges that never send (no key needed),
    writing its results to `out` when given (replacing what it holds with `force`)."""
    prepared = chosen.prepared(batch=f"{chosen.eval_file}: batch files")
    return chosen.ready(prepared, offline=True, out=out, force=force)


@batch_group.command("prepare")
@with_eval_choice
@click.option("--to", "to", required=True, help="Write the request lines here (JSONL).")
def prepare_command(chosen: EvalChoice, to: str) -> None:
    """Write the requests an eval's judgments send, as Batch API request lines; send nothing.

    Every vote's first request goes in (both orders of a pairwise rubric's; votes never asked
    are simply unused); judgments the verdict cache already holds need none. Over 50,000 lines
    or 200 MB, more files follow: requests-2.jsonl, ... (numbered files left by an earlier,
    larger prepare are removed). An eval with a target or a judge panel is refused.
    """
    import asyncio

    from rubriclib.batch import write_requests
    from rubriclib.evals import aprepare

    target = writable(to, "--to")
    prepared = asyncio.run(aprepare(offline(chosen)))
    files = write_requests(prepared.requests, target)
    models = sorted({str(body.get("model")) for body in prepared.requests.values()})
    click.echo(
        f"{len(prepared.requests)} request(s) to {', '.join(str(f) for f in files)} "
        f"(model {', '.join(models) or 'none'}), about {prepared.prompt_tokens:,} prompt tokens; "
        f"{prepared.judgments} judgment(s): {prepared.cached} already cached (no request), "
        f"{prepared.not_judged} not judgeable (a required field is missing)"
    )


@batch_group.command("collect")
@with_eval_choice
@click.option(
    "--from",
    "sources",
    multiple=True,
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A batch output (or error) file; repeat for several.",
)
@click.option(
    "--out",
    required=True,
    help="Write one JSON line per row and grader here. A file that already holds results is "
    "refused unless --force replaces it.",
)
@click.option("--report", "report_path", help="Write the report here; print only its last line.")
@FORMAT_OPTION
@click.option(
    "--force",
    is_flag=True,
    help="Let --out replace a file that already holds results (once the first result is in).",
)
def collect_command(
    chosen: EvalChoice,
    sources: tuple[str, ...],
    out: str,
    report_path: str | None,
    report_format: str,
    force: bool,
) -> None:
    """Judge an eval from batch output files: the same results file, report and exit code as
    `rubriclib eval`. Answers that match no request, duplicates and requests with no answer are
    listed on stderr, one line each; a judgment that needs a corrective turn is an error."""
    import asyncio

    from rubriclib.evals import acollect
    from rubriclib.judging import interruptible
    from rubriclib.reports import is_html

    results = writable(out, "--out")
    refuse_to_empty(results, None, force)
    report_target = writable(report_path, "--report") if report_path else None
    ready = offline(chosen, results, force)

    async def run(interrupt: Interrupted) -> Any:
        with interrupt.cancelling_current_task():
            return await acollect(
                ready,
                [Path(source) for source in sources],
                keep_cases=report_format == "junit" or is_html(report_path),
                interrupt=interrupt,
            )

    with interruptible() as interrupt:  # through the report: a second signal cannot cut it
        collected = asyncio.run(run(interrupt))
        for problem in collected.problems:
            click.echo(f"rubriclib: {problem}", err=True)
        click.echo(
            f"rubriclib: {collected.answered} answer(s) used, {collected.unused} unused (votes "
            f"decided early), {len(collected.problems)} problem(s)",
            err=True,
        )
        finish(collected.report, report_format, report_path, report_target, results)


def _state(results: str | None, state: str | None) -> Any:
    from rubriclib.batch import BatchState, state_path

    if (results is None) == (state is None):
        raise click.UsageError("give the results file of an `eval --batch` run, or --state FILE")
    path = Path(state) if state is not None else state_path(Path(str(results)))
    if not path.is_file():
        raise BadInput(f"{path}: no batch state file here (is it an `eval --batch` run?)")
    return BatchState(path)


def _show(batches: list[dict[str, Any]]) -> None:
    for batch in batches:
        counts = batch.get("request_counts", {})
        line = (
            f"{batch['id']}  {batch.get('status')}  {counts.get('completed', 0)}/"
            f"{counts.get('total', 0)} done, {counts.get('failed', 0)} failed  "
            f"{batch.get('model')}  {batch.get('endpoint')}"
        )
        if batch.get("last_error"):
            line += f"  (could not ask: {batch['last_error']})"
        click.echo(line)
    running = sum(
        batch.get("status") not in ("completed", "failed", "expired", "cancelled")
        for batch in batches
    )
    click.echo(f"{len(batches)} batch(es), {running} not finished")


state_options = [
    click.argument("results", required=False),
    click.option("--state", help="The state file itself (default: RESULTS.batch.json)."),
]


@batch_group.command("status")
@state_options[0]
@state_options[1]
def status_command(results: str | None, state: str | None) -> None:
    """Show the batches of an `eval --batch` run, asking the provider about unfinished ones."""
    import asyncio

    from rubriclib.batch import refresh

    _show(asyncio.run(refresh(_state(results, state))))


@batch_group.command("cancel")
@state_options[0]
@state_options[1]
def cancel_command(results: str | None, state: str | None) -> None:
    """Cancel every unfinished batch of an `eval --batch` run (what finished is kept)."""
    import asyncio

    from rubriclib.batch import refresh

    batches = asyncio.run(refresh(_state(results, state), cancel=True))
    _show(batches)
    if any(batch.get("last_error") for batch in batches):
        sys.exit(3)

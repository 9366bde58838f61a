"""`rubriclib report`: one self-contained HTML page from a results file, alone or against
another."""

from __future__ import annotations

from pathlib import Path

import click

from rubriclib.cli.app import main, writable
from rubriclib.files import write_atomically


@main.command()
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--against",
    type=click.Path(dir_okay=False, path_type=Path),
    help="An older results file of the same eval: show what changed since it.",
)
@click.option(
    "-o",
    "--out",
    "out",
    required=True,
    help="The HTML file to write (written whole or not at all).",
)
@click.option(
    "--eval",
    "eval_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The eval file of the run: show the messages each judgment sent, re-rendered from its "
    "rubrics and rows (where a rubric's digest still matches the one that judged).",
)
@click.option(
    "--expected",
    type=click.IntRange(min=1),
    help="Judgments the run should hold (rows x graders): say how many are missing.",
)
def report(
    results: Path, against: Path | None, out: str, eval_file: Path | None, expected: int | None
) -> None:
    """Build an HTML report from RESULTS (the JSONL `rubriclib eval --out` writes).

    \b
    Example:
      rubriclib report results.jsonl --against last-week.jsonl -o report.html
      rubriclib report results.jsonl --eval eval.yaml -o report.html
    """
    from rubriclib.evals import prepare
    from rubriclib.reports import build_report, messages_from

    target = writable(out, "--out")
    for given in (results, against):
        if given is not None and given.exists() and target.exists() and target.samefile(given):
            raise click.UsageError(f"--out {out} is {given}, a results file it reads")
    ev = prepare(eval_file).eval if eval_file else None  # checked now: exit 2 on a bad eval
    extend = messages_from(ev) if ev else None
    rubrics = [grader.rubric for grader in ev.graders] if ev else []
    write_atomically(target, build_report(results, against, expected, extend, rubrics))
    click.echo(f"wrote {target}", err=True)

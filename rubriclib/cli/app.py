"""The `rubriclib` group and what its commands share: input errors, option text, output files."""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import click

from rubriclib._version import __version__
from rubriclib.errors import BatchRefused, InputError, JudgeConfigError, RubricError
from rubriclib.files import write_atomically

# Each command imports what it needs, so `--help` and the commands that only read rubrics
# start fast, and only the commands that judge load asyncio and the openai SDK.
if TYPE_CHECKING:
    from rubriclib.batch.api import BatchRun
    from rubriclib.judging.engine import Interrupted
    from rubriclib.judging.judge import Judge
    from rubriclib.judging.result import GradeResult
    from rubriclib.rubrics.rubric import Rubric

T = TypeVar("T")
C = TypeVar("C", bound=Callable[..., Any])

SIGNAL_EXIT_CODES = {"SIGINT": 130, "SIGTERM": 143}

EXIT_CODES = """\b
Exit codes:
  0    success (judge: pass; test-goldens: every golden matched)
  1    judge: fail; validate: a rubric is invalid; test-goldens: a judged golden missed
  2    usage or input error (bad reference, invalid rubric, missing API key, unreadable file)
  3    judge / test-goldens: judge errors and nothing else (an outage, not a regression)
  130  interrupted (SIGINT; 143 for SIGTERM): test-goldens writes what was judged"""


class BadInput(click.ClickException):
    """Bad input from the user: one line on stderr per problem, exit 2."""

    exit_code = 2

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems

    def show(self, file: Any = None) -> None:
        for problem in self.problems:
            click.echo(f"rubriclib: error: {' '.join(problem.split())}", err=True)


class RunRefused(BadInput):
    """A run the endpoint refused as a whole (no Batch API, say): one line on stderr, exit 3."""

    exit_code = 3


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as error:  # a bad rubric, eval file, dataset or reference
            raise BadInput(*(str(problem) for problem in error.problems)) from None
        except JudgeConfigError as error:
            raise BadInput(str(error)) from None
        except BatchRefused as error:
            raise BadInput(*error.reasons) from None
        except KeyboardInterrupt:  # Ctrl-C before a run began (a run stops cleanly on its own)
            click.echo("rubriclib: interrupted by SIGINT", err=True)
            sys.exit(SIGNAL_EXIT_CODES["SIGINT"])


def say(text: str) -> None:
    """A line about the run on stderr: `rubriclib: TEXT` (a batch's progress, say)."""
    click.echo(f"rubriclib: {text}", err=True)


def stop_if_refused(batch: BatchRun | None) -> None:
    """Exit 3 with one line, and no report, when the endpoint refused a batch run as a whole."""
    if batch is not None and (cause := batch.refused()):
        raise RunRefused(cause)


class Progress(Protocol):
    """What a run calls as each judgment finishes (with its result, when it has one)."""

    def __call__(self, result: GradeResult | None = None) -> None: ...


class Closable(Protocol):
    """What a run leaves open until it ends: a judge, a panel, a batch run."""

    async def aclose(self) -> None: ...


def judging(
    total: int,
    run: Callable[[Progress | None], Coroutine[Any, Any, T]],
    interrupt: Interrupted,
    closing: Sequence[Closable] = (),
) -> T:
    """Run a judging coroutine to its end, with a progress bar of `total` judgments on stderr
    when stderr is a terminal (the judge errors of the results it is given in its label). The
    first signal `interrupt` records cancels it; `closing` is closed when it ends, however."""
    import asyncio

    async def guarded(progress: Progress | None) -> T:
        with interrupt.cancelling_current_task():
            try:
                return await run(progress)
            finally:
                for each in closing:
                    await each.aclose()

    if not sys.stderr.isatty():
        return asyncio.run(guarded(None))
    with click.progressbar(length=total, label="judging", file=sys.stderr) as bar:
        errors = 0

        def advance(result: GradeResult | None = None) -> None:
            nonlocal errors
            if result is not None:
                errors += result.verdict == "error"
                bar.label = f"judging ({errors} error(s))"
            bar.update(1)

        return asyncio.run(guarded(advance))


def one_stdin(**options: str | None) -> None:
    """Refuse two options that would both read stdin: the second would read nothing."""
    readers = [f"--{name}" for name, value in options.items() if value == "-"]
    if len(readers) > 1:
        raise click.UsageError(f"only one option can read stdin (-); got {', '.join(readers)}")


def writable(path: str, option: str) -> Path:
    """`path` if a report can be written there; checked before any judge call is made."""
    target = Path(path).expanduser()
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise BadInput(f"{option}: {target} is a directory")
    if not folder.is_dir():
        raise BadInput(f"{option}: cannot write {target}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise BadInput(f"{option}: cannot write {target}: permission denied")
    return target


HTML_REPORT_OPTION = click.option(
    "--report",
    "html_report",
    help="Also write the run's HTML report here (a FILE.html), beside the --format report.",
)


def report_destinations(
    out: str | None, report: str | None, *, html_only: bool = True
) -> tuple[Path | None, Path | None]:
    """The --out and --report files (None when not given), each writable and not one file,
    checked before any judge call; with `html_only`, --report must name a FILE.html."""
    from rubriclib.reports.pages import is_html

    destination = writable(out, "--out") if out else None
    if report is None:
        return destination, None
    if html_only and not is_html(report):
        raise click.UsageError(f"--report writes the HTML report: name a FILE.html, not {report}")
    return destination, apart(writable(report, "--report"), destination)


def apart(report: Path, out: Path | None) -> Path:
    """`report` (--report), refused when it names the --out file: one would replace the other."""
    if out is not None and report.resolve() == out.resolve():
        raise BadInput("--report: names the same file as --out")
    return report


def print_report(text: str, destination: Path | None, out: str | None, summary: str) -> None:
    """Print the report; with --out, write it to `destination` (`out` as the user typed it)
    and print only its `summary` line, saying where the report went."""
    if destination is None:
        click.echo(text)
        return
    write_atomically(destination, text + "\n")
    click.echo(f"{summary} (report: {out})")


def interrupted_exit(signal: str, judged: str) -> int:
    """The exit code of a run a signal stopped, after a line on stderr saying how far it got
    (`judged`: "N of M ...") and that the report holds what was judged."""
    click.echo(
        f"rubriclib: interrupted by {signal}: judged {judged}; the report holds what was judged",
        err=True,
    )
    return SIGNAL_EXIT_CODES[signal]


def write_html(target: Path | None, text: Callable[[], str]) -> None:
    """Write the HTML report when --report asked for one."""
    if target is not None:
        write_atomically(target, text())
        click.echo(f"rubriclib: wrote the HTML report to {target}", err=True)


def option_text(value: str | None, option: str) -> str | None:
    """An option's text: literal, `@path` for a file's contents, `-` for stdin (`@@` escapes @)."""
    if value is None:
        return None
    if value == "-":
        return sys.stdin.read()
    if value.startswith("@@"):
        return value[1:]
    if value.startswith("@"):
        path = Path(value[1:]).expanduser()
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = getattr(error, "strerror", None) or "not UTF-8 text"
            raise BadInput(f"{option}: cannot read {path}: {reason}") from None
    return value


def source_label(rubric: Rubric) -> str:
    return (
        "builtin" if rubric.source.startswith("builtin:") else rubric.source.removeprefix("file:")
    )


TEXT_HELP = "Text, @path to read a file, or - for stdin."
NO_CACHE_OPTION = click.option(
    "--no-cache", is_flag=True, help="Ask the judge even when the verdict cache has this judgment."
)
MODEL_OPTION = click.option(
    "--model", help="Judge model (default: $RUBRICLIB_MODEL or gpt-4o-mini)."
)
CONCURRENCY_OPTION = click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    help="Judgments in flight at once (default: the config's, else 8).",
)
REQUESTS_PER_MINUTE_OPTION = click.option(
    "--requests-per-minute",
    type=click.FloatRange(min=0, min_open=True),
    help="Space request starts to stay under this quota.",
)


def concurrency_setting(concurrency: int | None) -> int:
    """Judgments in flight at once: --concurrency when given, else the config's (else 8)."""
    from rubriclib.config import resolve

    return int(resolve("concurrency", concurrency).value)


def votes_option(help: str, default: int | None = None) -> Callable[[C], C]:
    """--votes: independent judgments combined by majority (1-5: the median)."""
    return click.option(
        "--votes",
        type=click.IntRange(min=1),
        default=default,
        show_default=default is not None,
        help=help,
    )


FROZEN_OPTION = click.option(
    "--frozen",
    is_flag=True,
    help="Refuse to run when a rubric's version or digest differs from rubriclib.lock.",
)
TEMPERATURE_OPTION = click.option(
    "--temperature",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="The judge's sampling temperature; votes need one above 0 to be independent samples.",
)
CHECKLIST_OPTION = click.option(
    "--checklist",
    is_flag=True,
    help="Checklist mode: ask each of the rubric's checklist items on its own (one request "
    "per item) and compute the verdict from the answers.",
)
POLL_SECONDS_OPTION = click.option(
    "--poll-seconds",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    envvar="RUBRICLIB_BATCH_POLL_SECONDS",
    help="With --batch: the first wait between polls of a batch (it grows to 2 minutes).",
)
FORMAT_OPTION = click.option(
    "--format",
    "report_format",
    type=click.Choice(["table", "json", "junit"]),
    default="table",
    show_default=True,
    help="A table for people, JSON for programs, JUnit XML for CI.",
)
judged_inputs = [
    click.option("--output", "output", required=True, help=f"The candidate output. {TEXT_HELP}"),
    click.option("--input", "input_", help=f"The task input. {TEXT_HELP}"),
    click.option("--context", help=f"Source context. {TEXT_HELP}"),
    click.option("--reference", help=f"A reference answer. {TEXT_HELP}"),
    click.option(
        "--baseline", help=f"The output to compare with, for a pairwise rubric. {TEXT_HELP}"
    ),
]


def with_options(options: list[Callable[[C], C]]) -> Callable[[C], C]:
    """A decorator adding `options` to a command, in this order in its --help."""

    def add(command: C) -> C:
        for option in reversed(options):
            command = option(command)
        return command

    return add


@dataclass(frozen=True)
class JudgedInputs:
    """What `judge` and `render` are given to judge, as typed: text, @path or - (stdin)."""

    output: str
    input: str | None
    context: str | None
    reference: str | None
    baseline: str | None

    def read(self, rubric: Rubric) -> dict[str, Any]:
        """The texts, read, as `render` and `Judge.agrade` take them by name; a --baseline for
        a rubric that is not pairwise, or two options reading stdin, is a usage error."""
        one_stdin(**vars(self))
        if self.baseline is not None and rubric.scale != "pairwise":
            raise BadInput(
                f"--baseline: {rubric.name} is a {rubric.scale} rubric; only pairwise rubrics "
                "compare with a baseline"
            )
        texts = {name: option_text(value, f"--{name}") for name, value in vars(self).items()}
        return {**texts, "output": texts["output"] or ""}


def with_judged_inputs(command: C) -> C:
    """--output, --input, --context, --reference, --baseline, handed to `command` as one
    JudgedInputs (`inputs`): `judge` and `render`."""

    @functools.wraps(command)
    def run(**options: Any) -> Any:
        given = {name: options.pop(name) for name in ("output", "context", "reference")}
        given |= {"input": options.pop("input_"), "baseline": options.pop("baseline")}
        return command(inputs=JudgedInputs(**given), **options)

    return with_options(judged_inputs)(cast(C, run))


eval_options = [
    click.argument("eval_file", type=click.Path(dir_okay=False)),
    click.option("--dataset", help="Judge the rows of this file instead of the eval's own."),
    click.option("--model", help="Judge model for every grader (wins over the eval file)."),
    click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N rows."),
    votes_option("Votes per judgment for every grader (wins over the eval file's votes)."),
    NO_CACHE_OPTION,
    CHECKLIST_OPTION,
]


with_eval_options = with_options(eval_options)
"""The options of every command that reads an eval file: eval, batch prepare, collect."""


@click.group(cls=_Group, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="rubriclib")
def main() -> None:
    """Versioned LLM-judge rubrics: list, inspect, validate, render, judge and regression-test them.

    \b
    Example:
      rubriclib judge groundedness --output "Paris." --context "Paris is France's capital."
    """
    show_warnings()


def show_warnings() -> None:
    """The library's warnings (an unusable cache, say) as `rubriclib: warning: ...` lines."""
    logger = logging.getLogger("rubriclib")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("rubriclib: warning: %(message)s"))
        handler.setLevel(logging.WARNING)
        logger.addHandler(handler)


def refuse_unlocked(rubrics: list[Rubric]) -> None:
    """For --frozen: exit 2, one line per rubric, when any differs from the lock."""
    from rubriclib.rubrics.lockfile import frozen_problems

    if problems := frozen_problems(rubrics):
        raise RubricError(problems)


def refuse_without_checklist(rubrics: list[Rubric], checklist: bool) -> None:
    """With --checklist: exit 2, one line per rubric that has no checklist, before any key is
    read or request sent."""
    from rubriclib.judging.checklist_protocol import no_checklist

    if checklist and (refusals := [no_checklist(r) for r in rubrics if not r.checklist]):
        raise BadInput(*(f"--checklist: {refusal}" for refusal in refusals))


def flag_judge(
    rubrics: list[Rubric],
    model: str | None,
    checklist: bool,
    no_cache: bool,
    *,
    votes: int = 1,
    temperature: float = 0.0,
) -> Judge:
    """The Judge `judge`, `test-goldens` and `calibrate` build from their flags, once
    --checklist has been checked against `rubrics` (a missing key stops here)."""
    from rubriclib.config import cache_setting, capabilities_setting
    from rubriclib.judging.judge import Judge
    from rubriclib.settings import JudgeSettings

    refuse_without_checklist(rubrics, checklist)
    settings = JudgeSettings(
        model=model, votes=votes, temperature=temperature, checklist=checklist or None
    )
    return Judge.from_settings(
        settings, cache=cache_setting(no_cache), capabilities=capabilities_setting()
    )

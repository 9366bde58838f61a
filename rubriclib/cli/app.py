"""The `rubriclib` group and what its commands share: input errors, output files, a run to its end
(`judging`: progress, interrupts, closing), exit codes. Shared options are `options.py`'s."""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click

from rubriclib._version import __version__
from rubriclib.errors import BatchRefused, InputError, JudgeConfigError
from rubriclib.files import holds_anything, write_atomically

# Each command imports what it needs, so `--help` and the commands that only read rubrics
# start fast, and only the commands that judge load asyncio and the openai SDK.
if TYPE_CHECKING:
    from rubriclib.batch import BatchRun
    from rubriclib.judging import GradeResult, Interrupted
    from rubriclib.rubrics import Rubric

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


# The module that registers each command. A command's module is imported when the command is
# looked up, so `rubriclib list` loads no code of `eval`'s; `--help` loads them all.
COMMAND_MODULES = {
    "align": "measure.align",
    "batch": "evals.batch",
    "cache": "runs",
    "calibrate": "measure.calibrate",
    "check": "rubrics.versions",
    "config": "rubrics.versions",
    "eval": "evals.evaluate",
    "index": "rubrics.sharing",
    "integrations": "integrations",
    "judge": "runs",
    "list": "rubrics.library",
    "lock": "rubrics.versions",
    "new": "rubrics.library",
    "new-pack": "rubrics.library",
    "render": "rubrics.library",
    "report": "evals.report",
    "search": "rubrics.sharing",
    "show": "rubrics.library",
    "test-goldens": "runs",
    "update": "rubrics.versions",
    "validate": "rubrics.validate",
}
RESOLVING_RUBRICS = {
    "align",
    "batch",
    "calibrate",
    "check",
    "eval",
    "judge",
    "list",
    "lock",
    "render",
    "search",
    "show",
    "test-goldens",
    "update",
    "validate",
}
"""The commands that resolve rubric references: each (a group's every command) takes --offline."""


def _go_offline(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    """--offline: RUBRICLIB_OFFLINE=1 while the command runs (so its subprocesses see it too)."""
    from rubriclib.config import OFFLINE_VARIABLE

    if not value:
        return
    before = os.environ.get(OFFLINE_VARIABLE)
    os.environ[OFFLINE_VARIABLE] = "1"

    def restore() -> None:
        if before is None:
            os.environ.pop(OFFLINE_VARIABLE, None)
        else:
            os.environ[OFFLINE_VARIABLE] = before

    ctx.call_on_close(restore)


def with_offline(command: click.Command) -> None:
    """Give `command` (each command of a group) the --offline flag."""
    for sub in command.commands.values() if isinstance(command, click.Group) else ():
        with_offline(sub)
    if isinstance(command, click.Group) or any(p.name == "offline" for p in command.params):
        return
    command.params.append(
        click.Option(
            ["--offline"],
            is_flag=True,
            expose_value=False,
            is_eager=True,
            callback=_go_offline,
            help="Never fetch a remote rubric: read it from the rubric cache, or stop (exit 2) "
            "naming the command that fetches it. Also RUBRICLIB_OFFLINE=1.",
        )
    )


class _Group(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        for name in COMMAND_MODULES:
            self.get_command(ctx, name)
        return super().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            importlib.import_module(f"rubriclib.cli.{COMMAND_MODULES[cmd_name]}")
        command = super().get_command(ctx, cmd_name)
        if command is not None and cmd_name in RESOLVING_RUBRICS:
            with_offline(command)
        return command

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


def report_destinations(
    out: str | None, report: str | None, *, html_only: bool = True
) -> tuple[Path | None, Path | None]:
    """The --out and --report files (None when not given), each writable and not one file,
    checked before any judge call; with `html_only`, --report must name a FILE.html."""
    from rubriclib.reports import is_html

    destination = writable(out, "--out") if out else None
    if report is None:
        return destination, None
    if html_only and not is_html(report):
        raise click.UsageError(f"--report writes the HTML report: name a FILE.html, not {report}")
    return destination, apart(writable(report, "--report"), destination)


def refuse_to_empty(results: Path | None, resume: bool | None, force: bool) -> None:
    """A results file (--out of eval, batch collect) that holds anything is refused, before any
    request, unless --resume continues it or --force lets the run replace it (`resume` None:
    the command has no --resume)."""
    if results is None or resume or force or not holds_anything(results):
        return
    if resume is None:
        how = "pass --force to replace it, or name another file"
    else:
        how = "pass --resume to continue it or --force to replace it"
    raise BadInput(f"--out: {results} already holds results; {how}")


def apart(report: Path, out: Path | None) -> Path:
    """`report` (--report), refused when it names the --out file: one would replace the other."""
    if out is not None and report.resolve() == out.resolve():
        raise BadInput("--report: names the same file as --out")
    return report


@dataclass(frozen=True)
class ReportFiles:
    """Where test-goldens and calibrate put their reports: the text report in --out (as the
    user typed it, and its checked `destination`), the HTML one in --report (`page`)."""

    out: str | None
    destination: Path | None
    page: Path | None

    @classmethod
    def checked(cls, out: str | None, html_report: str | None) -> ReportFiles:
        """Both files checked before any judge call (report_destinations)."""
        return cls(out, *report_destinations(out, html_report))

    def write(self, text: str, summary: str, page: Callable[[], str]) -> None:
        """The HTML report when asked, then the report: printed, or with --out written there
        and only its `summary` line printed, saying where the report went."""
        if self.page is not None:
            write_atomically(self.page, page())
            click.echo(f"rubriclib: wrote the HTML report to {self.page}", err=True)
        if self.destination is None:
            click.echo(text)
            return
        write_atomically(self.destination, text + "\n")
        click.echo(f"{summary} (report: {self.out})")


def interrupted_exit(signal: str, judged: str) -> int:
    """The exit code of a run a signal stopped, after a line on stderr saying how far it got
    (`judged`: "N of M ...") and that the report holds what was judged."""
    click.echo(
        f"rubriclib: interrupted by {signal}: judged {judged}; the report holds what was judged",
        err=True,
    )
    return SIGNAL_EXIT_CODES[signal]


def source_label(rubric: Rubric) -> str:
    return (
        "builtin" if rubric.source.startswith("builtin:") else rubric.source.removeprefix("file:")
    )


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

"""The options several commands share and what they become: text given as itself, @path or -
(stdin), the judge flags turned into one Judge, the eval-file options, and the refusals
(--frozen, --checklist) checked before any key is read or request sent."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from rubriclib.cli.app import BadInput
from rubriclib.errors import RubricError

if TYPE_CHECKING:
    from rubriclib.judging import Judge
    from rubriclib.rubrics import Rubric
    from rubriclib.settings import AnswerMode, Protocol

C = TypeVar("C", bound=Callable[..., Any])


def one_stdin(**options: str | None) -> None:
    """Refuse two options that would both read stdin: the second would read nothing."""
    readers = [f"--{name}" for name, value in options.items() if value == "-"]
    if len(readers) > 1:
        raise click.UsageError(f"only one option can read stdin (-); got {', '.join(readers)}")


HTML_REPORT_OPTION = click.option(
    "--report",
    "html_report",
    help="Also write the run's HTML report here (a FILE.html), beside the --format report.",
)


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


def non_negative_option(name: str, default: float, help: str, **more: Any) -> Callable[[C], C]:
    """An option taking a number of 0 or more, its default shown."""
    return click.option(
        name, type=click.FloatRange(min=0), default=default, show_default=True, help=help, **more
    )


def file_option(name: str, dest: str, help: str) -> Callable[[C], C]:
    """An option naming one file (a folder is refused)."""
    return click.option(name, dest, type=click.Path(dir_okay=False), help=help)


TEMPERATURE_OPTION = non_negative_option(
    "--temperature",
    0.0,
    "The judge's sampling temperature; votes need one above 0 to be independent samples.",
)


PROTOCOL_OPTION = click.option(
    "--protocol",
    type=click.Choice(["tools", "json", "auto"]),
    default=None,
    help="How the judge gives its verdict: tools (a tool call; the default), json (one JSON "
    "object in the same fields, through response_format, for endpoints that call tools badly) "
    "or auto (tools, then json once the endpoint refuses tools). Default: RUBRICLIB_PROTOCOL, "
    "the project's config, else tools.",
)


SEED_OPTION = click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="A seed sent with every request (vote and trial K get the seed plus their offset, so "
    "votes stay independent samples); recorded in each result. Default: none sent.",
)


EVIDENCE_OPTIONS = [
    click.option(
        "--evidence",
        type=click.Choice(["whole", "explore", "auto"]),
        default=None,
        help="How the judge is shown an agent run: whole (cut in the middle to fit the prompt), "
        "explore (it lists, reads and searches the run's blocks through tools) or auto (whole "
        "when it fits uncut, else explored). Default: RUBRICLIB_EVIDENCE, the project's config, "
        "else auto.",
    ),
    click.option(
        "--exploring-turns",
        type=click.IntRange(min=1),
        default=None,
        help="The requests an explored judgment may spend before its verdict. Default: 12.",
    ),
    click.option(
        "--exploring-characters",
        type=click.IntRange(min=1),
        default=None,
        help="The characters the exploring tools may show a judgment. Default: 80% of what "
        "the prompt limit leaves after the first request.",
    ),
]


def evidence_options(command: C) -> C:
    """--evidence, --exploring-turns and --exploring-characters, handed to `command` as one
    mapping (`evidence`) of the JudgeSettings fields given."""

    @functools.wraps(command)
    def run(**options: Any) -> Any:
        names = ("evidence", "exploring_turns", "exploring_characters")
        given = {name: options.pop(name) for name in names}
        chosen = {name: value for name, value in given.items() if value is not None}
        return command(evidence=chosen, **options)

    return with_options(EVIDENCE_OPTIONS)(cast(C, run))


def checklist_options(command: C) -> C:
    """--checklist and --checklist-answers, handed to `command` as one `checklist`: None
    (holistic), `tool`, `probability` or `one-call` (the last two imply --checklist)."""

    @functools.wraps(command)
    def run(**options: Any) -> Any:
        asked, answers = options.pop("checklist"), options.pop("checklist_answers")
        checklist = (answers or "tool") if asked or answers not in (None, "tool") else None
        return command(checklist=checklist, **options)

    flag = click.option(
        "--checklist",
        is_flag=True,
        help="Checklist mode: ask each of the rubric's checklist items on its own (one request "
        "per item) and compute the verdict from the answers.",
    )
    answers = click.option(
        "--checklist-answers",
        type=click.Choice(["tool", "probability", "one-call"]),
        default="tool",
        help="How checklist items are answered: tool (each item in its own call with a reason; "
        "the default, for small local judges), probability (each item one word, p(yes) read "
        "from the logprobs) or one-call (every item in one call: one request per vote, for "
        "large hosted judges); the last two imply --checklist.",
    )
    return with_options([flag, answers])(cast(C, run))


POLL_SECONDS_OPTION = non_negative_option(
    "--poll-seconds",
    10.0,
    "With --batch: the first wait between polls of a batch (it grows to 2 minutes).",
    envvar="RUBRICLIB_BATCH_POLL_SECONDS",
)


FORMAT_OPTION = click.option(
    "--format",
    "report_format",
    type=click.Choice(["table", "json", "junit"]),
    default="table",
    show_default=True,
    help="A table for people, JSON for programs, JUnit XML for CI.",
)
TABLE_OR_JSON_OPTION = click.option(
    "--format",
    "report_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="A table for people, JSON for programs.",
)


def with_options(options: list[Callable[[C], C]]) -> Callable[[C], C]:
    """A decorator adding `options` to a command, in this order in its --help."""

    def add(command: C) -> C:
        for option in reversed(options):
            command = option(command)
        return command

    return add


eval_options = [
    click.argument("eval_file", type=click.Path(dir_okay=False)),
    click.option("--dataset", help="Judge the rows of this file instead of the eval's own."),
    click.option("--model", help="Judge model for every grader (wins over the eval file)."),
    click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N rows."),
    votes_option("Votes per judgment for every grader (wins over the eval file's votes)."),
    NO_CACHE_OPTION,
    checklist_options,
    PROTOCOL_OPTION,
    SEED_OPTION,
    evidence_options,
]


with_eval_options = with_options(eval_options)
"""The options of every command that reads an eval file: eval, batch prepare, collect."""


def refuse_unlocked(rubrics: list[Rubric]) -> None:
    """For --frozen: exit 2, one line per rubric, when any differs from the lock."""
    from rubriclib.rubrics import frozen_problems

    if problems := frozen_problems(rubrics):
        raise RubricError(problems)


def refuse_without_checklist(rubrics: list[Rubric], checklist: AnswerMode | None) -> None:
    """With --checklist or --checklist-answers: exit 2, one line per rubric checklist mode
    cannot judge so (`checklist_refused`), naming the flag as typed, before any key is read or
    request sent."""
    from rubriclib.judging import checklist_refused
    from rubriclib.settings import checklist_flag

    if checklist is None:
        return
    refusals = [why for r in rubrics if (why := checklist_refused(r, checklist)) is not None]
    if refusals:
        raise BadInput(*(f"{checklist_flag(checklist)}: {refusal}" for refusal in refusals))


def flag_judge(
    rubrics: list[Rubric],
    model: str | None,
    checklist: AnswerMode | None,
    no_cache: bool,
    *,
    votes: int = 1,
    temperature: float = 0.0,
    protocol: Protocol | None = None,
    seed: int | None = None,
    evidence: Mapping[str, Any] | None = None,
) -> Judge:
    """The Judge `judge`, `test-goldens`, `calibrate` and `align` build from their flags, once
    --checklist has been checked against `rubrics` (a missing key stops here); `evidence` is
    what `evidence_options` gave."""
    from rubriclib.config import cache_setting, capabilities_setting
    from rubriclib.judging import Judge
    from rubriclib.settings import JudgeSettings, checklist_mode

    refuse_without_checklist(rubrics, checklist)
    settings = JudgeSettings(
        model=model,
        votes=votes,
        temperature=temperature,
        protocol=protocol,
        seed=seed,
        **checklist_mode(checklist),
        **(evidence or {}),
    )
    return Judge.from_settings(
        settings, cache=cache_setting(no_cache), capabilities=capabilities_setting()
    )

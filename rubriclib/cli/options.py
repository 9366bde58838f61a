"""The options several commands share and what they become: text given as itself, @path or -
(stdin), the judge flags turned into one Judge, the eval-file options, and the refusals
(--frozen, --checklist) checked before any key is read or request sent."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from rubriclib.cli.app import BadInput
from rubriclib.errors import RubricError

if TYPE_CHECKING:
    from rubriclib.item import Transcript
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


judged_inputs = [
    click.option(
        "--output",
        "output",
        help=f"The candidate output (required unless --transcript gives a run). {TEXT_HELP}",
    ),
    click.option(
        "--transcript",
        help="An agent run to judge: a JSON file (or - for stdin) of messages in OpenAI chat, "
        "Anthropic, Responses, LangChain or Pydantic AI shape, or an OpenTelemetry export of one "
        "trace; its last assistant text is the output unless --output.",
    ),
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

    output: str | None
    transcript: str | None
    input: str | None
    context: str | None
    reference: str | None
    baseline: str | None

    def read(self, rubric: Rubric) -> dict[str, Any]:
        """The texts and the run, read, as `render` and `Judge.agrade` take them by name; a
        --baseline for a rubric that is not pairwise, no --output and no --transcript, or two
        options reading stdin, is a usage error; a run that cannot be read is bad input."""
        one_stdin(**vars(self))
        if self.baseline is not None and rubric.scale != "pairwise":
            raise BadInput(
                f"--baseline: {rubric.name} is a {rubric.scale} rubric; only pairwise rubrics "
                "compare with a baseline"
            )
        if self.output is None and self.transcript is None:
            raise click.UsageError("Missing option '--output' (or '--transcript').")
        given = {name: value for name, value in vars(self).items() if name != "transcript"}
        texts = {name: option_text(value, f"--{name}") for name, value in given.items()}
        run = transcript_file(self.transcript)
        if run is None:
            return {**texts, "output": texts["output"] or "", "transcript": None}
        return {**texts, "output": texts["output"] or run.final_answer or "", "transcript": run}


def transcript_file(value: str | None) -> Transcript | None:
    """The run in the JSON file `value` names (`-`: stdin), read; bad input naming the file,
    the line of the message and the problem when it cannot be read."""
    from rubriclib.item import TranscriptError, read_transcript

    if value is None:
        return None
    name = "<stdin>" if value == "-" else value
    text = option_text(value if value == "-" else f"@{value}", "--transcript") or ""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadInput(
            f"{name}:{error.lineno}: --transcript: invalid JSON: {error.msg} (column {error.colno})"
        ) from None
    try:
        return read_transcript(data)
    except TranscriptError as error:
        lines = message_lines(text)
        raise BadInput(
            *(f"{name}:{_line(place, lines)}: {place}: {why}" for place, why in error.problems)
        ) from None


def message_lines(text: str) -> list[int]:
    """The line each element of the JSON list `text` starts on (none when it is no list)."""
    decoder = json.JSONDecoder()
    position = len(text) - len(text.lstrip())
    if not text[position:].startswith("["):
        return []
    starts: list[int] = []
    position += 1
    while True:
        position = len(text) - len(text[position:].lstrip(" \t\r\n,"))
        if position >= len(text) or text[position] == "]":
            return [text.count("\n", 0, start) + 1 for start in starts]
        starts.append(position)
        position = decoder.raw_decode(text, position)[1]


def _line(place: str, lines: list[int]) -> int:
    found = re.match(r"transcript\[(\d+)\]", place)
    index = int(found[1]) if found else -1
    return lines[index] if 0 <= index < len(lines) else 1


def with_judged_inputs(command: C) -> C:
    """--output, --input, --context, --reference, --baseline, handed to `command` as one
    JudgedInputs (`inputs`): `judge` and `render`."""

    @functools.wraps(command)
    def run(**options: Any) -> Any:
        names = ("output", "transcript", "context", "reference")
        given = {name: options.pop(name) for name in names}
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
    checklist_options,
    PROTOCOL_OPTION,
    SEED_OPTION,
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
) -> Judge:
    """The Judge `judge`, `test-goldens`, `calibrate` and `align` build from their flags, once
    --checklist has been checked against `rubrics` (a missing key stops here)."""
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
    )
    return Judge.from_settings(
        settings, cache=cache_setting(no_cache), capabilities=capabilities_setting()
    )

"""What `judge` and `render` are given to judge, as typed (text, @path or - for stdin, a run
file): the options, read into one `JudgedInputs`."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from rubriclib.cli.app import BadInput
from rubriclib.cli.options import TEXT_HELP, one_stdin, option_text, with_options

if TYPE_CHECKING:
    from rubriclib.item import Transcript
    from rubriclib.rubrics import Rubric

C = TypeVar("C", bound=Callable[..., Any])

judged_inputs = [
    click.option(
        "--output",
        "output",
        help=f"The candidate output (required unless --transcript gives a run). {TEXT_HELP}",
    ),
    click.option(
        "--transcript",
        help="An agent run to judge: a JSON file (or - for stdin) of messages in OpenAI chat, "
        "Anthropic, Responses, LangChain, Pydantic AI or smolagents shape (smolagents' messages "
        "or steps), or an OpenTelemetry export of one trace; its last assistant text is the "
        "output unless --output.",
    ),
    click.option("--input", "input_", help=f"The task input. {TEXT_HELP}"),
    click.option("--context", help=f"Source context. {TEXT_HELP}"),
    click.option("--reference", help=f"A reference answer. {TEXT_HELP}"),
    click.option(
        "--baseline", help=f"The output to compare with, for a pairwise rubric. {TEXT_HELP}"
    ),
]


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
        line = _line_finder(text, data)
        problems = (f"{name}:{line(place)}: {place}: {why}" for place, why in error.problems)
        raise BadInput(*problems) from None


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


def _line_finder(text: str, data: Any) -> Callable[[str], int]:
    """The line of the file a problem's place is on: a list's message's (`transcript[3]...`),
    or, in a mapping (an AgentRun's dump), the line of the field it names or its parent's."""
    if isinstance(data, dict):
        from rubriclib.validation import LineFinder  # loaded by who needs it

        finder = LineFinder(text, "", root="transcript")
        return lambda place: finder.line(place) or 1
    lines = message_lines(text)

    def line(place: str) -> int:
        found = re.match(r"transcript\[(\d+)\]", place)
        index = int(found[1]) if found else -1
        return lines[index] if 0 <= index < len(lines) else 1

    return line


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

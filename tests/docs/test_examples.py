"""Every fenced block of README.md and docs/**/*.md is checked: a marker on the line above each
says how, and a page whose example breaks fails the tests.

- `<!-- snippet: NAME -->`: a test of its own reads it (`conftest.snippet(NAME)`).
- `<!-- file: PATH -->`: the block is written to PATH in the page's sandbox, and a later
  `run` block of the page must name PATH (so a command checks it).
- `<!-- run -->`: run in the page's sandbox, blocks in page order. A `console` block's `$ `
  lines are commands (`rubriclib ...`, `export NAME=VALUE`, `echo $?`); the lines after one are
  its output, compared as shown below. A `python` block is executed.
- `<!-- illustration: WHY -->`: not run; WHY says why (a real model, a provider's Batch API,
  another tool) and where an equivalent test lives.

A page's sandbox: a home folder shown as `/home/me` (HOME, so the verdict cache is
`/home/me/.cache/rubriclib`), the working directory `/home/me/project` holding a copy of
`examples/`, and the scripted judge server as OPENAI_BASE_URL (no key, the default model). The
judge answers every verdict the way a golden with that output expects (a built-in's goldens,
or the example's), else a pass, always with the reason `SCRIPTED_REASON` and, where a rubric
asks for citations, a citation of the output; a rubric's output fields get the first value
their schema allows (`scripted_fields`).

Shown output is compared line by line with what was printed, normalised only by putting
`/home/me` for the sandbox's folder: a line `...` (indented or not) stands for any number of lines, a line
ending in `...` for a line that starts with what comes before it. Shown JSON (output starting
with `{`) is compared as a part of the printed JSON: every key shown has the value shown (a
string ending in `...` as a prefix), and `latency_ms`, a timing, is any number.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import DOCS, documentation, scripted_citations, sections
from judge_server import JudgeServer, Reply, completion, tool_reply

from rubriclib.cli import main

ROOT = DOCS.parent
SCRIPTED_REASON = "Every claim ('landed in 1969') is supported by the source."
"""The reason the sandbox's judge gives, so shown verdict lines are exact."""
SHOWN_HOME = "/home/me"
FENCE = re.compile(r"^(`{3,}|~{3,})([\w-]*)[^\n]*$")
MARKER = re.compile(r"^<!-- (snippet|file|run|illustration)(?:: (.+?))? -->$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a documentation file and the marker above it."""

    path: Path
    line: int
    language: str
    text: str
    markers: dict[str, str]
    """The markers on the lines right above it: kind -> its argument ("" for `run`)."""

    @property
    def kind(self) -> str | None:
        """How it is run here: `file` and `run` before a named test's `snippet`."""
        return next(
            (k for k in ("file", "run", "snippet", "illustration") if k in self.markers), None
        )

    @property
    def argument(self) -> str | None:
        return self.markers.get(self.kind) if self.kind else None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of `path` (indented ones included), in order."""
    lines = path.read_text(encoding="utf-8").split("\n")
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index].strip())
        if not opening:
            index += 1
            continue
        indent = len(lines[index]) - len(lines[index].lstrip())
        ticks = opening[1]
        end = index + 1
        while end < len(lines) and not re.fullmatch(
            rf"\s*{re.escape(ticks[0])}{{{len(ticks)},}}\s*", lines[end]
        ):
            end += 1
        markers: dict[str, str] = {}
        above = index - 1
        while above >= 0 and (marker := MARKER.match(lines[above].strip())):
            markers[marker[1]] = marker[2] or ""
            above -= 1
        text = "\n".join(line[indent:] for line in lines[index + 1 : end])
        found.append(Block(path, index + 1, opening[2], text, markers))
        index = end + 1
    return found


ALL = [block for path in documentation() for block in blocks(path)]
PAGES = sorted({block.path for block in ALL if block.kind in ("run", "file")})


def test_every_block_in_the_documentation_is_marked_with_how_it_is_checked() -> None:
    unmarked = [block.where for block in ALL if block.kind is None]
    assert unmarked == [], "add <!-- run -->, <!-- file: PATH -->, <!-- snippet: NAME --> or "
    "<!-- illustration: WHY --> above each"
    assert len(ALL) >= 50


def test_a_shown_file_of_the_examples_is_the_file_shipped() -> None:
    """A page that shows `examples/...` shows what a reader who copies it gets."""
    shipped = [b for b in ALL if b.kind == "file" and (b.argument or "").startswith("examples/")]
    assert shipped, "no page shows a shipped example file"
    differing = [
        b.where for b in shipped if (ROOT / str(b.argument)).read_text().rstrip("\n") != b.text
    ]
    assert differing == []


def test_an_illustration_says_why_it_is_not_run() -> None:
    bare = [b.where for b in ALL if b.kind == "illustration" and len(b.argument or "") < 20]
    assert bare == []


def test_only_commands_and_python_are_run() -> None:
    wrong = [b.where for b in ALL if b.kind == "run" and b.language not in ("console", "python")]
    assert wrong == []


def golden_answers() -> dict[tuple[str, str], dict[str, Any]]:
    """What a golden with this output and context expects, for the built-ins and the
    examples."""
    files = [*(ROOT / "goldens").glob("*.yaml"), *(ROOT / "examples").rglob("goldens/*.yaml")]
    goldens = [golden for file in files for golden in yaml.safe_load(file.read_text()) or []]
    for rubric in [*(ROOT / "rubrics").glob("*.md"), *(ROOT / "examples").rglob("rubrics/*.md")]:
        header = rubric.read_text(encoding="utf-8").split("---\n")[1]
        goldens += yaml.safe_load(header).get("goldens") or []
    return {
        (golden["output"].strip(), str(golden.get("context", "")).strip()): golden
        for golden in goldens
        if isinstance(golden.get("output"), str)
    }


GOLDENS = golden_answers()


def sandbox_judge(body: dict[str, Any]) -> Reply:
    """A verdict as the golden with this output expects it, else a pass."""
    user = body["messages"][1]["content"]
    tools = [tool["function"]["name"] for tool in body.get("tools", [])]
    arguments = {"reason": SCRIPTED_REASON} | scripted_citations(body, user)
    _, values = sections(user)
    output = values.get("## Candidate output [output]", "").strip()
    context = values.get("## Source context [context]", "").strip()
    golden = GOLDENS.get((output, context), {})
    if not tools:  # probability answers: one word, no logprobs (read as the word written)
        return Reply(body=completion(content="yes"))
    if "answer" in tools:
        return tool_reply("answer", arguments | {"answer": "yes"})
    if "answer_checklist" in tools:  # one call: every item answered yes
        required = body["tools"][0]["function"]["parameters"]["required"]
        items = [key for key in required if key not in ("reason", "citations")]
        return tool_reply("answer_checklist", arguments | dict.fromkeys(items, "yes"))
    if "set_grade_score" in tools:
        return tool_reply("set_grade_score", arguments | {"score": golden.get("expected_score", 5)})
    if "set_pairwise_winner" in tools:
        return tool_reply("set_pairwise_winner", arguments | {"winner": "tie"})
    if "set_grade_label" in tools:  # the golden's label, else the first one offered
        offered = body["tools"][0]["function"]["parameters"]["properties"]["label"]["enum"]
        return tool_reply(
            "set_grade_label", arguments | {"label": golden.get("expected", offered[0])}
        )
    verdict = golden.get("expected", "pass")
    name = f"set_grade_{verdict}" if f"set_grade_{verdict}" in tools else tools[0]
    extra = {"verdict": verdict} if name == "set_grade" else {}
    parameters = body["tools"][0]["function"]["parameters"]
    return tool_reply(name, arguments | extra | scripted_fields(parameters))


VERDICT_ARGUMENTS = {"reason", "citations", "verdict", "score", "winner", "label", "answer"}


def scripted_fields(parameters: dict[str, Any]) -> dict[str, Any]:
    """A rubric's output fields as the sandbox fills them: each required one (none without)."""
    return {
        name: first_value(schema)
        for name, schema in parameters.get("properties", {}).items()
        if name not in VERDICT_ARGUMENTS and name in parameters.get("required", [])
    }


def first_value(schema: dict[str, Any]) -> Any:
    """The first value `schema` allows: its first enum value, its minimum, false, no items."""
    kind = schema.get("type")
    if kind == "object":
        properties = schema["properties"]
        return {name: first_value(properties[name]) for name in schema.get("required", [])}
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    defaults = {"boolean": False, "array": [], "string": "scripted"}
    return (schema.get("enum") or [defaults.get(str(kind))])[0]


@dataclass
class Sandbox:
    home: Path
    runner: CliRunner
    environment: pytest.MonkeyPatch
    last_exit: int = 0

    @property
    def project(self) -> Path:
        return self.home / "project"

    def shown(self, text: str) -> str:
        return text.replace(str(self.home), SHOWN_HOME)


@pytest.fixture
def sandbox(
    tmp_path: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Sandbox]:
    home = tmp_path / "me"
    shutil.copytree(ROOT / "examples", home / "project" / "examples")
    for name in ("RUBRICLIB_CACHE_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.chdir(home / "project")
    judge_server.responder = sandbox_judge
    yield Sandbox(home, CliRunner(), monkeypatch)


def commands(block: Block) -> Iterator[tuple[str, list[str]]]:
    """Each `$ ` command of a console block with the output lines shown after it."""
    command: str | None = None
    output: list[str] = []
    for line in block.text.replace("\\\n", "").split("\n"):
        if line.startswith("$ "):
            if command is not None:
                yield command, output
            command, output = line[2:], []
        else:
            assert command is not None, f"{block.where}: output before any command"
            output.append(line)
    assert command is not None, f"{block.where}: no command"
    yield command, output


def lines_match(shown: list[str], printed: list[str]) -> str | None:
    """Why `printed` is not what `shown` shows (`...` lines and `...` endings elide), or None."""
    at = 0
    skipping = False
    for line in shown:
        if line.strip() == "...":
            skipping = True
            continue
        while at < len(printed) and not line_matches(line, printed[at]):
            if not skipping:
                return f"shown {line!r}, printed {printed[at]!r}"
            at += 1
        if at == len(printed):
            return f"shown {line!r}, never printed"
        at, skipping = at + 1, False
    if not skipping and at < len(printed):
        return f"printed {printed[at]!r} after the last line shown"
    return None


def line_matches(shown: str, printed: str) -> bool:
    if shown.endswith("..."):
        return printed.startswith(shown[:-3])
    return shown == printed


def json_part(shown: Any, printed: Any, key: str = "") -> bool:
    """Whether `shown` is `printed` with keys left out (a `...` ending as a prefix)."""
    if key == "latency_ms":
        return isinstance(printed, int | float)
    if isinstance(shown, dict):
        return isinstance(printed, dict) and all(
            name in printed and json_part(value, printed[name], name)
            for name, value in shown.items()
        )
    if isinstance(shown, str) and shown.endswith("..."):
        return isinstance(printed, str) and printed.startswith(shown[:-3])
    return bool(shown == printed)


def run_command(sandbox: Sandbox, block: Block, command: str, shown: list[str]) -> None:
    program, *arguments = shlex.split(command, comments=True)
    if program == "export":
        name, value = arguments[0].split("=", 1)
        sandbox.environment.setenv(name, value)
        return
    if program == "echo":
        assert arguments == ["$?"], f"{block.where}: {command}"
        assert shown == [str(sandbox.last_exit)], f"{block.where}: {command}"
        return
    assert program == "rubriclib", f"{block.where}: {program} is not run here: an illustration?"
    result = sandbox.runner.invoke(main, arguments)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    sandbox.last_exit = result.exit_code
    printed = sandbox.shown(result.output).rstrip("\n")
    if shown and shown[0].startswith("{"):
        assert json_part(json.loads("\n".join(shown)), json.loads(printed)), (
            f"{block.where}: {command}\n{printed}"
        )
    elif shown:
        why = lines_match(shown, printed.split("\n"))
        assert why is None, f"{block.where}: {command}: {why}\n--- printed:\n{printed}"


def run_block(sandbox: Sandbox, block: Block) -> None:
    if block.language == "python":
        exec(compile(block.text, block.where, "exec"), {})  # noqa: S102 - the docs' own example
        return
    listed = list(commands(block))
    for index, (command, shown) in enumerate(listed):
        run_command(sandbox, block, command, shown)
        following = listed[index + 1][0] if index + 1 < len(listed) else ""
        if following != "echo $?" and not command.startswith(("export", "echo")):
            assert sandbox.last_exit == 0, f"{block.where}: {command} exited {sandbox.last_exit}"


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_the_page_s_examples_run_as_shown(page: Path, sandbox: Sandbox) -> None:
    written: list[Block] = []
    ran = ""
    for block in blocks(page):
        if block.kind == "file":
            assert block.argument
            target = sandbox.project / block.argument
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text + "\n", encoding="utf-8")
            written.append(block)
        elif block.kind == "run":
            run_block(sandbox, block)
            ran += block.text
    unchecked = [block.where for block in written if block.argument not in ran]
    assert unchecked == [], "a file the page shows that no command of the page checks"

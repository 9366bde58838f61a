"""The getting-started page's first verdict, run as written against a local server."""

from __future__ import annotations

import shlex

import pytest
from click.testing import CliRunner
from conftest import snippet
from judge_server import JudgeServer, tool_reply

from rubriclib.cli import main


def test_the_first_verdict_is_what_the_page_shows(
    endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    *commands, shown = snippet("first-verdict").splitlines()
    exports = [line.removeprefix("$ export ").split("=", 1) for line in commands[:-1]]
    assert [name for name, _ in exports] == ["OPENAI_BASE_URL", "RUBRICLIB_MODEL"]
    monkeypatch.delenv("OPENAI_API_KEY")  # a local server needs none
    for name, value in exports:
        monkeypatch.setenv(name, endpoint.url if name == "OPENAI_BASE_URL" else value)
    endpoint.responder = None
    reason = shown.split(": ", 1)[1]
    endpoint.script(tool_reply("set_grade_pass", {"reason": reason}))
    program, *arguments = shlex.split(commands[-1].removeprefix("$ "))
    assert program == "rubriclib"
    result = CliRunner().invoke(main, arguments)
    assert (result.exit_code, result.output) == (0, f"{shown}\n")
    assert endpoint.requests[-1]["model"] == dict(exports)["RUBRICLIB_MODEL"]

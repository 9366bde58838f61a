"""Worked examples in the rubric file: read and checked like goldens (file, line, field), in
the digest, printed by `show`, rendered on the built-in pages, never judged by `test-goldens`,
and a warning where a golden's output is an example's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, tool_reply

from rubriclib import RubricError, load_rubric
from rubriclib.cli import main

sys.path.insert(0, str(Path(__file__).parents[2] / "docs" / "hooks"))
from library_pages import builtin_page  # noqa: E402

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")

TRIAGE = """\
---
name: triage
version: 1.0.0
scale: labels
description: Whether a reply resolves the ticket.
requires: [input]
labels:
  resolved: pass
  not-resolved: fail
examples:
  - name: refund-sent
    input: Where is my refund?
    output: Your refund was sent today.
    expected: resolved
    why: Nothing more is owed.
goldens:
  - {name: refund-refused, input: "Where is my refund?", output: No., expected: not-resolved}
  - {name: refund-again, input: "Where is my refund?", output: Your refund was sent today., expected: resolved}
---
Label the reply to {input}.
"""


def problems_of(path: Path) -> list[str]:
    with pytest.raises(RubricError) as caught:
        load_rubric(str(path))
    return [str(problem) for problem in caught.value.problems]


def test_examples_are_read_as_goldens_are(write_file: Callable[..., Path]) -> None:
    rubric = load_rubric(str(write_file("triage.md", TRIAGE)))
    [example] = rubric.examples
    assert (example.name, example.expected_label, example.expected) == (
        "refund-sent",
        "resolved",
        "pass",
    )
    assert [golden.name for golden in rubric.goldens] == ["refund-refused", "refund-again"]
    without = TRIAGE.split("examples:")[0] + "goldens:" + TRIAGE.split("goldens:")[1]
    assert load_rubric(str(write_file("plain.md", without))).digest != rubric.digest


def test_every_problem_of_an_example_names_its_line_and_field(
    write_file: Callable[..., Path],
) -> None:
    broken = TRIAGE.replace(
        "    why: Nothing more is owed.\n",
        "    why: Nothing more is owed.\n"
        "  - {name: refund-sent, output: x, expected: maybe}\n"
        "  - {name: cited, input: q, output: y, expected: resolved, cites: [y]}\n"
        "  - name: run\n"
        "    input: q\n"
        "    transcript: [{role: user, content: q}, {role: assistant, content: done}]\n"
        "    expected: resolved\n",
    )
    path = write_file("broken.md", broken)
    assert problems_of(path) == [
        f"{path}:16: examples[1].name: duplicate example name 'refund-sent'",
        f"{path}:16: examples[1].expected: 'maybe' is not a label: one of resolved, not-resolved",
        f"{path}:16: examples[1].input: is required by the rubric (requires)",
        f"{path}:17: examples[2].cites: applies to goldens: a worked example is shown to the "
        "judge, never judged",
        f"{path}:20: examples[3].transcript: a worked example is shown as text: an agent run "
        "cannot be one",
    ]


def test_show_prints_the_examples(write_file: Callable[..., Path]) -> None:
    path = str(write_file("triage.md", TRIAGE))
    text = CliRunner().invoke(main, ["show", path])
    assert text.exit_code == 0, text.output
    assert "examples:\n  - name: refund-sent\n    input: Where is my refund?\n" in text.output
    assert "    expected: pass\n    expected_label: resolved\n    why: Nothing more" in text.output
    shown = json.loads(CliRunner().invoke(main, ["show", path, "--json"]).output)
    assert shown["examples"] == [
        {
            "name": "refund-sent",
            "input": "Where is my refund?",
            "output": "Your refund was sent today.",
            "expected": "pass",
            "expected_label": "resolved",
            "why": "Nothing more is owed.",
        }
    ]


def test_goldens_are_judged_and_examples_never_with_a_warning_for_a_shared_output(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    path = str(write_file("triage.md", TRIAGE))
    endpoint.responder = None
    endpoint.script(_label("not-resolved"), _label("resolved"))
    # a real process: the warning handler binds the stderr of the first command run in it
    env = {**os.environ, "OPENAI_BASE_URL": endpoint.url, "OPENAI_API_KEY": SECRET_KEY}
    command = [RUBRICLIB, "test-goldens", path, "--format", "json", "--no-cache"]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    warning = (
        "rubriclib: warning: triage: golden 'refund-again' has the output worked example "
        "'refund-sent' shows the judge with its verdict, so it measures nothing"
    )
    assert run.stderr.strip() == warning
    report = json.loads(run.stdout)
    assert report["rubrics"][0]["judgments"] == 2 and len(endpoint.requests) == 2
    validated = CliRunner().invoke(main, ["validate", path])
    assert validated.exit_code == 0 and validated.stderr.strip() == warning


def _label(name: str) -> Reply:
    return tool_reply("set_grade_label", {"reason": "r", "label": name})


def test_a_built_in_page_shows_the_examples_before_the_goldens(
    write_file: Callable[..., Path],
) -> None:
    rubric = load_rubric(str(write_file("triage.md", TRIAGE)))
    page = builtin_page(rubric, list(rubric.goldens))
    examples = page.index("## Worked examples (1)")
    assert examples < page.index("## Goldens (2)")
    assert "### `refund-sent`\n\n**Expected:** `resolved` (pass)" in page[examples:]

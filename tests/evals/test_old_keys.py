"""Checklist mode in an eval file is `mode:` and `answers:` wherever a judge's settings go (the
eval's `judge:`, a grader, its `judge:`, a panel's `judges:`); the old `checklist:` and
`checklist_answers:` still give the same judge, warned of at their line, and both spellings
of one setting are refused there. Judged over real HTTP by the scripted server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer, Reply, tool_reply

from rubriclib.cli import main

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")

FACTS = """\
---
name: short-facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing.
citations: off
checklist:
  - id: invented
    question: Does the output state a number the input does not give?
    fail_if: "yes"
  - id: rude
    question: Is the output rude?
    fail_if: "yes"
---
Call `set_grade_pass` or `set_grade_fail`.
"""

EVAL = """\
name: facts
judge: {model: judge-model%(judge)s}
rows:
  - {id: calm, output: "In 1969."}
  - {id: loud, output: "In 1969, you fool. rude"}
graders:
  - name: facts
    rubric: ./facts.md
%(grader)s"""


def respond(body: dict[str, Any]) -> Reply:
    """Each checklist item answered (by its own call or all in one), or the holistic verdict:
    an output with `rude` in it is rude."""
    rude = (
        "yes" if "rude" in body["messages"][1]["content"].split("## Candidate output")[1] else "no"
    )
    name = body["tools"][0]["function"]["name"]
    if name == "answer":
        asks_rude = "Is the output rude?" in body["messages"][1]["content"]
        return tool_reply("answer", {"reason": "r", "answer": rude if asks_rude else "no"})
    if name == "answer_checklist":
        return tool_reply(name, {"reason": "r", "invented": "no", "rude": rude})
    return tool_reply("set_grade_fail" if rude == "yes" else "set_grade_pass", {"reason": "r"})


@pytest.fixture
def served(endpoint: JudgeServer, write_file: Callable[..., Path]) -> JudgeServer:
    endpoint.responder = respond
    write_file("facts.md", FACTS)
    return endpoint


def run(path: Path, *flags: str) -> tuple[Any, list[dict[str, Any]]]:
    """`rubriclib eval` of `path` to a results file beside it: the CLI's result and the
    lines, without what differs between two runs (timings)."""
    out = path.with_suffix(".jsonl")
    result = CliRunner().invoke(main, ["eval", str(path), "--out", str(out), *flags])
    lines = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    for line in lines:
        line["result"]["details"]["judge"].pop("latency_ms")
    return result, sorted(lines, key=lambda line: str(line["row"]))  # as each result came


def eval_file(
    write_file: Callable[..., Path], name: str, judge: str = "", grader: str = ""
) -> Path:
    return write_file(name, EVAL % {"judge": judge, "grader": grader})


def same_requests(these: list[dict[str, Any]], those: list[dict[str, Any]]) -> bool:
    """Whether two runs sent the same request bodies (in whatever order they went)."""
    return sorted(map(json.dumps, these)) == sorted(map(json.dumps, those))


def asked_tools(server: JudgeServer) -> list[str]:
    return [body["tools"][0]["function"]["name"] for body in server.requests]


# Each place a judge's settings go, spelt the new way and the old: the same judge.
PLACES = [
    pytest.param(", mode: checklist, answers: one-call", "", "", id="eval judge"),
    pytest.param("", "    mode: checklist\n    answers: one-call\n", "", id="grader"),
    pytest.param("", "    judge: {mode: checklist, answers: one-call}\n", "", id="grader judge"),
]
OLD = {  # the old keys at each place, and the lines and fields their warnings name
    "eval judge": (
        ", checklist: true, checklist_answers: one-call",
        "",
        ["2: judge.checklist", "2: judge.checklist_answers"],
    ),
    "grader": (
        "",
        "    checklist: true\n    checklist_answers: one-call\n",
        ["9: graders[0].checklist", "10: graders[0].checklist_answers"],
    ),
    "grader judge": (
        "",
        "    judge: {checklist: true, checklist_answers: one-call}\n",
        ["9: graders[0].judge.checklist", "9: graders[0].judge.checklist_answers"],
    ),
}


@pytest.mark.parametrize(("judge", "grader", "unused"), PLACES)
def test_mode_and_answers_ask_for_the_checklist_and_the_old_keys_give_the_same_results(
    served: JudgeServer,
    write_file: Callable[..., Path],
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
    judge: str,
    grader: str,
    unused: str,
) -> None:
    place = request.node.callspec.id
    new_result, new_lines = run(eval_file(write_file, "new.yaml", judge, grader), "--no-cache")
    assert new_result.exit_code == 0, new_result.output  # no gate: the rude row's fail passes
    assert asked_tools(served) == ["answer_checklist"] * 2  # one call per row
    assert {line["row"]: line["verdict"] for line in new_lines} == {"calm": "pass", "loud": "fail"}
    assert all(line["result"]["details"]["judge"]["answers"] == "one-call" for line in new_lines)
    assert "deprecated" not in new_result.output and not caplog.records

    old_judge, old_grader, (mode_at, answers_at) = OLD[place]
    old = eval_file(write_file, "old.yaml", old_judge, old_grader)
    old_result, old_lines = run(old, "--no-cache")
    assert asked_tools(served) == ["answer_checklist"] * 4
    assert same_requests(served.requests[2:], served.requests[:2])
    assert old_lines == new_lines and old_result.exit_code == new_result.exit_code
    assert [record.getMessage() for record in caplog.records] == [
        f"{old}:{mode_at}: deprecated, use mode: checklist (checklist is read until rubriclib "
        "0.2.0)",
        f"{old}:{answers_at}: deprecated, use answers: one-call (checklist_answers is read "
        "until rubriclib 0.2.0)",
    ]


def test_the_command_line_prints_the_warning_with_the_file_and_line(
    write_file: Callable[..., Path],
) -> None:
    # a real process: the warning handler binds the stderr of the first command run in it
    write_file("facts.md", FACTS)
    old = eval_file(write_file, "old.yaml", ", checklist: true")
    result = subprocess.run([RUBRICLIB, "eval", str(old), "--dry-run"], capture_output=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr.decode() == (
        f"rubriclib: warning: {old}:2: judge.checklist: deprecated, use mode: checklist "
        "(checklist is read until rubriclib 0.2.0)\n"
    )


def test_a_panel_member_s_old_keys_give_the_same_judge_and_resume_keeps_its_results(
    served: JudgeServer, write_file: Callable[..., Path], caplog: pytest.LogCaptureFixture
) -> None:
    members = "    judges:\n      - {model: a, %s}\n      - {model: b}\n"
    new = eval_file(write_file, "new.yaml", grader=members % "mode: checklist, answers: tool")
    new_result, new_lines = run(new, "--no-cache")
    assert new_result.exit_code == 0, new_result.output
    assert sorted(asked_tools(served)) == ["answer"] * 4 + ["set_grade_pass"] * 2
    old = eval_file(write_file, "old.yaml", grader=members % "checklist: true")
    old_result, old_lines = run(old, "--no-cache")
    assert len(served.requests) == 12 and old_lines == new_lines
    assert new_lines[0]["result"]["details"]["judge"]["model"] == "panel:majority(a checklist, b)"
    assert [record.getMessage() for record in caplog.records] == [
        f"{old}:10: graders[0].judges[0].checklist: deprecated, use mode: checklist "
        "(checklist is read until rubriclib 0.2.0)"
    ]
    new.with_suffix(".jsonl").write_text(old.with_suffix(".jsonl").read_text())
    kept, _ = run(new, "--no-cache", "--resume")
    assert kept.exit_code == 0 and len(served.requests) == 12  # every line kept, none sent


def test_checklist_false_is_mode_holistic_over_the_eval_s_checklist_mode(
    served: JudgeServer, write_file: Callable[..., Path]
) -> None:
    new = eval_file(write_file, "new.yaml", ", mode: checklist", "    mode: holistic\n")
    old = eval_file(write_file, "old.yaml", ", checklist: true", "    checklist: false\n")
    assert run(new, "--no-cache")[1] == run(old, "--no-cache")[1]
    assert asked_tools(served) == ["set_grade_pass"] * 4  # the first tool a holistic one offers


@pytest.mark.parametrize(
    ("judge", "grader", "problem"),
    [
        (", mode: checklist, checklist: true", "", "2: judge.checklist: give mode or checklist"),
        (
            "",
            "    answers: one-call\n    checklist_answers: tool\n",
            "10: graders[0].checklist_answers: give answers or checklist_answers",
        ),
        (
            "",
            "    judges:\n      - {model: a}\n      - {model: b, mode: checklist, checklist: false}\n",
            "11: graders[0].judges[1].checklist: give mode or checklist",
        ),
        ("", "    checklist: maybe\n", "9: graders[0].checklist: must be true or false"),
    ],
)
def test_both_spellings_of_one_setting_are_refused_at_the_old_key(
    served: JudgeServer, write_file: Callable[..., Path], judge: str, grader: str, problem: str
) -> None:
    path = eval_file(write_file, "both.yaml", judge, grader)
    result, lines = run(path)
    assert result.exit_code == 2, result.output
    assert f"rubriclib: error: {path}:{problem}" in result.output
    assert "Traceback" not in result.output and lines == [] and served.requests == []


def test_a_problem_with_an_old_key_s_value_is_named_at_the_key_the_file_has(
    served: JudgeServer, write_file: Callable[..., Path], library: Path
) -> None:
    bad = eval_file(write_file, "bad.yaml", grader="    checklist_answers: one_call\n")
    result, _ = run(bad)
    assert result.exit_code == 2
    assert f"{bad}:9: graders[0].checklist_answers: 'one_call' is not allowed" in result.output
    no_checklist = eval_file(write_file, "kw.yaml", ", checklist: true").read_text()
    keywords = write_file("kw.yaml", no_checklist.replace("./facts.md", "keywords"))
    refused, _ = run(keywords)
    assert refused.exit_code == 2
    assert f"{keywords}:2: judge.checklist: the rubric keywords has no checklist" in refused.output
    assert served.requests == []


def test_the_command_line_flags_still_ask_for_the_checklist_over_an_eval_file(
    served: JudgeServer, write_file: Callable[..., Path]
) -> None:
    plain = eval_file(write_file, "plain.yaml")
    result, lines = run(plain, "--no-cache", "--checklist-answers", "one-call")
    assert result.exit_code == 0 and asked_tools(served) == ["answer_checklist"] * 2
    assert [line["verdict"] for line in lines] == ["pass", "fail"]
    again, _ = run(plain, "--no-cache", "--checklist", "--force")
    assert again.exit_code == 0 and asked_tools(served)[2:] == ["answer"] * 4

"""Agent runs from the command line: judge and render --transcript, eval files over datasets of
runs, goldens that are runs; broken runs refused before any request."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer

from rubriclib.cli import main

RUNS_RUBRIC = """\
---
name: runs
version: 1.0.0
scale: pass-fail
description: Test rubric judging agent runs; the scripted judge answers by keyword.
requires: [transcript]
goldens:
  - name: passes
    expected: pass
    why: its final answer carries the keyword
    transcript:
      - {role: user, content: go}
      - role: assistant
        content: null
        tool_calls: [{id: c1, type: function, function: {name: act, arguments: '{"n": 1}'}}]
      - {role: tool, tool_call_id: c1, content: done}
      - {role: assistant, content: "verdict:pass"}
---
Judge the run. Call `set_grade_pass` or `set_grade_fail`.
"""
RUN = [
    {"role": "user", "content": "cancel order 5"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "cancel", "arguments": '{"order": 5}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "cancelled"},
    {"role": "assistant", "content": "verdict:pass Order 5 is cancelled."},
]


@pytest.fixture
def runs_library(library: Path) -> Path:
    (library / "runs.md").write_text(RUNS_RUBRIC)
    return library


def test_judge_takes_a_run_from_a_file_or_stdin(
    runs_library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    path = write_file("run.json", json.dumps(RUN, indent=2))
    from_file = CliRunner().invoke(main, ["judge", "runs", "--transcript", str(path)])
    from_stdin = CliRunner().invoke(
        main, ["judge", "runs", "--transcript", "-", "--no-cache"], input=json.dumps(RUN)
    )
    assert (from_file.exit_code, from_stdin.exit_code) == (0, 0), from_file.output
    user = endpoint.requests[0]["messages"][1]["content"]
    assert '[M2] assistant\ntool call cancel (c1): {"order": 5}' in user
    assert "[M3] tool result for cancel (c1, answers the call in M2)\ncancelled" in user
    assert endpoint.requests[0]["messages"] == endpoint.requests[1]["messages"]


def test_judge_needs_an_output_or_a_run(runs_library: Path, endpoint: JudgeServer) -> None:
    result = CliRunner().invoke(main, ["judge", "runs"])
    assert (
        result.exit_code == 2 and "Missing option '--output' (or '--transcript')" in result.output
    )
    assert endpoint.requests == []


def test_a_broken_run_file_is_refused_with_file_line_and_message(
    runs_library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    broken = [
        RUN[0],
        {"role": "tool", "tool_call_id": "c9", "content": "x"},
        {"role": "robot", "content": ""},
    ]
    path = write_file("broken.json", json.dumps(broken, indent=2))
    for command in ("judge", "render"):
        result = CliRunner().invoke(main, [command, "runs", "--transcript", str(path)])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert result.stderr.splitlines() == [
            f"rubriclib: error: {path}:11: transcript[2].role: unknown role 'robot'; roles here "
            "are system, developer, user, assistant, tool",
            f"rubriclib: error: {path}:6: transcript[1]: answers call 'c9', which is not earlier "
            "in the run",
        ]
    not_json = write_file("not.json", "[{\n")
    result = CliRunner().invoke(main, ["render", "runs", "--transcript", str(not_json)])
    assert result.exit_code == 2 and f"{not_json}:2: --transcript: invalid JSON" in result.stderr
    assert endpoint.requests == []


def eval_over(write_file: Callable[..., Path], rows: list[dict]) -> Path:
    write_file("runs.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    return write_file(
        "eval.yaml", "name: agents\ndataset: runs.jsonl\ngraders: [{name: run, rubric: runs}]\n"
    )


def test_an_eval_judges_runs_and_names_rows_without_one(
    runs_library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    path = eval_over(
        write_file,
        [
            {"id": "a", "transcript": RUN},
            {"id": "b", "messages": RUN[:3] + [{"role": "assistant", "content": "verdict:fail"}]},
            {"id": "c", "output": "no run here"},
        ],
    )
    plan = CliRunner().invoke(main, ["eval", str(path), "--dry-run"])
    assert plan.exit_code == 0 and "runs.jsonl:3: run needs transcript" in plan.output
    out = tmp_path / "results.jsonl"
    result = CliRunner().invoke(main, ["eval", str(path), "--out", str(out)])
    lines = {line["row"]: line["result"] for line in map(json.loads, out.read_text().splitlines())}
    assert {row: r["verdict"] for row, r in lines.items()} == {
        "a": "pass",
        "b": "fail",
        "c": "error",
    }
    assert lines["a"]["details"]["transcript"]["messages"] == 4
    assert len(endpoint.requests) == 2 and result.exit_code == 3


def test_a_broken_run_in_a_dataset_stops_the_eval_before_any_request(
    runs_library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    bad = RUN[:1] + [{"role": "tool", "tool_call_id": "zz", "content": "x"}]
    path = eval_over(write_file, [{"id": "a", "transcript": RUN}, {"id": "b", "transcript": bad}])
    result = CliRunner().invoke(main, ["eval", str(path)])
    assert result.exit_code == 2 and endpoint.requests == []
    assert "runs.jsonl:2: transcript[1]: answers call 'zz', which is not earlier in the run" in (
        result.stderr
    )


def test_goldens_that_are_runs_are_judged_as_runs(
    runs_library: Path, endpoint: JudgeServer
) -> None:
    result = CliRunner().invoke(main, ["test-goldens", "runs"])
    assert result.exit_code == 0, result.output
    user = endpoint.requests[0]["messages"][1]["content"]
    assert 'tool call act (c1): {"n": 1}' in user and "block M4, the run's last block" in user


def test_a_missed_golden_run_shows_its_blocks_to_the_ci_reader(
    runs_library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    from xml.etree import ElementTree

    extra = write_file(
        "extra.yaml",
        "- name: missed\n  expected: fail\n  why: the judge is scripted to pass it\n"
        f"  transcript: {json.dumps(RUN)}\n",
    )
    result = CliRunner().invoke(
        main, ["test-goldens", "runs", "--goldens", str(extra), "--format", "junit"]
    )
    assert result.exit_code == 1
    [missed] = [
        case
        for case in ElementTree.fromstring(result.output).iter("testcase")
        if "missed" in case.get("name", "")
    ]
    shown = missed.findtext("system-out") or ""
    assert "--- agent run ---\n```\n[M1] user\ncancel order 5\n\n[M2] assistant\n" in shown
    assert "--- output ---\nverdict:pass Order 5 is cancelled." in shown


def test_the_docs_agent_run_examples_are_what_happens(
    endpoint: JudgeServer, write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import snippet

    from rubriclib.item.transcript import read_transcript
    from rubriclib.judging.prompt.agent_run import run_blocks

    sample = (Path(__file__).parents[1] / "data/runs/openai_chat.json").read_text()
    blocks = run_blocks(read_transcript(json.loads(sample)), 10**6)[0]
    assert f"{blocks}\n" == snippet("agent-run-blocks")

    write_file("examples/agent-run/run.json", sample)  # as the page reads it
    run = write_file("run.json", sample)
    monkeypatch.chdir(run.parent)
    exec(snippet("agent-run"), {})  # noqa: S102 - the docs' own example, run as written
    assert "[M9] assistant\nDone: $12.50" in endpoint.requests[-1]["messages"][1]["content"]
    assert "order A-17 refunded" in endpoint.requests[-1]["messages"][1]["content"]

    call = {"id": "c", "function": {"name": "f", "arguments": "x"}}
    rows = [
        {"transcript": RUN},
        {"transcript": [RUN[0], {"role": "tool", "tool_call_id": "zz", "content": "x"}]},
        {"transcript": [RUN[0], {"role": "assistant", "tool_calls": [call]}]},
        {"transcript": [RUN[0], RUN[3], {"role": "robot", "content": "x"}]},
    ]
    write_file("runs.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    write_file(
        "agents.yaml", "name: a\ndataset: runs.jsonl\ngraders: [{name: g, rubric: helpfulness}]\n"
    )
    requests = len(endpoint.requests)
    command, *expected = snippet("agent-run-broken").splitlines()
    result = CliRunner().invoke(main, command.split()[2:])
    assert result.exit_code == 2 and len(endpoint.requests) == requests
    assert [line.replace(f"{run.parent}/", "") for line in result.stderr.splitlines()] == expected


def test_a_tool_result_paired_in_doubt_is_a_warning_and_the_dry_run_lists_its_row(
    runs_library: Path,
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    caplog: pytest.LogCaptureFixture,
) -> None:
    named_wrong = [*RUN[:2], {**RUN[2], "name": "refund"}, *RUN[3:]]
    rows = [{"id": "a", "transcript": RUN}, {"id": "b", "messages": named_wrong}]
    path = eval_over(write_file, rows)
    with caplog.at_level("WARNING", logger="rubriclib"):
        plan = CliRunner().invoke(main, ["eval", str(path), "--dry-run"])
    assert plan.exit_code == 0, plan.output
    doubt = "names tool 'refund', but call 'c1' it answers (in messages[1]) is to 'cancel'"
    where = f"{path.parent / 'runs.jsonl'}:2: messages[2]"
    assert [record.getMessage() for record in caplog.records] == [f"{where}: {doubt}"]
    assert (
        f"1 tool result(s) paired with a call in doubt (judged as shown: the call named):\n  {where}: {doubt}\n"
        in plan.output
    )
    assert endpoint.requests == []


def test_a_lone_surrogate_in_a_run_is_refused_before_any_request(
    runs_library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    text = json.dumps(RUN, indent=2).replace('"cancelled"', '"cancel\\ud800led"')
    assert "\\ud800" in text  # the file holds the escape, as JSON writers write it
    path = write_file("surrogate.json", text)
    expected = (
        f"rubriclib: error: {path}:20: transcript[2]: holds a lone surrogate '\\ud800' (in its "
        "text), which is not text: no UTF-8 can carry it to a judge"
    )
    for command in (["judge", "runs"], ["render", "runs"]):
        result = CliRunner().invoke(main, [*command, "--transcript", str(path)])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert result.stderr.splitlines() == [expected]
    row = (
        '{"id": "a", "transcript": ' + json.dumps(RUN).replace('"cancelled"', '"x\\udfffy"') + "}\n"
    )
    write_file("runs.jsonl", row)
    eval_file = write_file(
        "eval.yaml", "name: agents\ndataset: runs.jsonl\ngraders: [{name: run, rubric: runs}]\n"
    )
    for extra in ([], ["--dry-run", "--show-prompts"]):
        result = CliRunner().invoke(main, ["eval", str(eval_file), *extra])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert "runs.jsonl:1: transcript[2]: holds a lone surrogate '\\udfff'" in result.stderr
    assert endpoint.requests == []

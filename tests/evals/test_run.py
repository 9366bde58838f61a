"""Eval files in three shapes, judged over datasets: results file, resume, gate, exit codes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, VALID_RUBRIC, judged, keyword_responder
from judge_server import JudgeServer, Reply, completion

import rubriclib
from rubriclib.cli import main
from rubriclib.errors import EvalError
from rubriclib.evals.formats import Condition, load_eval
from rubriclib.evals.run import EvalReport, GraderStats

ROWS = [
    {"id": "r1", "input": "q1", "context": "c1", "output": "verdict:pass 1", "team": "a"},
    {"id": "r2", "input": "q2", "context": ["c2", "c2b"], "output": "verdict:fail 2"},
    {"id": "r3", "input": "q3", "output": "verdict:pass 3"},
    {"id": "r4", "input": "q4", "context": "c4", "response": "verdict:pass 4"},
]

OURS = """\
name: support
description: Test eval.
dataset: rows.jsonl
judge:
  model: judge-a
  concurrency: 2
graders:
  - name: grounded
    rubric: groundedness@^1
  - name: helpful
    rubric: helpfulness
    judge: {model: judge-b}
gate:
  grounded: {min_pass_rate: 0.5}
  helpful: {min_mean_score: 0.5}
"""


@pytest.fixture
def support(write_file: Callable[..., Path]) -> Path:
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    return write_file("eval.yaml", OURS)


def run(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["eval", *arguments])


def results_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_our_shape_loads_graders_judges_and_gate(support: Path) -> None:
    ev = load_eval(support)
    assert (ev.name, ev.shape, ev.concurrency) == ("support", "rubriclib", 2)
    assert [(g.name, g.rubric.name, g.judge.model) for g in ev.graders] == [
        ("grounded", "groundedness", "judge-a"),
        ("helpful", "helpfulness", "judge-b"),
    ]
    assert ev.gate == [
        Condition("grounded", "pass_rate", ">=", 0.5),
        Condition("helpful", "mean_score", ">=", 0.5),
    ]
    assert ev.dataset.path == support.parent / "rows.jsonl"


def test_a_run_writes_one_line_per_row_and_grader(
    support: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    result = run(str(support), "--out", str(out), "--no-cache")
    # grounded passes 2 of 4 (r3 has no context: an error); 0.5 holds however r3 would go
    assert result.exit_code == 0, result.output
    lines = results_of(out)
    assert sorted((line["row"], line["grader"]) for line in lines) == sorted(
        (row["id"], grader) for row in ROWS for grader in ("grounded", "helpful")
    )
    by_key = {(line["row"], line["grader"]): line for line in lines}
    missing = by_key[("r3", "grounded")]
    assert missing["verdict"] == "error"
    assert missing["result"]["reason"] == "not judged: row r3 has no context"
    assert by_key[("r1", "grounded")]["metadata"] == {"team": "a"}
    identity = by_key[("r1", "grounded")]["result"]["details"]["rubric"]
    assert identity["name"] == "groundedness" and identity["version"] == "1.4.0"
    assert len(endpoint.requests) == 7  # 8 judgments, one refused for its missing context
    models = sorted({request["model"] for request in endpoint.requests})
    assert models == ["judge-a", "judge-b"]
    assert (
        "[2] c2b"
        in next(r for r in endpoint.requests if "c2b" in json.dumps(r))["messages"][1]["content"]
    )
    assert "grounded pass_rate >= 0.5: 0.500" in result.output


@pytest.mark.parametrize(
    ("gate", "code", "status"),
    [
        ("helpful: {min_pass_rate: 0.7}", 0, "passed"),
        ("helpful: {min_pass_rate: 0.8}", 1, "failed"),
        ("grounded: {min_pass_rate: 0.6}", 3, "undecided"),
        ("grounded: {min_pass_rate: 0.8}", 1, "failed"),
    ],
)
def test_the_gate_decides_the_exit_code(
    support: Path, endpoint: JudgeServer, gate: str, code: int, status: str
) -> None:
    text = support.read_text().split("gate:")[0] + f"gate:\n  {gate}\n"
    support.write_text(text)
    result = run(str(support), "--format", "json", "--no-cache")
    assert result.exit_code == code, result.output
    report = json.loads(result.output)
    assert report["status"] == status
    graders = {g["name"]: g for g in report["graders"]}
    assert graders["helpful"]["pass"] == 3 and graders["helpful"]["fail"] == 1
    assert graders["grounded"]["error"] == 1


def test_resume_keeps_matching_results_and_rejudges_a_changed_rubric(
    support: Path, endpoint: JudgeServer, tmp_path: Path, write_file: Callable[..., Path]
) -> None:
    out = tmp_path / "results.jsonl"
    run(str(support), "--out", str(out), "--no-cache")
    sent = len(endpoint.requests)
    again = run(str(support), "--out", str(out), "--resume", "--no-cache")
    # r3 has no context for grounded: an error, never kept, recomputed with no request
    assert len(endpoint.requests) == sent and "7 result(s) kept" in again.output
    assert len(results_of(out)) == 9  # nothing kept is written twice; r3's error again
    style = write_file("style.md", VALID_RUBRIC)
    support.write_text(support.read_text().replace("rubric: helpfulness", f"rubric: {style}"))
    run(str(support), "--out", str(out), "--resume", "--no-cache")
    assert len(endpoint.requests) == sent + 4  # only the changed grader, every row
    lines = results_of(out)
    assert len(lines) == 9 + 5  # every earlier line stays; the current one is the last
    current = {(line["row"], line["grader"]): line for line in lines}
    assert len(current) == 8
    assert {
        line["result"]["details"]["rubric"]["source"]
        for line in current.values()
        if line["grader"] == "helpful"
    } == {f"file:{style}"}


def test_a_cut_short_results_file_resumes_cleanly(
    support: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    run(str(support), "--out", str(out), "--no-cache")
    text = out.read_text()
    cut = text[: len(text) - 40]  # a kill in the middle of the last line
    out.write_text(cut)
    sent = len(endpoint.requests)
    run(str(support), "--out", str(out), "--resume", "--no-cache")
    cut_pair_was_r3_grounded = cut.rsplit("\n", 1)[1].startswith('{"row": "r3", "grader": "gr')
    assert len(endpoint.requests) == sent + (not cut_pair_was_r3_grounded)  # r3's needs none
    after = out.read_text()
    assert after.startswith(cut + "\n")  # the cut line kept, ended; the next starts on its own
    lines = after.splitlines()
    pairs = {(line["row"], line["grader"]) for line in map(json.loads, lines[:7] + lines[8:])}
    assert pairs == {(row["id"], grader) for row in ROWS for grader in ("grounded", "helpful")}
    page = tmp_path / "page.html"
    report = CliRunner().invoke(main, ["report", str(out), "-o", str(page)])
    assert report.exit_code == 0, report.output  # the cut line mid-file is a note, not an error


def test_resume_needs_out(support: Path, endpoint: JudgeServer) -> None:
    result = run(str(support), "--resume")
    assert result.exit_code == 2 and "--resume needs --out" in result.stderr


def test_dry_run_needs_no_key_and_sends_nothing(support: Path, judge_server: JudgeServer) -> None:
    result = run(str(support), "--dry-run", "--show-prompts")
    assert result.exit_code == 0, result.stderr
    assert "4 row(s) x 2 grader(s) = 7 judgment(s), about " in result.output
    assert "rows.jsonl:3: grounded needs context" in result.output
    assert "--- the first row, as grader grounded sees it ---" in result.output
    assert judge_server.requests == []


BAD_EVAL = """\
name: bad
dataset: rows.jsonl
rows: []
graders:
  - name: one
    rubric: groundednes
  - name: one
    rubric: helpfulness
{judge}gate:
  nobody: {{min_pass_rate: {rate}}}
"""


def test_bad_eval_files_report_every_problem_with_its_line(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = write_file("bad.yaml", BAD_EVAL.format(judge="    judge: {modle: x}\n", rate=2))
    result = run(str(path))
    assert result.exit_code == 2 and endpoint.requests == []
    lines = result.stderr.splitlines()
    assert (
        f"rubriclib: error: {path}:9: graders[1].judge.modle: unknown key; did you mean 'model'?"
        in lines
    )
    assert any(
        f"{path}:11: gate.nobody.min_pass_rate: input should be less than or equal to 1" in line
        for line in lines
    )
    assert "Traceback" not in result.stderr


def test_semantic_problems_are_reported_together(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = write_file("bad.yaml", BAD_EVAL.format(judge="", rate=0.5))
    with pytest.raises(EvalError) as caught:
        load_eval(path)
    text = [str(problem) for problem in caught.value.problems]
    assert any(
        f"{path}:6: graders[0].rubric:" in line and "no rubric named 'groundednes'" in line
        for line in text
    )
    assert f"{path}:7: graders[1].name: duplicate 'one'" in text
    assert f"{path}:10: gate.nobody: names no grader of this eval" in text
    assert f"{path}:2: dataset: give dataset or rows, not both" in text


def test_a_bad_dataset_row_stops_the_run_before_any_request(
    support: Path, endpoint: JudgeServer
) -> None:
    rows = support.parent / "rows.jsonl"
    rows.write_text(rows.read_text() + '{"input": "no output"}\n')
    result = run(str(support))
    assert result.exit_code == 2 and endpoint.requests == []
    assert f"rubriclib: error: {rows}:5: output: is required" in result.stderr


def test_the_python_api_gives_the_numbers_the_cli_prints(
    support: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    report = rubriclib.run_eval(rubriclib.load_eval(support), out=tmp_path / "r.jsonl")
    assert report.status == "passed" and report.rows == 4
    helpful = next(s for s in report.graders if s.grader.name == "helpful")
    assert (helpful.passed, helpful.failed, helpful.errors, helpful.pass_rate) == (3, 1, 0, 0.75)
    assert report.most_failed_rows == [("r2", 2)]


def test_run_eval_works_from_code_already_running_an_event_loop(
    support: Path, endpoint: JudgeServer
) -> None:
    """A notebook runs an event loop: `run_eval` there runs its own in a worker thread."""

    async def notebook_cell() -> rubriclib.EvalReport:
        return rubriclib.run_eval(rubriclib.load_eval(support))

    outside = rubriclib.run_eval(rubriclib.load_eval(support))
    sent = endpoint.request_count
    report = asyncio.run(notebook_cell())
    helpful = next(s for s in report.graders if s.grader.name == "helpful")
    assert report.status == "passed" and (helpful.passed, helpful.failed) == (3, 1)
    assert report.most_failed_rows == outside.most_failed_rows == [("r2", 2)]
    assert endpoint.request_count == 2 * sent


def test_arun_eval_takes_what_run_eval_takes_in_the_callers_loop(
    support: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    """The async form is public: it takes an Eval and run_eval's arguments (it took an internal
    ReadyRun nothing public could make), and runs in the caller's event loop."""
    out = tmp_path / "results.jsonl"

    async def notebook_cell() -> rubriclib.EvalReport:
        return await rubriclib.arun_eval(rubriclib.load_eval(support), out=out, limit=2)

    report = asyncio.run(notebook_cell())
    assert report.status == "passed" and report.rows == 2
    assert len(out.read_text().splitlines()) == 2 * len(report.graders)
    with pytest.raises(rubriclib.EvalError, match="already holds results"):
        asyncio.run(rubriclib.arun_eval(rubriclib.load_eval(support), out=out))


def test_junit_has_a_case_per_row_and_grader(
    support: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    report_path = tmp_path / "eval.xml"
    result = run(str(support), "--format", "junit", "--report", str(report_path), "--no-cache")
    assert result.exit_code == 0 and f"(report: {report_path})" in result.output
    root = ElementTree.parse(report_path).getroot()
    cases = list(root.iter("testcase"))
    assert len(cases) == 8 and root.get("tests") == "8" and root.get("failures") == "2"
    assert {case.get("classname") for case in cases} == {"grounded", "helpful"}


def test_junit_lists_the_cases_in_reading_order_whatever_order_they_finished_in(
    support: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    answer = keyword_responder()

    def first_row_last(body: dict[str, Any]) -> Reply:
        reply = answer(body)
        first = "verdict:pass 1" in body["messages"][1]["content"]
        return Reply(body=reply.body, delay=0.5) if first else reply

    endpoint.responder = first_row_last
    report_path, out = tmp_path / "eval.xml", tmp_path / "results.jsonl"
    arguments = ["--format", "junit", "--report", str(report_path), "--out", str(out)]
    assert run(str(support), *arguments, "--concurrency", "8", "--no-cache").exit_code == 0
    finished = [(line["grader"], line["row"]) for line in results_of(out)]
    assert {row for _, row in finished[-2:]} == {"r1"}  # the first row's results came last
    listed = [
        (case.get("classname"), case.get("name"))
        for case in ElementTree.parse(report_path).getroot().iter("testcase")
    ]
    rows = [f"row r{n}" for n in range(1, 5)]
    assert listed == [("grounded", row) for row in rows] + [("helpful", row) for row in rows]


def test_limit_judges_only_the_first_rows(support: Path, endpoint: JudgeServer) -> None:
    result = run(str(support), "--limit", "1", "--format", "json", "--no-cache")
    assert json.loads(result.output)["run"]["rows"] == 1 and len(endpoint.requests) == 2


def test_an_interrupted_eval_keeps_a_valid_results_file(
    support: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    endpoint.responder = keyword_responder(delay=0.3)
    rows = support.parent / "rows.jsonl"
    many = [
        {"id": f"x{n}", "input": "q", "context": "c", "output": f"verdict:pass {n}"}
        for n in range(30)
    ]
    rows.write_text("".join(json.dumps(row) + "\n" for row in many))
    out = tmp_path / "results.jsonl"
    env = {**os.environ}
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "rubriclib"),
            "eval",
            str(support),
            "--out",
            str(out),
            "--concurrency",
            "1",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while len(endpoint.requests) < 4:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "INTERRUPTED (SIGINT)" in stdout and "Traceback" not in stderr
    lines = results_of(out)
    keys = {(line["row"], line["grader"]) for line in lines}
    assert 3 <= len(lines) < 60 and len(keys) == len(lines)


def answering(body: dict[str, Any]) -> Reply:
    """A target when no tools are offered (it echoes the input), else a judge that passes all."""
    if "tools" not in body:
        question = body["messages"][-1]["content"]
        return Reply(body=completion(content=f"verdict:pass answer to {question}"))
    return keyword_responder()(body)


TARGETED = """\
name: targeted
rows:
  - {id: t1, input: "q1", context: "c"}
  - {id: t2, input: "q2", context: "c"}
target: {model: writer, system: "Answer briefly.", max_tokens: 64}
graders:
  - {name: grounded, rubric: groundedness}
  - {name: helpful, rubric: helpfulness}
"""


def test_a_target_writes_each_rows_output_once(
    write_file: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    endpoint.responder = answering
    path = write_file("targeted.yaml", TARGETED)
    out = tmp_path / "results.jsonl"
    result = run(str(path), "--out", str(out), "--no-cache")
    assert result.exit_code == 0, result.output
    writes = [r for r in endpoint.requests if "tools" not in r]
    assert len(writes) == 2  # one per row, not one per grader
    assert writes[0]["model"] == "writer" and writes[0]["max_tokens"] == 64
    assert writes[0]["messages"][0] == {"role": "system", "content": "Answer briefly."}
    lines = results_of(out)
    assert len(lines) == 4
    assert {line["output"] for line in lines} == {
        "verdict:pass answer to q1",
        "verdict:pass answer to q2",
    }
    judged = [r for r in endpoint.requests if "tools" in r]
    assert all("verdict:pass answer to" in r["messages"][1]["content"] for r in judged)
    sent = len(endpoint.requests)
    run(str(path), "--out", str(out), "--resume", "--no-cache")
    assert len(endpoint.requests) == sent  # the stored outputs and verdicts are reused


def test_a_target_failure_makes_the_rows_judgments_errors(
    write_file: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    from judge_server import error_reply

    def broken_target(body: dict[str, Any]) -> Reply:
        if "tools" not in body:
            return error_reply(400, f"bad model, key {SECRET_KEY}")
        return keyword_responder()(body)

    endpoint.responder = broken_target
    path = write_file("targeted.yaml", TARGETED)
    out = tmp_path / "results.jsonl"
    result = run(str(path), "--out", str(out), "--no-cache")
    assert result.exit_code == 3
    lines = results_of(out)
    assert {line["verdict"] for line in lines} == {"error"}
    assert all(
        line["result"]["reason"].startswith("not judged: no output: HTTP 400") for line in lines
    )
    assert SECRET_KEY not in out.read_text() and SECRET_KEY not in result.output


def test_a_target_takes_its_key_from_the_variable_named(
    write_file: Callable[..., Path], judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_server.responder = answering
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("WRITER_KEY", "sk-writer-key-000")
    text = TARGETED.replace(
        "max_tokens: 64}",
        f"max_tokens: 64, api_key_env: WRITER_KEY, base_url: '{judge_server.url}'}}",
    )
    text += f"judge: {{base_url: '{judge_server.url}'}}\n"
    result = run(str(write_file("targeted.yaml", text)), "--no-cache")
    assert result.exit_code == 0, result.output
    keys = {headers["authorization"] for headers in judge_server.headers}
    assert keys == {f"Bearer {SECRET_KEY}", "Bearer sk-writer-key-000"}


def always_pass(body: dict[str, Any]) -> Reply:
    """A judge that gives the best verdict through whichever tool it is offered."""
    from judge_server import tool_reply

    name = body["tools"][0]["function"]["name"]
    arguments: dict[str, Any] = {"reason": "fine"}
    if name == "set_grade_score":
        arguments["score"] = 5
    if name == "set_grade":
        arguments["verdict"] = "pass"
    return tool_reply(name, arguments)


EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize(
    ("arguments", "results"),
    [
        (["support/eval.yaml"], 60),
        (["waza/eval.yaml", "--dataset", "waza/outputs.jsonl"], 16),
        (["letta/suite.yaml"], 14),
        (["agent-run/eval.yaml"], 9),
    ],
)
def test_every_example_runs(
    endpoint: JudgeServer, tmp_path: Path, arguments: list[str], results: int
) -> None:
    endpoint.responder = always_pass
    paths = [str(EXAMPLES / a) if a.endswith((".yaml", ".jsonl")) else a for a in arguments]
    dry = run(*paths, "--dry-run")
    assert dry.exit_code == 0 and endpoint.requests == []
    out = tmp_path / "results.jsonl"
    result = run(*paths, "--out", str(out), "--no-cache")
    assert result.exit_code == 0, result.output
    assert len(results_of(out)) == results


def many_rows(support: Path, count: int) -> None:
    """Replace the support eval's rows with `count` rows that pass."""
    rows = [
        {"id": f"x{n}", "input": "q", "context": "c", "output": f"verdict:pass {n}"}
        for n in range(count)
    ]
    (support.parent / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def start_eval(*arguments: str) -> subprocess.Popen[str]:
    """`rubriclib eval ...` as a real process (signals reach it as they reach a user's)."""
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "rubriclib"), "eval", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("gap", [0.0, 0.01, 0.05, 0.2])
def test_signals_close_together_write_the_report_once(
    support: Path,
    endpoint: JudgeServer,
    tmp_path: Path,
    sent: signal.Signals,
    code: int,
    gap: float,
) -> None:
    endpoint.responder = keyword_responder(delay=0.05)
    many_rows(support, 200)
    report = tmp_path / "eval.xml"
    arguments = ["--format", "junit", "--report", str(report), "--concurrency", "2"]
    process = start_eval(str(support), "--out", str(tmp_path / "r.jsonl"), *arguments)
    deadline = time.monotonic() + 30
    while len(endpoint.requests) < 6:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(sent)
    time.sleep(gap)
    process.send_signal(sent)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == code, (stdout, stderr)
    assert "Aborted!" not in stderr and "Traceback" not in stderr
    assert stdout.count(f"INTERRUPTED ({sent.name})") == 1
    assert ElementTree.parse(report).getroot().get("tests") is not None


def test_signals_that_keep_coming_never_cut_the_report_short(
    support: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    many_rows(support, 400)
    report = tmp_path / "eval.json"
    arguments = ["--format", "json", "--report", str(report), "--concurrency", "4"]
    process = start_eval(str(support), *arguments)
    deadline = time.monotonic() + 30
    while len(endpoint.requests) < 20:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    sent = 0
    while process.poll() is None:  # through the stop, the report's writing and the exit
        process.send_signal(signal.SIGINT if sent % 2 else signal.SIGTERM)
        sent += 1
        time.sleep(0.001)
    stdout, stderr = process.communicate(timeout=30)
    # The first signal the process took stops the run and decides both the exit code and the
    # report (SIGTERM, sent first, unless Python dropped it in the flood: "Signal 15 ignored
    # due to race condition" under load); the ones after it change nothing.
    interrupted = json.loads(report.read_text())["run"]["interrupted"]
    assert {"SIGTERM": 143, "SIGINT": 130}[interrupted] == process.returncode, (stdout, stderr)
    assert sent > 5 and "Aborted!" not in stderr and "Traceback" not in stderr


def test_ctrl_c_before_the_run_exits_130_not_the_gates_1(
    support: Path, endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*arguments: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("rubriclib.evals.formats.load_eval", interrupted)
    result = run(str(support))
    assert result.exit_code == 130 and "Aborted!" not in result.output
    assert result.stderr == "rubriclib: interrupted by SIGINT\n"


def test_every_problem_of_file_rubrics_and_dataset_comes_in_one_exit_2(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    write_file("rows.jsonl", '{"output": "ok"}\n{"id": 2}\n')
    path = write_file(
        "eval.yaml",
        """name: staged
bogus: 1
dataset: rows.jsonl
graders:
  - name: a
    rubric: no-such-rubric
  - name: b
    rubric: groundedness
    votes: many
gate:
  nobody: {min_pass_rate: 0.5}
""",
    )
    result = run(str(path))
    assert result.exit_code == 2 and endpoint.requests == []
    lines = [line.removeprefix("rubriclib: error: ") for line in result.stderr.splitlines()]
    assert lines[0].startswith(f"{path}:2: bogus: unknown key")
    assert lines[1].startswith(f"{path}:6: graders[0].rubric: ") and "no-such-rubric" in lines[1]
    assert lines[2].startswith(f"{path}:9: graders[1].votes: ")
    assert lines[3] == f"{path}:11: gate.nobody: names no grader of this eval"
    assert lines[4].startswith(f"{path.parent / 'rows.jsonl'}:2: output: is required")
    assert len(lines) == 5


@pytest.mark.parametrize("text", ["", "\n\n"])
@pytest.mark.parametrize("arguments", [[], ["--dry-run"], ["--format", "json"]])
def test_an_empty_dataset_is_bad_input_not_a_pass(
    support: Path, endpoint: JudgeServer, text: str, arguments: list[str]
) -> None:
    rows = support.parent / "rows.jsonl"
    rows.write_text(text)
    result = run(str(support), *arguments)
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr == f"rubriclib: error: {rows}: dataset: no rows, nothing to judge\n"
    with pytest.raises(EvalError, match="no rows, nothing to judge"):
        rubriclib.run_eval(load_eval(support))
    assert endpoint.requests == []


def test_an_empty_rows_list_is_bad_input(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = write_file("eval.yaml", "name: e\nrows: []\ngraders: [{name: g, rubric: helpfulness}]\n")
    result = run(str(path))
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr == f"rubriclib: error: {path}: rows: no rows, nothing to judge\n"


def test_rows_no_grader_judges_are_bad_input(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    write_file("tasks/billing.yaml", "id: billing\ninputs: {prompt: q}\n" + WAZA_TASK_GRADER)
    rows = write_file("outputs.jsonl", '{"id": "w1", "task": "other", "output": "verdict:pass"}\n')
    path = write_file("eval.yaml", "name: w\nskill: s\ntasks: ['tasks/*.yaml']\ngraders: []\n")
    result = run(str(path), "--dataset", str(rows))
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr == (
        f"rubriclib: error: {rows}: dataset: 1 row(s), none for any grader's task, "
        "nothing to judge\n"
    )


WAZA_TASK_GRADER = "graders:\n  - {name: helps, type: prompt, config: {rubric: helpfulness}}\n"


def huge_row(support: Path, characters: int) -> None:
    """Make row r1's output `characters` long (r2-r4 stay small)."""
    rows = [dict(row) for row in ROWS]
    rows[0]["output"] = "verdict:pass " + "x" * characters
    (support.parent / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_the_dry_run_cuts_a_huge_field_and_says_its_size(
    support: Path, judge_server: JudgeServer
) -> None:
    huge_row(support, 10_000_000)
    result = run(str(support), "--dry-run", "--show-prompts")
    assert result.exit_code == 0, result.stderr
    assert len(result.output) < 40_000
    assert "[cut: 10,000,013 characters, about 2,500,003 tokens]" in result.output
    assert "rows.jsonl:1: grounded: prompt too large: about 2,500," in result.output
    assert judge_server.requests == []


def test_a_prompt_over_the_limit_is_an_error_with_no_request(
    support: Path, endpoint: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge_row(support, 600_000)  # about 150,000 tokens: over the default 128,000
    out = tmp_path / "results.jsonl"
    result = run(str(support), "--out", str(out), "--no-cache")
    assert result.exit_code == 3, result.output
    by_key = {(line["row"], line["grader"]): line for line in results_of(out)}
    reason = by_key[("r1", "helpful")]["result"]["reason"]
    assert re.fullmatch(r"not judged: prompt too large: about 150,\d+ tokens > 128,000", reason)
    assert not any("xxxxxxxx" in json.dumps(request) for request in endpoint.requests)
    assert len(endpoint.requests) == 5  # r1's two judgments and r3's grounded are not sent
    monkeypatch.setenv("RUBRICLIB_MAX_PROMPT_TOKENS", "200000")
    assert run(str(support), "--no-cache").exit_code == 0
    support.write_text(
        support.read_text().replace("  concurrency: 2\n", "  max_prompt_tokens: 50\n")
    )
    dry = run(str(support), "--dry-run")
    assert (
        "\n7 judgment(s) with a prompt over 50 tokens (judged as errors, no request" in dry.output
    )


def test_the_dry_run_ends_on_the_plan(support: Path, judge_server: JudgeServer) -> None:
    result = run(str(support), "--dry-run")
    lines = result.output.splitlines()
    assert len(lines) < 15 and "=== system ===" not in result.output
    assert lines[-1].startswith("plan: 4 row(s) x 2 grader(s) = 7 judgment(s), about ")
    assert lines[-1].endswith(
        "prompt tokens (estimated: 4 characters a token); 1 row(s) with problems"
    )


def test_the_readme_says_how_to_get_the_command_before_using_it() -> None:
    from conftest import README

    text = README.read_text(encoding="utf-8")
    first_use = text.index("$ rubriclib ")
    told = text.find("source .venv/bin/activate")
    assert 0 < told < first_use and text.find(".venv/bin/rubriclib") < first_use


def test_the_rows_that_failed_most_are_listed_alike_in_whatever_order_results_come(
    support: Path,
) -> None:
    """Ties in reading order, so a run whose results come in another order (another
    concurrency, another engine) prints the same report."""
    ev = load_eval(support)

    def most_failed(adds: list[tuple[int, str, str]]) -> list[tuple[str, int]]:
        report = EvalReport(ev, [GraderStats(g, "m") for g in ev.graders])
        for number, row, grader in adds:
            report.add(number, row, grader, judged(ev.graders[0].rubric, "fail"))
        return report.most_failed_rows

    adds = [(n, f"r{n}", g.name) for n in (1, 2, 3) for g in ev.graders]
    del adds[3]  # r2 fails one grader, r1 and r3 both
    assert most_failed(adds) == most_failed(adds[::-1]) == [("r1", 2), ("r3", 2), ("r2", 1)]

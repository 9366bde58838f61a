"""One pacer per endpoint and key for a whole run: panel members, an eval's graders and target,
and align's folds and optimizer calls that reach one endpoint with one key share its cap, its
429 pause and its fail-fast, measured where the requests arrive (a scripted server on
127.0.0.1)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from conftest import SECRET_KEY, VALID_RUBRIC
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply

from rubriclib.cli import main
from rubriclib.judging.judge import Judge
from rubriclib.judging.panel import Panel
from rubriclib.rubrics.rubric import Rubric


def member(server: JudgeServer, model: str) -> Judge:
    """A member at `server` with the one shared key (so one pace key for every member)."""
    return Judge(model=model, base_url=server.url, api_key=SECRET_KEY, timeout=5.0)


def arrivals_at(
    server: JudgeServer, respond: Callable[[dict[str, Any]], Reply]
) -> list[tuple[str, float]]:
    """Each request's model and arrival time (monotonic) at `server`, filled as `respond`
    answers."""
    arrivals: list[tuple[str, float]] = []
    lock = threading.Lock()

    def timed(body: dict[str, Any]) -> Reply:
        with lock:
            arrivals.append((body["model"], time.monotonic()))
        return respond(body)

    server.responder = timed
    return arrivals


def passing(body: dict[str, Any]) -> Reply:
    return tool_reply("set_grade_pass", {"reason": "ok"})


def spacing(arrivals: list[tuple[str, float]]) -> float:
    """The mean gap between request arrivals: a cap of one start every T seconds makes it at
    least about T however the machine's load delays single requests (one sent late lets the
    next follow it closely, but never moves the last start earlier)."""
    times = sorted(at for _, at in arrivals)
    return (times[-1] - times[0]) / (len(times) - 1)


def test_a_panel_on_one_endpoint_and_key_holds_the_cap_for_the_endpoint(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    arrivals = arrivals_at(judge_server, passing)
    panel = Panel([member(judge_server, "judge-a"), member(judge_server, "judge-b")])
    results = panel.grade_many(
        rubric, [{"output": f"o{n}"} for n in range(6)], concurrency=4, requests_per_minute=600
    )
    assert [result.verdict for result in results] == ["pass"] * 6
    # 600 a minute at the endpoint: one start every 0.1 s, not one every 0.1 s per member
    assert len(arrivals) == 12 and spacing(arrivals) >= 0.09


def test_a_429_seen_by_one_member_pauses_the_other(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    answered: list[float] = []  # when judge-a's 429 left the server

    def respond(body: dict[str, Any]) -> Reply:
        if body["model"] == "judge-a" and not answered:
            answered.append(time.monotonic() + 0.2)
            return replace(error_reply(429, "slow down", {"retry-after": "1"}), delay=0.2)
        time.sleep(0.05)
        return passing(body)

    arrivals = arrivals_at(judge_server, respond)
    panel = Panel([member(judge_server, "judge-a"), member(judge_server, "judge-b")])
    results = panel.grade_many(rubric, [{"output": f"o{n}"} for n in range(6)], concurrency=2)
    assert [result.verdict for result in results] == ["pass"] * 6 and len(arrivals) == 13
    later = [at - answered[0] for model, at in arrivals if model == "judge-b" and at > answered[0]]
    # judge-b's requests sent after judge-a's 429 waited out its Retry-After too (all four, on a
    # quiet machine; one may have been on its way as the 429 left, on a loaded one)
    assert len(later) == 4 and len([after for after in later if after < 0.9]) <= 1


def test_a_dead_key_seen_by_one_member_stops_the_other(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.responder = lambda body: (
        error_reply(401, f"invalid key {SECRET_KEY}")
        if body["model"] == "judge-a"
        else passing(body)
    )
    panel = Panel([member(judge_server, "judge-a"), member(judge_server, "judge-b")])
    results = panel.grade_many(rubric, [{"output": f"o{n}"} for n in range(10)], concurrency=1)
    assert [result.verdict for result in results] == ["error"] * 10
    asked_b = [body for body in judge_server.requests if body["model"] == "judge-b"]
    assert len(asked_b) <= 1  # its first, sent beside judge-a's first; then the key is dead
    assert all(SECRET_KEY not in result.model_dump_json() for result in results)


EVAL = """\
name: shared
rows: [{{output: one}}, {{output: two}}, {{output: three}}]
judge: {{base_url: "{url}", requests_per_minute: 600, concurrency: 4}}
graders:
  - {{name: alone, rubric: ./tiny.md, judge: {{model: judge-a}}}}
  - name: panel
    rubric: ./tiny.md
    judges: [{{model: judge-a}}, {{model: judge-b}}]
"""


def test_an_eval_grader_that_is_also_a_panel_member_shares_the_endpoint_cap(
    judge_server: JudgeServer, write_file: Callable[..., Path], monkeypatch: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    arrivals = arrivals_at(judge_server, passing)
    write_file("tiny.md", VALID_RUBRIC)
    path = write_file("eval.yaml", EVAL.format(url=judge_server.url))
    result = CliRunner().invoke(main, ["eval", str(path), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert len(arrivals) == 9 and spacing(arrivals) >= 0.09


def writing_or_passing(body: dict[str, Any]) -> Reply:
    """A target's answer when no tools are offered, else a passing verdict."""
    if "tools" not in body:
        return Reply(body=completion(content=f"an answer to {body['messages'][-1]['content']}"))
    return passing(body)


TARGETED = """\
name: targeted
rows: [{{id: r1, input: q1}}, {{id: r2, input: q2}}, {{id: r3, input: q3}}, {{id: r4, input: q4}}]
judge: {{base_url: "{url}", model: judge-a, requests_per_minute: {rpm}, concurrency: {concurrency}}}
target: {{model: writer, base_url: "{url}"{key}}}
graders: [{{name: tiny, rubric: ./tiny.md}}]
"""


def run_targeted(
    server: JudgeServer, write_file: Callable[..., Path], *extra: str, **settings: Any
) -> list[dict[str, Any]]:
    """`rubriclib eval` of TARGETED (a target and a grader at `server`) with `settings`, its
    results file's lines."""
    fields = {"rpm": "null", "concurrency": 4, "key": ""} | settings
    write_file("tiny.md", VALID_RUBRIC)
    path = write_file("eval.yaml", TARGETED.format(url=server.url, **fields))
    out = path.parent / "results.jsonl"
    result = CliRunner().invoke(main, ["eval", str(path), "--no-cache", "--out", str(out), *extra])
    assert "Traceback" not in result.output and SECRET_KEY not in result.output
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_target_and_a_grader_on_one_endpoint_and_key_hold_the_cap_together(
    judge_server: JudgeServer, write_file: Callable[..., Path], monkeypatch: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    arrivals = arrivals_at(judge_server, writing_or_passing)
    lines = run_targeted(judge_server, write_file, rpm=600)
    assert [line["verdict"] for line in lines] == ["pass"] * 4
    assert {line["output"] for line in lines} == {f"an answer to q{n}" for n in range(1, 5)}
    writer = [at for model, at in arrivals if model == "writer"]
    # four outputs and four judgments, 600 a minute at the endpoint: one start every 0.1 s
    assert len(writer) == 4 and len(arrivals) == 8 and spacing(arrivals) >= 0.09


def test_a_429_to_the_target_is_retried_and_pauses_the_grader_on_its_endpoint(
    judge_server: JudgeServer, write_file: Callable[..., Path], monkeypatch: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    answered: list[float] = []  # when the target's 429 left the server

    def respond(body: dict[str, Any]) -> Reply:
        if body["model"] == "writer" and not answered:
            answered.append(time.monotonic() + 0.05)
            return replace(error_reply(429, "slow down", {"retry-after": "1"}), delay=0.05)
        time.sleep(0.1)
        return writing_or_passing(body)

    arrivals = arrivals_at(judge_server, respond)
    lines = run_targeted(judge_server, write_file, concurrency=2)
    assert [line["verdict"] for line in lines] == ["pass"] * 4
    assert {line["output"] for line in lines} == {f"an answer to q{n}" for n in range(1, 5)}
    assert len(arrivals) == 9  # the refused output asked again, once
    later = [at - answered[0] for _, at in arrivals if at > answered[0]]
    # everything sent to the endpoint after the target's 429 waited out its Retry-After (one
    # may have been on its way as the 429 left, on a loaded machine)
    assert len(later) == 7 and len([after for after in later if after < 0.9]) <= 1


def test_a_dead_target_key_stops_the_targets_later_requests(
    judge_server: JudgeServer, write_file: Callable[..., Path], monkeypatch: Any
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-judge-key-0000")
    monkeypatch.setenv("WRITER_KEY", SECRET_KEY)
    judge_server.responder = lambda body: (
        error_reply(401, f"invalid key {SECRET_KEY}")
        if body["model"] == "writer"
        else passing(body)
    )
    lines = run_targeted(judge_server, write_file, concurrency=1, key=", api_key_env: WRITER_KEY")
    assert [line["verdict"] for line in lines] == ["error"] * 4
    reasons = [line["result"]["reason"] for line in lines]
    assert all(reason.startswith("not judged: no output: ") for reason in reasons)
    assert all("HTTP 401 (check the key in WRITER_KEY)" in reason for reason in reasons)
    assert all(SECRET_KEY not in json.dumps(line) for line in lines)
    assert len(judge_server.requests) == 1  # the first output asked; then the key is dead

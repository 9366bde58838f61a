"""Endpoint faults and server quirks: retries, backoff, Retry-After, time bounds, fallbacks;
how a refused key and a closed port are told."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, VALID_RUBRIC
from judge_server import JudgeServer, Reply, error_reply, tool_reply

from rubriclib import Rubric, load_rubric
from rubriclib.cli import main
from rubriclib.judging.judge import Judge

PASS = tool_reply("set_grade_pass", {"reason": "ok"})


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504])
def test_retryable_statuses_are_retried(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, status: int
) -> None:
    judge_server.script(error_reply(status, "transient"), PASS)
    result = judge.grade(rubric, "x")
    assert result.verdict == "pass" and result.details["judge"]["attempts"] == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, status: int
) -> None:
    judge_server.script(error_reply(status, "no"), PASS)
    result = judge.grade(rubric, "x")
    assert result.verdict == "error" and f"HTTP {status}" in result.reason
    assert len(judge_server.requests) == 1


def test_retries_are_bounded_by_max_retries(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge = Judge(base_url=judge_server.url, api_key=SECRET_KEY, max_retries=4, backoff_base=0.001)
    judge_server.script(*[error_reply(503, "down")] * 10)
    result = judge.grade(rubric, "x")
    assert result.verdict == "error" and result.details["judge"]["attempts"] == 5
    assert len(judge_server.requests) == 5


def test_retry_after_is_honoured(judge: Judge, judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.script(error_reply(429, "slow down", {"Retry-After": "0.3"}), PASS)
    started = time.monotonic()
    assert judge.grade(rubric, "x").verdict == "pass"
    assert time.monotonic() - started >= 0.3


def test_retry_after_is_capped(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge = Judge(base_url=judge_server.url, api_key=SECRET_KEY, max_retry_after=0.2)
    judge_server.script(error_reply(429, "slow down", {"Retry-After": "3600"}), PASS)
    started = time.monotonic()
    assert judge.grade(rubric, "x").verdict == "pass"
    assert time.monotonic() - started < 2


def test_retry_after_ms_and_http_date(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        error_reply(503, "a", {"retry-after-ms": "10"}),
        error_reply(503, "b", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}),  # in the past: 0
        PASS,
    )
    assert judge.grade(rubric, "x").details["judge"]["attempts"] == 3


def test_backoff_is_exponential_with_jitter_and_capped() -> None:
    judge = Judge(base_url="http://127.0.0.1:1/v1", backoff_base=1.0, backoff_max=5.0)
    no_header = RuntimeError("x")
    for retry, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delays = [judge._at.delay(retry, no_header) for _ in range(50)]
        assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
        assert len(set(delays)) > 1  # jittered


def test_a_slow_endpoint_times_out_and_is_retried(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge = Judge(
        base_url=judge_server.url,
        api_key=SECRET_KEY,
        timeout=0.3,
        max_retries=1,
        backoff_base=0.001,
    )
    judge_server.script(Reply(delay=2.0, body={}), Reply(delay=2.0, body={}))
    started = time.monotonic()
    result = judge.grade(rubric, "x")
    assert result.verdict == "error" and "timed out" in result.reason
    assert result.details["judge"]["attempts"] == 2
    assert time.monotonic() - started < 1.8


def test_the_overall_bound_stops_a_judgment(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge = Judge(
        base_url=judge_server.url,
        api_key=SECRET_KEY,
        timeout=0.3,
        max_retries=50,
        total_timeout=0.8,
        backoff_base=0.001,
    )
    judge_server.responder = lambda body: Reply(delay=1.0, body={})
    started = time.monotonic()
    result = judge.grade(rubric, "x")
    assert result.verdict == "error"
    assert "overall limit of 0.8s" in result.reason or "timed out" in result.reason
    assert time.monotonic() - started < 1.5
    assert result.details["judge"]["attempts"] < 50


def test_a_dropped_connection_is_retried(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(Reply(disconnect=True), PASS)
    result = judge.grade(rubric, "x")
    assert result.verdict == "pass" and result.details["judge"]["attempts"] == 2


def test_a_non_json_body_is_an_error_result(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(Reply(body=b"<html>gateway</html>"), Reply(body=b"<html>gateway</html>"))
    result = judge.grade(rubric, "x")
    assert result.verdict == "error" and not result.passed


LLAMA_CPP_CRASH = Reply(
    500, {"error": {"message": "", "type": "internal_server_error", "param": None}}
)


VERDICT_PASS = tool_reply("set_grade", {"reason": "ok", "verdict": "pass"})
NAMED_VERDICT = {"type": "function", "function": {"name": "set_grade"}}


def test_a_refused_required_falls_back_to_the_named_verdict_tool_and_is_remembered(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(LLAMA_CPP_CRASH, VERDICT_PASS, VERDICT_PASS)
    first = judge.grade(rubric, "x")
    assert first.verdict == "pass" and first.details["judge"]["attempts"] == 2
    assert first.details["judge"]["mode"] == "named"
    # the very next request forces the one verdict tool by name; never "auto"
    assert [r["tool_choice"] for r in judge_server.requests] == ["required", NAMED_VERDICT]
    [tool] = judge_server.requests[1]["tools"]
    assert tool["function"]["name"] == "set_grade"
    assert tool["function"]["parameters"]["required"] == ["reason", "verdict"]
    assert tool["function"]["parameters"]["properties"]["verdict"]["enum"] == ["pass", "fail"]
    assert judge.quirks == {"no_required_tool_choice"}
    second = judge.grade(rubric, "x")
    assert second.details["judge"]["attempts"] == 1
    assert judge_server.requests[-1]["tool_choice"] == NAMED_VERDICT


@pytest.mark.parametrize(("verdict", "passed"), [("pass", True), ("fail", False)])
def test_the_named_verdict_tool_gives_either_verdict(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, verdict: str, passed: bool
) -> None:
    judge.quirks.add("no_required_tool_choice")
    judge_server.script(tool_reply("set_grade", {"reason": "because", "verdict": verdict}))
    result = judge.grade(rubric, "x")
    assert (result.verdict, result.passed, result.reason) == (verdict, passed, "because")


def test_a_400_naming_tool_choice_falls_back_too(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(error_reply(400, "tool_choice 'required' is not supported"), VERDICT_PASS)
    assert judge.grade(rubric, "x").verdict == "pass"
    assert judge_server.requests[1]["tool_choice"] == NAMED_VERDICT


def test_auto_only_when_a_named_choice_is_refused_too(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        LLAMA_CPP_CRASH, error_reply(400, "tool_choice object is not supported"), PASS
    )
    result = judge.grade(rubric, "x")
    assert result.verdict == "pass" and result.details["judge"]["mode"] == "auto"
    choices = [r["tool_choice"] for r in judge_server.requests]
    assert choices == ["required", NAMED_VERDICT, "auto"]
    names = [tool["function"]["name"] for tool in judge_server.requests[2]["tools"]]
    assert names == ["set_grade_pass", "set_grade_fail"]
    assert judge.quirks == {"no_required_tool_choice", "no_named_tool_choice"}


def test_a_500_with_a_message_is_an_outage_not_a_quirk(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(error_reply(500, "The server had an error"), PASS)
    assert judge.grade(rubric, "x").verdict == "pass"
    assert [r["tool_choice"] for r in judge_server.requests] == ["required", "required"]
    assert judge.quirks == set()


def test_temperature_rejection_drops_temperature(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    rejection = error_reply(
        400, "Unsupported value: 'temperature' does not support 0.0 with this model."
    )
    judge_server.script(rejection, PASS, PASS)
    assert judge.grade(rubric, "x").verdict == "pass"
    assert (
        "temperature" in judge_server.requests[0] and "temperature" not in judge_server.requests[1]
    )
    judge.grade(rubric, "x")
    assert "temperature" not in judge_server.requests[2]


def test_max_tokens_rejection_switches_to_max_completion_tokens(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    rejection = error_reply(
        400,
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead.",
    )
    judge_server.script(rejection, PASS)
    assert judge.grade(rubric, "x").verdict == "pass"
    assert judge_server.requests[0]["max_tokens"] == 1024
    assert judge_server.requests[1]["max_completion_tokens"] == 1024
    assert "max_tokens" not in judge_server.requests[1]


def test_quirks_do_not_loop(judge: Judge, judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.responder = lambda body: LLAMA_CPP_CRASH
    result = judge.grade(rubric, "x")
    assert result.verdict == "error"
    # required -> named -> auto (two quirks), then the same crash is a plain 500, retried.
    assert len(judge_server.requests) == 1 + 1 + 1 + judge.max_retries


WEIRD_BODIES = {
    "choices null": {"choices": None},
    "message null": {"choices": [{"index": 0, "message": None}]},
    "function null": {"choices": [{"message": {"tool_calls": [{"id": "c", "function": None}]}}]},
    "name not a string": {
        "choices": [{"message": {"tool_calls": [{"function": {"name": 7, "arguments": "{}"}}]}}]
    },
    "usage garbage": {
        "choices": [{"message": {"content": "hi"}}],
        "usage": {"prompt_tokens": "lots"},
    },
    "content a number": {"choices": [{"message": {"content": 12345}}]},
    "body a list": [1, 2, 3],
    "body a string": "just text",
}


@pytest.mark.parametrize("case", sorted(WEIRD_BODIES))
def test_malformed_completions_are_error_results_not_crashes(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, case: str
) -> None:
    judge_server.responder = lambda body: Reply(body=WEIRD_BODIES[case])
    result = judge.grade(rubric, "x")
    assert result.verdict == "error" and not result.passed and result.score is None
    assert result.details["rubric"] == rubric.identity


SCORED = VALID_RUBRIC.replace("scale: pass-fail", "scale: 1-5\npass_threshold: 3").replace(
    "    expected: pass\n  - name: bad", "    expected: pass\n    expected_score: 4\n  - name: bad"
)


def test_a_rejected_named_tool_choice_falls_back_to_auto_on_its_own(
    judge: Judge, judge_server: JudgeServer, write_file: Callable[..., Path], rubric: Rubric
) -> None:
    scored = load_rubric(str(write_file("scored.md", SCORED)))
    score = tool_reply("set_grade_score", {"score": 4, "reason": "ok"})
    judge_server.script(error_reply(400, "tool_choice object is not supported"), score, PASS)
    assert judge.grade(scored, "x").verdict == "pass"
    choices = [r["tool_choice"] for r in judge_server.requests]
    assert choices[0] == {"type": "function", "function": {"name": "set_grade_score"}}
    assert choices[1] == "auto" and judge.quirks == {"no_named_tool_choice"}
    judge.grade(rubric, "x")  # "required" was never refused, so pass-fail rubrics keep it
    assert judge_server.requests[-1]["tool_choice"] == "required"


def test_auto_is_never_mistaken_for_a_quirk(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge.quirks.update({"no_required_tool_choice", "no_named_tool_choice"})
    judge_server.script(LLAMA_CPP_CRASH, PASS)
    assert judge.grade(rubric, "x").verdict == "pass"  # a plain 500 now, retried
    assert judge.quirks == {"no_required_tool_choice", "no_named_tool_choice"}


EVAL = """\
name: refused
{judge}rows:
  - {{id: a, output: "x"}}
  - {{id: b, output: "y"}}
graders:
  - {{name: tiny, rubric: ./tiny.md}}
"""
OTHER_KEY = "sk-other-SECRET-fedcba9876543210"


def judged(eval_file: Path, out: Path) -> tuple[str, list[str]]:
    """The eval's run on the command line: what it printed and each result's reason."""
    result = CliRunner().invoke(main, ["eval", str(eval_file), "--out", str(out), "--no-cache"])
    assert result.exit_code == 3, result.output  # judge errors: undecided
    reasons = [json.loads(line)["result"]["reason"] for line in out.read_text().splitlines()]
    return result.output + result.stderr, reasons


def test_a_refused_key_is_named_by_the_variable_that_holds_it_never_shown(
    judge_server: JudgeServer,
    write_file: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    caplog.set_level(logging.DEBUG, logger="rubriclib")
    judge_server.responder = lambda body: error_reply(401, "Incorrect API key provided: sk-te***")
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("MY_JUDGE_KEY", OTHER_KEY)
    write_file("tiny.md", VALID_RUBRIC)
    printed, reasons = judged(write_file("a.yaml", EVAL.format(judge="")), tmp_path / "a.jsonl")
    told = "HTTP 401 (check the key in OPENAI_API_KEY): Error code: 401 - Incorrect API key"
    assert len(reasons) == 2 and all(told in reason for reason in reasons)
    assert told in printed  # within the first line the report shows of each error
    named = EVAL.format(judge="judge: {api_key_env: MY_JUDGE_KEY}\n")
    printed_too, reasons = judged(write_file("b.yaml", named), tmp_path / "b.jsonl")
    assert all("HTTP 401 (check the key in MY_JUDGE_KEY): " in reason for reason in reasons)
    given = Judge(base_url=judge_server.url, api_key=OTHER_KEY).grade(
        load_rubric(str(tmp_path / "tiny.md")), "x"
    )
    assert given.reason.startswith("judge request failed after 1 attempt(s): HTTP 401 (check the ")
    assert "(check the api_key given)" in given.reason
    written = (tmp_path / "a.jsonl").read_text() + (tmp_path / "b.jsonl").read_text()
    for text in (printed, printed_too, written, given.reason, caplog.text):
        assert SECRET_KEY not in text and OTHER_KEY not in text


def test_a_closed_port_is_named_by_its_url_without_the_clients_own_words(
    write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}/v1"  # closed once the block ends
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    write_file("tiny.md", VALID_RUBRIC)
    printed, reasons = judged(write_file("a.yaml", EVAL.format(judge="")), tmp_path / "a.jsonl")
    told = f"cannot connect to {url} (Connection refused)"
    assert all(reason.endswith(told) for reason in reasons) and told in printed
    rubric = load_rubric(str(tmp_path / "tiny.md"))
    for transport in ("auto", "sdk"):
        judge = Judge(base_url=url, api_key=SECRET_KEY, max_retries=0, transport=transport)
        for result in (judge.grade(rubric, "x"), asyncio.run(judge.agrade(rubric, "x"))):
            assert result.reason == f"judge request failed after 1 attempt(s): {told}"
    assert "ssl:default" not in printed and "Errno" not in printed and SECRET_KEY not in printed

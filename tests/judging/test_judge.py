"""Every verdict path, through the openai SDK, over a real socket to the scripted server."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply

from rubriclib import JudgeConfigError, Rubric, load_rubric
from rubriclib.item import ItemError, TranscriptError
from rubriclib.judging.judge import Judge


def test_pass_call_gives_a_pass_with_full_details(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "It is fine."}))
    result = judge.grade(rubric, "fine", input="Is it fine?")
    assert (result.verdict, result.passed, result.score) == ("pass", True, 1.0)
    assert result.reason == "It is fine."
    assert result.details["rubric"] == rubric.identity
    judge_info = result.details["judge"]
    assert judge_info["model"] == "judge-model" and judge_info["attempts"] == 1
    assert judge_info["usage"] == {"prompt_tokens": 11, "completion_tokens": 7}
    assert isinstance(judge_info["latency_ms"], int) and judge_info["latency_ms"] >= 0
    assert json.loads(result.model_dump_json())["details"]["rubric"]["version"] == "1.2.3"


def test_request_offers_two_tools_with_tool_choice_required(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(tool_reply("set_grade_fail", {"reason": "broken"}))
    judge.grade(rubric, "broken")
    [sent] = judge_server.requests
    assert sent["model"] == "judge-model" and sent["tool_choice"] == "required"
    assert sent["temperature"] == 0.0
    names = [tool["function"]["name"] for tool in sent["tools"]]
    assert names == ["set_grade_pass", "set_grade_fail"]
    for tool in sent["tools"]:
        assert tool["function"]["parameters"]["required"] == ["reason"]
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]


def test_fail_call_gives_a_fail(judge: Judge, judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.script(tool_reply("set_grade_fail", {"reason": "Unsupported claim: X."}))
    result = judge.grade(rubric, "broken")
    assert (result.verdict, result.passed, result.score) == ("fail", False, 0.0)
    assert result.reason == "Unsupported claim: X."


BAD_REPLIES = {
    "no tool call": Reply(body=completion(content="PASS. Looks great.")),
    "both tools": Reply(
        body=completion([("set_grade_pass", {"reason": "a"}), ("set_grade_fail", {"reason": "b"})])
    ),
    "unknown tool": tool_reply("approve", {"reason": "ok"}),
    "arguments not JSON": tool_reply("set_grade_pass", "{reason: ok"),
    "arguments not an object": tool_reply("set_grade_pass", "[1, 2]"),
    "no reason": tool_reply("set_grade_pass", {}),
    "no choices": Reply(body={**completion(), "choices": []}),
}
EXPLANATIONS = {
    "no tool call": "without a verdict tool call (text: 'PASS. Looks great.')",
    "both tools": "2 tool calls (set_grade_pass, set_grade_fail); exactly one is allowed",
    "unknown tool": "unknown tool 'approve'",
    "arguments not JSON": "arguments of set_grade_pass are not JSON",
    "arguments not an object": "arguments of set_grade_pass are not a JSON object",
    "no reason": "set_grade_pass was called without a 'reason' string",
    "no choices": "the response had no choices",
}


NAMED_VERDICT = {"type": "function", "function": {"name": "set_grade"}}


@pytest.mark.parametrize("case", sorted(BAD_REPLIES))
def test_invalid_verdicts_are_errors_after_one_corrective_turn(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, case: str
) -> None:
    judge_server.script(BAD_REPLIES[case], BAD_REPLIES[case])
    result = judge.grade(rubric, "fine")
    assert (result.verdict, result.passed, result.score) == ("error", False, None)
    assert "after a corrective turn" in result.reason
    details = result.details["judge"]
    assert EXPLANATIONS[case] in details["correction"] and details["corrected"] is True
    assert details["attempts"] == 2 and details["mode"] == "required"
    corrective = judge_server.requests[1]
    assert corrective["tool_choice"] == NAMED_VERDICT  # forced by name: it cannot ramble
    assert corrective["messages"][-1]["role"] == "user"


def test_corrective_turn_can_rescue_a_verdict(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        Reply(body=completion(content="I think it passes.")),
        tool_reply("set_grade", {"reason": "fine", "verdict": "pass"}),
    )
    result = judge.grade(rubric, "fine")
    assert result.verdict == "pass" and result.details["judge"]["attempts"] == 2
    assert result.details["judge"]["corrected"] is True
    second = judge_server.requests[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": "I think it passes."}
    assert result.details["judge"]["usage"] == {"prompt_tokens": 22, "completion_tokens": 14}


def test_a_first_answer_is_not_marked_corrected(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "fine"}))
    details = judge.grade(rubric, "fine").details["judge"]
    assert details["corrected"] is False and "correction" not in details
    assert details["mode"] == "required"


def test_waza_rubric_is_judged_with_waza_tools(
    judge: Judge, judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    waza = (Path(__file__).parents[1] / "data" / "waza-instruction-following.md").read_text()
    rubric = load_rubric(str(write_file("waza.md", waza)))
    judge_server.script(tool_reply("set_waza_grade_fail", {"reason": "Not JSON."}))
    result = judge.grade(rubric, "Sure! Red, green, blue.", input="JSON array only.")
    assert result.verdict == "fail" and result.reason == "Not JSON."
    names = [tool["function"]["name"] for tool in judge_server.requests[0]["tools"]]
    assert names == ["set_waza_grade_pass", "set_waza_grade_fail"]
    judge_server.script(
        tool_reply("set_grade_pass", {"reason": "x"}), tool_reply("set_grade_pass", {"reason": "x"})
    )
    assert (
        judge.grade(rubric, "[]").verdict == "error"
    )  # our own names are unknown to a waza rubric


def test_api_failure_is_an_error_result_not_an_exception(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(*[error_reply(503, "overloaded")] * 3)
    result = judge.grade(rubric, "fine")
    assert result.verdict == "error" and not result.passed and result.score is None
    assert "after 3 attempt(s): HTTP 503" in result.reason
    assert result.details["judge"]["attempts"] == 3 and len(judge_server.requests) == 3


def test_non_retryable_status_fails_at_once(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(error_reply(401, "bad key"))
    result = judge.grade(rubric, "fine")
    assert result.verdict == "error" and "HTTP 401" in result.reason
    assert len(judge_server.requests) == 1


def test_unreachable_endpoint_is_an_error_result(rubric: Rubric) -> None:
    judge = Judge(
        base_url="http://127.0.0.1:9/v1",
        api_key=SECRET_KEY,
        timeout=2,
        max_retries=1,
        backoff_base=0.001,
    )
    result = judge.grade(rubric, "fine")
    assert result.verdict == "error" and "cannot connect" in result.reason
    assert result.details["judge"]["attempts"] == 2


def test_api_key_is_sent_but_never_shown(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    echo = f"invalid key {SECRET_KEY} given"
    judge_server.script(error_reply(500, echo), error_reply(500, echo), error_reply(500, echo))
    result = judge.grade(rubric, "fine")
    assert judge_server.headers[0]["authorization"] == f"Bearer {SECRET_KEY}"
    assert SECRET_KEY not in result.model_dump_json()
    assert "[redacted]" in result.reason
    assert SECRET_KEY not in caplog.text and SECRET_KEY not in repr(judge)


def test_async_grade_gives_the_same_result(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "fine"}))
    result = asyncio.run(judge.agrade(rubric, "fine"))
    assert result.verdict == "pass" and result.details["rubric"] == rubric.identity
    judge_server.script(
        error_reply(500, "down"), error_reply(500, "down"), error_reply(500, "down")
    )
    assert asyncio.run(judge.agrade(rubric, "fine")).verdict == "error"


def test_settings_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, judge_server: JudgeServer, rubric: Rubric
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("RUBRICLIB_MODEL", "env-model")
    judge_server.script(tool_reply("set_grade_pass", {"reason": "ok"}))
    result = Judge().grade(rubric, "fine")
    assert result.details["judge"]["model"] == "env-model"
    assert judge_server.headers[0]["authorization"] == f"Bearer {SECRET_KEY}"


def test_default_model_and_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(JudgeConfigError, match="OPENAI_API_KEY"):
        Judge()
    monkeypatch.setenv("OPENAI_API_KEY", "k" * 10)
    assert Judge().model == "gpt-4o-mini"
    assert Judge(base_url="http://127.0.0.1:1/v1", api_key=None).model == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("raw", "verdict", "score"),
    [(5, "pass", 1.0), (4, "pass", 0.75), (3, "fail", 0.5), (1, "fail", 0.0)],
)
def test_scored_verdict_uses_the_threshold(
    judge: Judge, judge_server: JudgeServer, scored: Rubric, raw: int, verdict: str, score: float
) -> None:
    judge_server.script(tool_reply("set_grade_score", {"score": raw, "reason": "because"}))
    result = judge.grade(scored, "x", reference="y")
    assert (result.verdict, result.passed, result.score) == (verdict, verdict == "pass", score)
    assert result.details["raw_score"] == raw and result.reason == "because"
    [tool] = judge_server.requests[0]["tools"]
    assert tool["function"]["name"] == "set_grade_score"
    named = {"type": "function", "function": {"name": "set_grade_score"}}
    assert judge_server.requests[0]["tool_choice"] == named  # one tool: force it by name
    score = tool["function"]["parameters"]["properties"]["score"]
    assert score == {"type": "integer", "enum": [1, 2, 3, 4, 5]}  # a grammar can enforce enum
    assert tool["function"]["parameters"]["required"] == ["reason", "score"]  # reason first


@pytest.mark.parametrize(
    ("score", "fragment"),
    [
        (6, "score 6, outside 1 to 5"),
        (0, "score 0, outside 1 to 5"),
        (3.5, "not an integer: 3.5"),
        ("4", "not an integer: '4'"),
        (True, "not an integer: True"),
        (None, "not an integer: None"),
    ],
)
def test_invalid_scores_are_judge_errors(
    judge: Judge, judge_server: JudgeServer, scored: Rubric, score: object, fragment: str
) -> None:
    bad = tool_reply("set_grade_score", {"score": score, "reason": "r"})
    judge_server.script(bad, bad)
    result = judge.grade(scored, "x")
    assert result.verdict == "error" and result.score is None and fragment in result.reason
    assert "raw_score" not in result.details


def test_pass_fail_tools_are_unknown_to_a_scored_rubric(
    judge: Judge, judge_server: JudgeServer, scored: Rubric
) -> None:
    wrong = tool_reply("set_grade_pass", {"reason": "r"})
    judge_server.script(wrong, wrong)
    assert "unknown tool 'set_grade_pass'" in judge.grade(scored, "x").reason


def honest_judge(intent: str, first_text: str) -> Callable[[dict[str, Any]], Reply]:
    """A judge that first writes its intent as text, then calls whatever tool it is forced to,
    giving the verdict it meant."""

    def respond(body: dict[str, Any]) -> Reply:
        if len(body["messages"]) == 2:  # the first turn: system and user
            return Reply(body=completion(content=first_text))
        if body["tool_choice"] == NAMED_VERDICT:
            return tool_reply("set_grade", {"reason": "meant it", "verdict": intent})
        return tool_reply(f"set_grade_{intent}", {"reason": "meant it"})

    return respond


@pytest.mark.parametrize("quirks", [set(), {"no_named_tool_choice"}])
@pytest.mark.parametrize("intent", ["pass", "fail"])
def test_a_verdict_named_in_text_comes_back_as_that_verdict(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, intent: str, quirks: set[str]
) -> None:
    judge.quirks.update(quirks)
    judge_server.responder = honest_judge(intent, f"functions.set_grade_{intent}:")
    result = judge.grade(rubric, "fine")
    assert result.verdict == intent and result.reason == "meant it"
    assert result.details["judge"]["corrected"] is True
    corrective = judge_server.requests[1]
    expected_choice = "required" if quirks else NAMED_VERDICT
    assert corrective["tool_choice"] == expected_choice
    # the judge's own words are kept, so its intent stays in front of it
    assert corrective["messages"][-2] == {
        "role": "assistant",
        "content": f"functions.set_grade_{intent}:",
    }


def test_a_forced_call_that_contradicts_the_text_intent_is_an_error(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        Reply(body=completion(content="functions.set_grade_pass:")),
        tool_reply("set_grade", {"reason": "The judge answered without a tool", "verdict": "fail"}),
    )
    result = judge.grade(rubric, "fine")
    assert result.verdict == "error" and not result.passed
    assert "first wrote pass as text, then called fail" in result.reason


FAILURE_WORDING = ("not a valid", "invalid", "wrong", "error", "without", "problem", "failed")


@pytest.mark.parametrize("first", ["", "functions.set_grade_pass:", "PASS. Looks great."])
def test_the_corrective_turn_is_neutral(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric, first: str
) -> None:
    judge_server.script(
        Reply(body=completion(content=first)),
        tool_reply("set_grade", {"reason": "ok", "verdict": "pass"}),
    )
    judge.grade(rubric, "fine")
    ask = judge_server.requests[1]["messages"][-1]
    assert ask["role"] == "user"
    text = ask["content"].lower()
    assert not [word for word in FAILURE_WORDING if word in text], text
    assert "`set_grade`" in text and "pass" in text and "fail" in text
    assert text.index("pass") < text.index("fail")  # both options, stated evenly


def test_a_scored_rubric_is_corrected_through_its_named_tool(
    judge: Judge, judge_server: JudgeServer, scored: Rubric
) -> None:
    judge_server.script(
        Reply(body=completion(content="")),
        tool_reply("set_grade_score", {"reason": "close", "score": 4}),
    )
    result = judge.grade(scored, "x")
    assert result.verdict == "pass" and result.details["raw_score"] == 4
    named = {"type": "function", "function": {"name": "set_grade_score"}}
    assert [r["tool_choice"] for r in judge_server.requests] == [named, named]
    assert result.details["judge"]["mode"] == "named" and result.details["judge"]["corrected"]


def test_a_base_url_with_a_bad_port_is_a_config_error_that_shows_no_credentials() -> None:
    with pytest.raises(JudgeConfigError) as raised:
        Judge(model="m", base_url="http://user:s3cret@host:notaport/v1", api_key="k")
    assert "bad port" in str(raised.value) and "s3cret" not in str(raised.value)


def test_a_run_is_judged_whole_its_blocks_sent_and_recorded_in_details(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    run = json.loads((Path(__file__).parents[1] / "data/runs/responses.json").read_text())
    judge_server.script(tool_reply("set_grade_pass", {"reason": "confirmed first"}))
    result = judge.grade(rubric, transcript=run)
    assert result.verdict == "pass"
    user = judge_server.requests[0]["messages"][1]["content"]
    assert 'tool call refund (call_2): {"order_id": "A-17", "amount": 12.5}' in user
    assert (
        '[M8] tool result for refund (call_2, answers the call in M7)\n{"status": "refunded"}'
        in user
    )
    assert result.details["transcript"] == {
        "shape": "openai-responses",
        "messages": 9,
        "max_prompt_tokens": 128_000,
        "cut": [],
    }


def test_the_cache_key_covers_the_run_not_only_its_final_answer(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge = Judge("judge-model", judge_server.url, "k", cache=tmp_path / "cache")
    run = json.loads((Path(__file__).parents[1] / "data/runs/openai_chat.json").read_text())
    judge_server.script(
        tool_reply("set_grade_pass", {"reason": "ok"}),
        tool_reply("set_grade_fail", {"reason": "no"}),
    )
    skipped_confirmation = run[:4] + run[6:]  # the same final answer, no question asked
    first = judge.grade(rubric, transcript=run)
    second = judge.grade(rubric, transcript=skipped_confirmation)
    assert (first.verdict, second.verdict) == ("pass", "fail")
    assert len(judge_server.requests) == 2
    assert judge.grade(rubric, transcript=run).details["judge"]["cached"] is True


def test_a_bad_run_given_to_grade_is_a_transcript_error_naming_the_message(
    judge: Judge, rubric: Rubric, judge_server: JudgeServer
) -> None:
    with pytest.raises(TranscriptError, match=r"grade\.transcript\[0\]\.role: unknown role"):
        judge.grade(rubric, transcript=[{"role": "robot", "content": "x"}])
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "zz"}]
    with pytest.raises(TranscriptError) as caught:
        judge.grade(rubric, transcript=orphan)
    assert caught.value.problems == [
        ("grade.transcript[1]", "answers call 'zz', which is not earlier in the run")
    ]
    with pytest.raises(TypeError, match=r"grade\.output: must be text"):  # more than the run
        judge.grade(rubric, {"not": "text"}, transcript=orphan)
    assert judge_server.requests == []


def test_langchain_message_objects_given_to_grade_say_how_to_pass_them(
    judge: Judge, rubric: Rubric, judge_server: JudgeServer
) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict

    run = [HumanMessage("Is order A-17 shipped?"), AIMessage("Yes, on 2 May.")]
    with pytest.raises(TranscriptError) as caught:
        judge.grade(rubric, transcript=run)
    assert str(caught.value) == (
        "grade.transcript: LangChain message objects (HumanMessage, AIMessage) are read as their "
        "dicts: pass langchain_core.messages.messages_to_dict(messages)"
    )
    with pytest.raises(ItemError, match=r"items\[1\]\.transcript: LangChain message objects"):
        judge.grade_many(rubric, [{"output": "fine"}, {"transcript": run}])
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "shipped"})
    assert judge.grade(rubric, transcript=messages_to_dict(run)).verdict == "pass"  # the hint
    assert "Yes, on 2 May." in judge_server.requests[-1]["messages"][1]["content"]


def test_the_prompt_limit_a_judge_cuts_runs_to_comes_from_the_config(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUBRICLIB_MAX_PROMPT_TOKENS", "5000")
    assert Judge("m", judge_server.url, "k").max_prompt_tokens == 5000
    assert Judge("m", judge_server.url, "k", max_prompt_tokens=900).max_prompt_tokens == 900


def test_a_prompt_over_the_limit_is_an_error_and_never_sent(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge = Judge("judge-model", judge_server.url, "k", max_prompt_tokens=200)
    result = judge.grade(rubric, "x" * 4_000)
    assert result.verdict == "error" and judge_server.requests == []
    assert result.reason == "not judged: prompt too large: about 1,323 tokens > 200"

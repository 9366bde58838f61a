"""A judge exploring a long agent run through tools (`evidence: explore`, and `auto` for a run
that does not fit uncut), over a real socket to the scripted server: the judge below searches,
reads and cites as a model would, and every answer it gets is what rubriclib's tools showed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply
from long_runs import NEEDLE, exploring_judge, long_run

from rubriclib import JudgeConfigError, Rubric, load_rubric
from rubriclib.item import read_transcript
from rubriclib.judging.judge import Judge
from rubriclib.judging.prompt.exploring import ExploredRun, list_blocks, read_block


@pytest.fixture
def cited(write_file: Any) -> Rubric:
    """A pass-fail rubric about agent runs that asks for citations."""
    text = (
        "---\nname: support-run\nversion: 1.0.0\nscale: pass-fail\n"
        "description: A support run.\ncitations: required\n---\n"
        "Fail a run where money moved without the customer's approval.\n"
    )
    return load_rubric(str(write_file("support-run.md", text)))


def judge_at(server: JudgeServer, **settings: Any) -> Judge:
    return Judge("judge-model", server.url, SECRET_KEY, timeout=5.0, backoff_base=0.001, **settings)


@pytest.mark.parametrize("evidence", ["explore", "auto"])
def test_a_long_run_is_failed_on_the_evidence_in_its_middle(
    judge_server: JudgeServer, cited: Rubric, evidence: str
) -> None:
    run = long_run()
    assert sum(len(m["content"] or "") for m in run) > 600_000
    judge_server.responder = exploring_judge()
    result = judge_at(judge_server, evidence=evidence).grade(cited, transcript=run)
    assert result.verdict == "fail", result.reason
    [citation] = result.details["citations"]
    assert citation["status"] == "verified" and citation["block"] == "M33"
    assert result.details["evidence"] == "explored"
    assert result.details["exploration"] == {
        "turns": 3,
        "blocks_read": ["M33"],
        "searches": ["refund .* without"],
        "characters_read": result.details["exploration"]["characters_read"],
    }
    assert result.details["transcript"]["cut"] == []
    first, second, third = judge_server.requests
    assert NEEDLE not in json.dumps(first) and len(json.dumps(first)) < 20_000
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert names == ["set_grade", "list_blocks", "read_block", "search_run"]
    assert first["tool_choice"] == "required"
    assert "[M1] user, 24 characters: Why was I charged twice?" in first["messages"][1]["content"]
    # Each exploring call is answered as a tool result of its own, after the call.
    assert third["messages"][2:4] == second["messages"][2:4]
    call, answer = third["messages"][4:6]
    assert call["tool_calls"][0]["function"]["name"] == "read_block"
    assert answer["role"] == "tool" and answer["tool_call_id"] == call["tool_calls"][0]["id"]
    assert answer["content"].startswith("[M33] tool result for lookup_orders (c15")
    assert (
        NEEDLE in answer["content"] and "left: read_block(block='M33', offset=" in answer["content"]
    )


def test_whole_shows_the_run_cut_and_says_so(judge_server: JudgeServer, cited: Rubric) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "r"}))
    result = judge_at(judge_server, evidence="whole").grade(cited, transcript=long_run())
    assert result.details["evidence"] == "whole-cut"
    shown = result.details["transcript"]
    assert shown["cut"] and shown["not_explored"] == "evidence is whole"
    assert len(judge_server.requests) == 1
    assert "characters cut" in judge_server.requests[0]["messages"][1]["content"]


def test_auto_sends_a_run_that_fits_exactly_as_whole_does(
    judge_server: JudgeServer, cited: Rubric, tmp_path: Path
) -> None:
    run = long_run(blocks=3, characters=300)
    judge_server.script(*[tool_reply("set_grade_pass", {"reason": "r"})] * 2)
    cache = tmp_path / "cache"
    whole = judge_at(judge_server, evidence="whole", cache=cache).grade(cited, transcript=run)
    auto = judge_at(judge_server, evidence="auto", cache=cache).grade(cited, transcript=run)
    assert len(judge_server.requests) == 1  # the second is the first's cached verdict
    assert auto.details["judge"]["cached"] and auto.verdict == whole.verdict == "pass"
    assert whole.details["evidence"] == auto.details["evidence"] == "whole"
    judge_at(judge_server, evidence="auto").grade(cited, transcript=run)
    assert judge_server.requests[1] == judge_server.requests[0]


def test_a_quote_from_an_unread_block_is_unverified(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    quote = {"block": "M5", "quote": "status shipped, carrier ground"}
    judge_server.script(
        tool_reply("read_block", {"block": "M3", "limit": 100}),
        tool_reply("set_grade", {"reason": "r", "verdict": "pass", "citations": [quote]}),
    )
    result = judge_at(judge_server, evidence="explore").grade(cited, transcript=long_run())
    [citation] = result.details["citations"]
    assert citation["status"] == "unverified" and citation["note"] == "no block M5 was shown"
    assert result.details["exploration"]["blocks_read"] == ["M3"]


def test_the_turn_budget_ends_in_one_corrective_turn_then_error(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    judge_server.responder = lambda body: tool_reply("list_blocks", {"page": 1})
    judge = judge_at(judge_server, evidence="explore", exploring_turns=3)
    result = judge.grade(cited, transcript=long_run())
    assert result.verdict == "error"
    assert result.reason == (
        "no valid verdict after a corrective turn: the judge went on exploring when asked for "
        "its verdict"
    )
    assert len(judge_server.requests) == 5  # 3 answered, 1 over budget, 1 corrective
    last = judge_server.requests[-1]
    assert last["tool_choice"] == {"type": "function", "function": {"name": "set_grade"}}
    assert result.details["judge"]["correction"] == "the exploring budget of 3 turns is spent"


def test_a_judge_that_gives_its_verdict_when_the_budget_is_spent_is_heard(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    reads = [tool_reply("read_block", {"block": "M3", "limit": 4000})] * 3
    judge_server.script(*reads, tool_reply("set_grade", {"reason": "r", "verdict": "pass"}))
    judge = judge_at(judge_server, evidence="explore", exploring_characters=5_000)
    result = judge.grade(cited, transcript=long_run())
    assert result.verdict == "pass"
    trail = result.details["exploration"]
    assert 5_000 <= trail["characters_read"] <= 5_000 + 300 and trail["turns"] == 4
    assert trail["blocks_read"] == ["M3"]
    last = judge_server.requests[3]
    assert last["messages"][-1]["content"].startswith(
        "The exploring budget of 5,000 characters is spent. Please give your verdict now"
    )
    assert last["tool_choice"] == {"type": "function", "function": {"name": "set_grade"}}


def test_a_second_call_that_is_not_valid_ends_in_error(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    judge_server.script(
        tool_reply("read_block", {"block": "M999"}), tool_reply("read_block", {"block": "x"})
    )
    result = judge_at(judge_server, evidence="explore").grade(cited, transcript=long_run())
    assert result.verdict == "error"
    assert result.reason == 'a second exploring call that is not valid: read_block {"block": "x"}'
    told = judge_server.requests[1]["messages"][-1]["content"]
    assert told == "No block 'M999': the run's blocks are M1 to M62."


def test_an_explored_verdict_is_cached_with_its_trail(
    judge_server: JudgeServer, cited: Rubric, tmp_path: Path
) -> None:
    judge_server.responder = exploring_judge()
    first = judge_at(judge_server, evidence="explore", cache=tmp_path).grade(
        cited, transcript=long_run()
    )
    again = judge_at(judge_server, evidence="explore", cache=tmp_path).grade(
        cited, transcript=long_run()
    )
    assert len(judge_server.requests) == 3
    assert again.details["judge"]["cached"] and again.verdict == first.verdict == "fail"
    assert again.details["exploration"] == first.details["exploration"]
    assert again.details["evidence"] == "explored"


def test_exploring_is_refused_where_it_cannot_apply(judge_server: JudgeServer) -> None:
    with pytest.raises(JudgeConfigError, match="the json protocol offers none"):
        judge_at(judge_server, evidence="explore", protocol="json")
    with pytest.raises(JudgeConfigError, match="checklist mode"):
        judge_at(judge_server, evidence="explore", mode="checklist")
    with pytest.raises(JudgeConfigError, match="evidence must be 'whole', 'explore' or 'auto'"):
        judge_at(judge_server, evidence="cut")
    result = judge_at(judge_server, evidence="explore").grade(
        "preference", "a", baseline="b", transcript=long_run(blocks=2, characters=50)
    )
    assert result.verdict == "error" and "pairwise rubric" in result.reason
    assert judge_server.requests == []


def refusing_tool_results(body: dict[str, Any]) -> Reply:
    """An endpoint that takes tools but refuses a conversation holding tool results."""
    if any(message["role"] == "tool" for message in body["messages"]):
        return error_reply(400, "messages: role 'tool' is not supported")
    if "list_blocks" in json.dumps(body["tools"]):
        return tool_reply("read_block", {"block": "M3"})
    return tool_reply("set_grade_pass", {"reason": "r"})


def test_an_endpoint_that_cannot_explore_ends_explore_in_error_and_auto_shows_the_run_whole(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    judge_server.responder = refusing_tool_results
    explored = judge_at(judge_server, evidence="explore").grade(cited, transcript=long_run())
    assert explored.verdict == "error"
    assert explored.reason.startswith("the endpoint cannot explore a run: it refused the judge's")
    judge_server.requests.clear()
    judge = judge_at(judge_server, evidence="auto")
    result = judge.grade(cited, transcript=long_run())
    assert result.verdict == "pass" and result.details["evidence"] == "whole-cut"
    assert result.details["transcript"]["not_explored"] == (
        "the endpoint cannot explore (quirk no_exploring)"
    )
    assert "no_exploring" in judge.quirks and len(judge_server.requests) == 3


def test_a_search_is_plain_text_too_and_a_runaway_pattern_is_only_plain_text() -> None:
    import time

    from rubriclib import read_transcript
    from rubriclib.judging.prompt.exploring import search_run

    hexes = "commit " + "0f3a9c" * 40 + " then a Refund of $412, at last"
    run = ExploredRun(read_transcript([{"role": "user", "content": hexes}]), 1000)
    found = search_run(run, "$412")  # a valid expression that matches nothing as one
    assert found.text.startswith("1 match(es)") and "Refund of $412" in found.text
    started = time.monotonic()
    runaway = search_run(run, r"(\w+)+!")  # backtracks for hours as an expression
    assert time.monotonic() - started < 1 and runaway.text.startswith("No match")
    assert search_run(run, "refund .* last").text.startswith("1 match(es)")


def test_a_quote_of_text_never_shown_is_unverified_however_it_is_spelt(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    masked = {"block": "M3", "quote": "\x00" * 12}  # what stands for the unread text
    judge_server.script(
        tool_reply("read_block", {"block": "M3", "limit": 100}),
        tool_reply("set_grade", {"reason": "r", "verdict": "fail", "citations": [masked]}),
        tool_reply("set_grade", {"reason": "r", "verdict": "fail", "citations": [masked]}),
    )
    result = judge_at(judge_server, evidence="explore").grade(cited, transcript=long_run())
    assert result.verdict == "error" and "verified citation" in result.reason
    assert result.details["citations"][0]["status"] == "unverified"


def test_a_budget_too_small_to_read_is_refused_before_any_request(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    small = {"exploring_characters": 500}
    explored = judge_at(judge_server, evidence="explore", **small).grade(
        cited, transcript=long_run()
    )
    assert explored.verdict == "error" and judge_server.requests == []
    assert "leaves 500 characters to explore the run, fewer than 1,000" in explored.reason
    judge_server.script(tool_reply("set_grade_pass", {"reason": "r"}))
    auto = judge_at(judge_server, evidence="auto", **small).grade(cited, transcript=long_run())
    assert auto.verdict == "pass" and auto.details["evidence"] == "whole-cut"
    assert "fewer than 1,000" in auto.details["transcript"]["not_explored"]


def test_a_cached_explored_verdict_is_not_reused_under_another_budget(
    judge_server: JudgeServer, cited: Rubric, tmp_path: Path
) -> None:
    judge_server.responder = exploring_judge()
    for characters in (5_000, 5_000, 9_000):
        judge = judge_at(
            judge_server, evidence="explore", cache=tmp_path, exploring_characters=characters
        )
        judge.grade(cited, transcript=long_run())
    assert len(judge_server.requests) == 6  # the second was cached, the third judged again


def test_votes_keep_every_vote_s_trail_and_auto_protocol_keeps_it_too(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    judge_server.responder = exploring_judge()
    judge = judge_at(judge_server, evidence="explore", votes=2, temperature=0.7, protocol="auto")
    result = judge.grade(cited, transcript=long_run())
    assert result.verdict == "fail" and len(judge_server.requests) == 6
    trail = result.details["exploration"]
    assert trail["turns"] == 6 and trail["blocks_read"] == ["M33"]
    assert trail["searches"] == ["refund .* without"] * 2


def test_exploring_when_asked_for_the_verdict_ends_in_error(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        if isinstance(body["tool_choice"], dict):  # refuses a tool named in tool_choice
            return error_reply(400, "tool_choice must be 'auto', 'none' or 'required'")
        if len(body["messages"]) == 2:
            return Reply(body=completion(content="Let me think about the refund."))
        return tool_reply("read_block", {"block": "M3"})

    judge_server.responder = answer
    result = judge_at(judge_server, evidence="explore").grade(cited, transcript=long_run())
    assert result.verdict == "error"
    assert result.reason == (
        "no valid verdict after a corrective turn: the judge went on exploring when asked for "
        "its verdict"
    )
    last = judge_server.requests[-1]["messages"]
    assert last[-1]["role"] == "user" and last[-1]["content"].startswith("Please give")


def test_evidence_explore_leaves_judgments_without_a_run_alone(judge_server: JudgeServer) -> None:
    judge_server.script(
        tool_reply("set_pairwise_winner", {"reason": "r", "winner": "A"}),
        tool_reply("set_pairwise_winner", {"reason": "r", "winner": "B"}),
    )
    judge = judge_at(judge_server, evidence="explore")
    result = judge.grade("preference", "a", input="q", baseline="b")
    assert result.verdict == "pass" and len(judge_server.requests) == 2


def test_a_panel_says_how_each_member_was_shown_the_run(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    from rubriclib import Panel

    def answer(body: dict[str, Any]) -> Reply:
        if "list_blocks" in json.dumps(body["tools"]):
            return exploring_judge()(body)
        return tool_reply("set_grade_pass", {"reason": "looks fine"})

    judge_server.responder = answer
    members = [judge_at(judge_server, evidence="explore"), judge_at(judge_server, evidence="whole")]
    result = Panel(members, "unanimous").grade(cited, transcript=long_run())
    explorer, reader = result.details["panel"]["judges"]
    assert explorer["evidence"] == "explored" and explorer["exploration"]["blocks_read"] == ["M33"]
    assert reader["evidence"] == "whole-cut" and reader["not_explored"] == "evidence is whole"


def test_arguments_nested_past_the_parser_s_depth_are_not_a_crash(
    judge_server: JudgeServer, cited: Rubric
) -> None:
    deep = '{"page": ' + "[" * 100_000
    judge_server.script(
        tool_reply("list_blocks", deep),
        tool_reply("set_grade", deep),
        tool_reply("set_grade", deep),
    )
    result = judge_at(judge_server, evidence="explore").grade(cited, transcript=long_run())
    assert result.verdict == "error" and "not JSON" in result.reason
    told = judge_server.requests[1]["messages"][-1]["content"]
    assert told == "The arguments of list_blocks are not a JSON object."


def test_the_tools_name_a_docent_run_s_blocks_by_transcript() -> None:
    """A run of several transcripts: blocks listed under each transcript's heading, read by
    their `T1B3` ids (however a judge spells them), an unknown id told the ids there are."""
    runs = Path(__file__).parents[1] / "data" / "runs"
    run = ExploredRun(read_transcript(json.loads((runs / "docent_run.json").read_text())), 0)
    listed = list_blocks(run).text.split("\n")
    assert listed[0].startswith("== Transcript T0: triage; Reads the ticket")
    assert listed[6].startswith('== Transcript T1: refunds; metadata {"agent": "refunds"}')
    assert listed[7] == (
        "[T1B0] system, 70 characters: You are Acme's refunds agent. Confirm with the user "
        "before any refund."
    )
    assert read_block(run, " [t1b08] ").text.startswith("[T1B8] assistant\nDone: $12.50")
    assert read_block(run, "T1B8").parts == ((13, 0, 45),)
    refused = read_block(run, "M3")
    assert not refused.valid
    assert refused.text == "No block 'M3': the run's blocks are T0B0 to T0B4, T1B0 to T1B8."

"""Citations through the judge, over a real socket to the scripted server: every verdict tool
takes them, rubriclib checks them against the blocks it rendered, and `citations: required`
holds a failing verdict to one verified citation."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion, tool_reply

from rubriclib import Rubric, load_rubric, render
from rubriclib.item import Item, read_transcript
from rubriclib.judging.judge import Judge
from rubriclib.judging.prompt.render import item_messages

RUN = [
    {"role": "user", "content": "Book me a flight to Paris."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "book_flight", "arguments": '{"to": "Paris"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "Booked: flight AF12 at 09:40."},
    {"role": "assistant", "content": "Done: AF12 to Paris at 09:40."},
]


def cite(block: str, quote: str) -> dict[str, str]:
    return {"block": block, "quote": quote}


def policy(rubric: Rubric, citations: str) -> Rubric:
    return rubric.model_copy(update={"citations": citations})


def test_a_verbatim_quote_from_the_output_is_verified_and_an_invented_one_not(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    cited = [cite("output", "the answer is 42"), cite("output", "the answer is 41")]
    judge_server.script(tool_reply("set_grade_pass", {"reason": "ok", "citations": cited}))
    result = judge.grade(rubric, "Well, the answer is 42.")
    first, second = result.details["citations"]
    assert first == {**cited[0], "status": "verified", "span": [6, 22]}
    assert second == {**cited[1], "status": "unverified"}
    tools = judge_server.requests[0]["tools"]
    for tool in tools:
        parameters = tool["function"]["parameters"]
        assert "citations" in parameters["properties"] and parameters["required"] == ["reason"]
    assert "Cite evidence in `citations`" in judge_server.requests[0]["messages"][0]["content"]


def test_no_citations_change_nothing(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(tool_reply("set_grade_fail", {"reason": "wrong"}))
    result = judge.grade(rubric, "broken")
    assert result.verdict == "fail" and "citations" not in result.details
    assert len(judge_server.requests) == 1


def test_a_score_cites_the_context_block(
    judge: Judge, judge_server: JudgeServer, scored: Rubric
) -> None:
    cited = [cite("context", "20 July 1969"), cite("context", "21 July")]
    judge_server.script(
        tool_reply("set_grade_score", {"reason": "r", "score": 5, "citations": cited})
    )
    result = judge.grade(scored, "1969", context="Apollo 11 landed on 20 July 1969.")
    assert [c["status"] for c in result.details["citations"]] == ["verified", "unverified"]
    user = judge_server.requests[0]["messages"][1]["content"]
    assert "## Source context [context]\n\n```\nApollo 11" in user


def test_a_transcript_block_is_verified_as_it_was_shown(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    cited = [
        cite("M3", "flight AF12 at 09:40"),
        cite("[M2]", 'tool call book_flight (c1): {"to": "Paris"}'),
        cite("M1", "flight AF12"),
    ]
    judge_server.script(tool_reply("set_grade_pass", {"reason": "r", "citations": cited}))
    result = judge.grade(rubric, transcript=RUN)
    statuses = [(c["block"], c["status"]) for c in result.details["citations"]]
    assert statuses == [("M3", "verified"), ("M2", "verified"), ("M1", "unverified")]
    assert result.details["citations"][2]["found_in"] == "M3"
    user = judge_server.requests[0]["messages"][1]["content"]
    assert (
        "[M3] tool result for book_flight (c1, answers the call in M2)\nBooked: flight AF12" in user
    )


def test_a_quote_from_a_cut_away_part_of_a_block_is_unverified(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    long_result = "START " + "filler " * 400 + "HIDDEN-DETAIL " + "filler " * 400 + "FINISH"
    run = [*RUN[:2], {"role": "tool", "tool_call_id": "c1", "content": long_result}, RUN[3]]
    judge = Judge(
        "judge-model", judge_server.url, SECRET_KEY, max_prompt_tokens=1200, evidence="whole"
    )
    cited = [cite("M3", "HIDDEN-DETAIL"), cite("M3", "START filler")]
    judge_server.script(tool_reply("set_grade_pass", {"reason": "r", "citations": cited}))
    result = judge.grade(rubric, transcript=run)
    assert result.details["transcript"]["cut"][0]["block"] == "M3"
    assert [c["status"] for c in result.details["citations"]] == ["unverified", "verified"]
    assert "HIDDEN-DETAIL" not in judge_server.requests[0]["messages"][1]["content"]


def test_a_pairwise_winner_cites_a_response_in_its_own_order(
    judge: Judge, judge_server: JudgeServer
) -> None:
    versus = load_rubric("preference")
    judge_server.script(
        tool_reply(
            "set_pairwise_winner", {"reason": "r", "winner": "A", "citations": [cite("A", "GOOD")]}
        ),
        tool_reply(
            "set_pairwise_winner", {"reason": "r", "winner": "B", "citations": [cite("A", "GOOD")]}
        ),
    )
    result = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    first, second = result.details["pairwise"]["orders"]
    assert first["citations"][0]["status"] == "verified"  # output first: A is the output
    assert second["citations"][0] == {
        "block": "A",
        "quote": "GOOD",
        "status": "unverified",
        "found_in": "B",  # baseline first: the output is B
    }


CHECKLIST = """\
---
name: cited-facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing.
requires: [context]
citations: CITATIONS
checklist:
  - id: invented
    question: Does the output state a date the context does not give?
    fail_if: yes
    requires: [context]
---
Call `set_grade_pass` or `set_grade_fail`.
"""


def test_a_checklist_answer_keeps_its_checked_citations(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rubric = load_rubric(str(write_file("cited.md", CHECKLIST.replace("CITATIONS", "optional"))))
    cited = [cite("output", "in 1970"), cite("context", "in 1970")]
    judge_server.script(tool_reply("answer", {"reason": "r", "answer": "yes", "citations": cited}))
    judge = Judge("judge-model", judge_server.url, SECRET_KEY, mode="checklist")
    result = judge.grade(rubric, "It was in 1970.", context="It was in 1969.")
    assert result.verdict == "fail"
    [entry] = result.details["checklist"]
    assert [c["status"] for c in entry["citations"]] == ["verified", "unverified"]
    assert entry["citations"][1]["found_in"] == "output"
    body = judge_server.requests[0]
    assert "citations" in body["tools"][0]["function"]["parameters"]["properties"]
    assert "Cite evidence in `citations`" in body["messages"][0]["content"]


def test_required_asks_once_for_a_citation_then_keeps_a_supported_fail(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    required = policy(rubric, "required")
    judge_server.script(
        tool_reply("set_grade_fail", {"reason": "wrong", "citations": [cite("output", "1970?")]}),
        tool_reply(
            "set_grade",  # the corrective turn forces the one verdict tool by name
            {"reason": "wrong", "verdict": "fail", "citations": [cite("output", "in 1970")]},
        ),
    )
    result = judge.grade(required, "It was in 1970.")
    assert result.verdict == "fail"
    assert result.details["citations"][0]["status"] == "verified"
    assert result.details["judge"]["corrected"] is True
    assert result.details["judge"]["correction"] == "verdict not supported by a verified citation"
    first, second = judge_server.requests
    assert second["messages"][1] == first["messages"][1]  # the same prompt, then the ask
    ask = second["messages"][-1]
    assert (
        ask["role"] == "user" and "`citations`: at least one quote copied exactly" in ask["content"]
    )
    assert "fail" not in ask["content"] and "1970" not in ask["content"]  # neutral
    schema = first["tools"][0]["function"]["parameters"]
    assert schema["required"] == ["reason", "citations"]
    assert schema["properties"]["citations"]["minItems"] == 1


def test_required_makes_an_unsupported_fail_an_error_after_one_turn(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        tool_reply("set_grade_fail", {"reason": "wrong"}),
        tool_reply(
            "set_grade",
            {"reason": "wrong", "verdict": "fail", "citations": [cite("output", "1971")]},
        ),
    )
    result = judge.grade(policy(rubric, "required"), "It was in 1970.")
    assert (result.verdict, result.passed, result.score) == ("error", False, None)
    assert result.reason == (
        "verdict not supported by a verified citation: the judge said fail with 1 "
        "citation(s), none verified, after a turn asking for one"
    )
    assert result.details["citations"][0]["status"] == "unverified"
    assert len(judge_server.requests) == 2


def test_required_holds_a_low_score_and_a_failing_checklist_answer_but_not_a_pass(
    judge: Judge,
    judge_server: JudgeServer,
    scored: Rubric,
    rubric: Rubric,
    write_file: Callable[..., Path],
) -> None:
    judge_server.script(
        tool_reply("set_grade_score", {"reason": "r", "score": 2, "citations": []}),
        tool_reply("set_grade_score", {"reason": "r", "score": 2}),
    )
    low = judge.grade(policy(scored, "required"), "x")
    assert low.verdict == "error" and "the judge said score 2 with no citation" in low.reason
    judge_server.script(tool_reply("set_grade_score", {"reason": "r", "score": 4}))
    assert judge.grade(policy(scored, "required"), "x").verdict == "pass"
    judge_server.script(tool_reply("set_grade_pass", {"reason": "fine"}))
    passed = judge.grade(policy(rubric, "required"), "x")
    assert passed.verdict == "pass" and passed.details["judge"]["attempts"] == 1
    rubric_file = write_file("req.md", CHECKLIST.replace("CITATIONS", "required"))
    judge_server.script(
        tool_reply("answer", {"reason": "r", "answer": "yes"}),
        tool_reply("answer", {"reason": "r", "answer": "no"}),
    )
    checklist = Judge("judge-model", judge_server.url, SECRET_KEY, mode="checklist")
    result = checklist.grade(load_rubric(str(rubric_file)), "In 1970.", context="In 1969.")
    assert "answer again" in judge_server.requests[-1]["messages"][-1]["content"]
    assert result.verdict == "error"  # asked for evidence, it answered the passing way
    [entry] = result.details["checklist"]
    assert entry["answer"] is None and entry["reason"] == (
        "verdict not supported by a verified citation: asked to cite evidence for its failing "
        "verdict, the judge said answer no instead"
    )


def test_required_after_a_reply_that_was_no_verdict_has_no_second_turn(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        Reply(body=completion(content="thinking")),
        tool_reply("set_grade", {"reason": "wrong", "verdict": "fail"}),
    )
    result = judge.grade(policy(rubric, "required"), "x")
    assert result.verdict == "error" and result.reason == (
        "verdict not supported by a verified citation: the judge said fail with no citation, "
        "and the one corrective turn was spent"
    )
    assert len(judge_server.requests) == 2


def test_required_never_lets_a_fail_turn_into_a_pass_when_asked_for_evidence(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        tool_reply("set_grade_fail", {"reason": "wrong"}),
        tool_reply("set_grade", {"reason": "fine after all", "verdict": "pass"}),
    )
    result = judge.grade(policy(rubric, "required"), "It was in 1970.")
    assert (result.verdict, result.passed) == ("error", False)
    assert result.reason == (
        "verdict not supported by a verified citation: asked to cite evidence for its failing "
        "verdict, the judge said pass instead"
    )


def test_a_quote_too_short_to_be_evidence_does_not_support_a_fail(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    short = {"reason": "r", "verdict": "fail", "citations": [cite("output", "It")]}
    judge_server.script(
        tool_reply("set_grade_fail", {"reason": "r", "citations": [cite("output", "was")]}),
        tool_reply("set_grade", short),
    )
    result = judge.grade(policy(rubric, "required"), "It was in 1970.")
    assert result.verdict == "error"
    assert result.details["citations"] == [
        {
            "block": "output",
            "quote": "It",
            "status": "unverified",
            "note": "the quote is too short to be evidence",
        }
    ]


def test_at_most_20_citations_are_checked_and_a_key_in_a_quote_is_hidden(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    many = [cite("output", f"quote {n}") for n in range(25)]
    many[0] = cite("output", f"the key is {SECRET_KEY}")
    judge_server.script(tool_reply("set_grade_pass", {"reason": "r", "citations": many}))
    result = judge.grade(rubric, "the answer")
    cited = result.details["citations"]
    assert len(cited) == 21
    assert cited[-1]["note"] == "5 more citation(s) left out: at most 20"
    assert SECRET_KEY not in str(result.model_dump()) and "[redacted]" in cited[0]["quote"]


def test_the_output_named_by_a_run_block_is_that_block_as_cut(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    answer = "BEGIN " + "words " * 600 + "HIDDEN-DETAIL " + "words " * 600 + "END"
    run = [*RUN[:3], {"role": "assistant", "content": answer}]
    judge = Judge(
        "judge-model", judge_server.url, SECRET_KEY, max_prompt_tokens=1200, evidence="whole"
    )
    cited = [
        cite("output", "HIDDEN-DETAIL"),
        cite("output", "BEGIN words"),
        cite("M4", "words END"),
    ]
    judge_server.script(tool_reply("set_grade_pass", {"reason": "r", "citations": cited}))
    result = judge.grade(rubric, transcript=run)
    assert [c["status"] for c in result.details["citations"]] == [
        "unverified",
        "verified",
        "verified",
    ]
    assert "HIDDEN-DETAIL" not in judge_server.requests[0]["messages"][1]["content"]


def test_a_letta_template_has_no_blocks_to_cite_so_no_citations(tmp_path: Path) -> None:
    from rubriclib.judging.asking.request import verdict_tools
    from rubriclib.rubrics.registry import rubric_from_prompt

    letta = rubric_from_prompt("Judge {submission}.", "g", "prompt:x", tmp_path, template="letta")
    assert letta.citations == "off"
    assert "citations" not in str(verdict_tools(letta, "required"))
    assert "citations" not in rubriclib_render(letta)


def rubriclib_render(rubric: Rubric) -> str:
    from rubriclib import render

    return str(render(rubric, "x", variables={"submission": "x"}))


def test_off_leaves_the_argument_out_and_ignores_citations(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        tool_reply("set_grade_fail", {"reason": "r", "citations": [cite("output", "x")]})
    )
    result = judge.grade(policy(rubric, "off"), "x")
    assert result.verdict == "fail" and "citations" not in result.details
    sent = judge_server.requests[0]
    assert "citations" not in str(sent["tools"]) and "citations" not in str(sent["messages"])


def test_the_cache_and_votes_keep_each_judgment_s_citations(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    cited: dict[str, Any] = {"reason": "r", "citations": [cite("output", "answer")]}
    judge_server.script(tool_reply("set_grade_pass", cited))
    cached = Judge("judge-model", judge_server.url, SECRET_KEY, cache=tmp_path / "cache")
    first = cached.grade(rubric, "the answer")
    again = cached.grade(rubric, "the answer")
    assert again.details["judge"]["cached"] is True
    assert again.details["citations"] == first.details["citations"]
    assert again.details["citations"][0]["status"] == "verified"
    judge_server.script(
        tool_reply("set_grade_pass", cited),
        tool_reply("set_grade_pass", {"reason": "r"}),
    )
    voting = Judge("judge-model", judge_server.url, SECRET_KEY, votes=2, temperature=0.7)
    result = voting.grade(rubric, "the answer")
    first_vote, second_vote = result.details["votes"]["citations"]
    assert first_vote[0]["status"] == "verified" and second_vote == []


@pytest.mark.parametrize("value", ["always", "yes", 1])
def test_a_bad_citations_policy_is_reported_with_its_field(
    value: Any, write_file: Callable[..., Path]
) -> None:
    from rubriclib import RubricError

    path = write_file("bad.md", CHECKLIST.replace("CITATIONS", str(value)))
    with pytest.raises(RubricError) as raised:
        load_rubric(str(path))
    assert "bad.md:7: citations: " in str(raised.value)
    assert "should be 'optional', 'required' or 'off'" in str(raised.value)


def test_the_policy_counts_in_the_digest_unless_it_is_the_default(
    write_file: Callable[..., Path],
) -> None:
    digests = {
        value: load_rubric(
            str(write_file(f"{value}.md", CHECKLIST.replace("CITATIONS", value)))
        ).digest
        for value in ("optional", "required", "off")
    }
    assert len(set(digests.values())) == 3
    plain = CHECKLIST.replace("citations: CITATIONS\n", "")
    assert load_rubric(str(write_file("plain.md", plain))).digest == digests["optional"]


def test_the_docs_example_prints_what_the_docs_say(
    endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from conftest import snippet

    monkeypatch.setenv("RUBRICLIB_MODEL", "judge-model")
    endpoint.responder = None
    cited = [cite("output", "landed in 1970"), cite("context", "landed in 1970")]
    endpoint.script(tool_reply("set_grade_fail", {"reason": "wrong year", "citations": cited}))
    exec(snippet("citations"), {})  # noqa: S102 - the docs' own example, as written
    assert capsys.readouterr().out == snippet("citations-output")


def test_a_panel_keeps_each_member_s_citations(rubric: Rubric) -> None:
    from rubriclib import Panel

    with JudgeServer() as first, JudgeServer() as second:
        first.script(
            tool_reply("set_grade_pass", {"reason": "r", "citations": [cite("output", "fine")]})
        )
        second.script(tool_reply("set_grade_pass", {"reason": "r"}))
        judges = [
            Judge(f"m{n}", server.url, SECRET_KEY) for n, server in enumerate((first, second))
        ]
        result = Panel(judges, "majority").grade(rubric, "all fine")
    cited, bare = result.details["panel"]["judges"]
    assert cited["citations"][0]["status"] == "verified" and "citations" not in bare


def test_checklist_votes_keep_each_vote_s_item_citations(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rubric = load_rubric(str(write_file("cited.md", CHECKLIST.replace("CITATIONS", "optional"))))
    cited = [cite("output", "in 1970")]
    judge_server.script(
        tool_reply("answer", {"reason": "r", "answer": "yes", "citations": cited}),
        tool_reply("answer", {"reason": "r", "answer": "yes"}),
    )
    judge = Judge("judge-model", judge_server.url, SECRET_KEY, mode="checklist", votes=2)
    result = judge.grade(rubric, "It was in 1970.", context="It was in 1969.")
    first, second = result.details["votes"]["citations"]
    assert [(c["by"], c["status"]) for c in first] == [("item invented", "verified")]
    assert second == []


def test_a_pairwise_panel_keeps_each_member_s_order_citations() -> None:
    from rubriclib import Panel
    from rubriclib.judging.citations import given_citations

    versus = load_rubric("preference")
    winner = {"reason": "r", "winner": "A", "citations": [cite("A", "GOOD answer")]}
    with JudgeServer() as first, JudgeServer() as second:
        for server in (first, second):
            server.script(
                tool_reply("set_pairwise_winner", winner), tool_reply("set_pairwise_winner", winner)
            )
        judges = [
            Judge(f"m{n}", server.url, SECRET_KEY) for n, server in enumerate((first, second))
        ]
        result = Panel(judges, "majority").grade(versus, "GOOD answer", input="q", baseline="meh")
    found = given_citations(result.details)
    assert [(c["by"], c["status"], c["request"]) for c in found] == [
        ("m0, output-first", "verified", 0),
        ("m0, baseline-first", "unverified", 1),
        ("m1, output-first", "verified", 0),
        ("m1, baseline-first", "unverified", 1),
    ]


def test_a_judge_citing_the_nearest_bracketed_id_before_a_tool_result_quote_is_verified(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    run = json.loads((Path(__file__).parents[1] / "data" / "runs" / "reused_ids.json").read_text())
    quotes = [
        "payment amount does not add up",
        '"credit": 30',
        '"fare": 265',
        '"date": "Wednesday"',
    ]
    user = item_messages(rubric, Item(output="", transcript=run))[0][1]["content"]

    def nearest_id(quote: str) -> str:  # the last bracketed id before the quote
        return re.findall(r"\[([^\]]+)\]", user[: user.index(quote)])[-1]

    cited = [cite(nearest_id(quote), quote) for quote in quotes]
    assert [c["block"] for c in cited] == ["M13", "M7", "M6", "M4"]
    judge_server.script(tool_reply("set_grade_fail", {"reason": "r", "citations": cited}))
    result = judge.grade(rubric, transcript=run)
    assert [c["status"] for c in result.details["citations"]] == ["verified"] * 4


RUN_CHECKLIST = """\
---
name: run-done
version: 1.0.0
scale: pass-fail
description: Whether an agent run did what the user asked.
requires: [transcript]
citations: optional
checklist:
  - {id: undone, question: Is every part of the request done?, fail_if: no}
---
Did the run do what the user asked, as its tool results show?
"""
DOCENT_RUN = Path(__file__).parents[1] / "data" / "runs" / "docent_run.json"


@pytest.mark.parametrize(
    "settings",
    [
        {"evidence": "whole"},
        {"evidence": "explore"},
        {"mode": "checklist"},
        {"mode": "checklist", "answers": "one-call"},
    ],
)
@pytest.mark.parametrize(
    ("run", "ids"),
    [
        (RUN, "(M1, M2... for run blocks;"),
        (json.loads(DOCENT_RUN.read_text()), "(T0B0, T0B1... T1B0... for run blocks;"),
    ],
)
def test_the_system_message_names_the_ids_the_run_s_blocks_have(
    judge_server: JudgeServer,
    write_file: Callable[..., Path],
    settings: dict[str, Any],
    run: Any,
    ids: str,
) -> None:
    """A run of several transcripts (Docent's) is cited by `T1B3`, so the system message says
    so; a plain run's `M1, M2...` is as it was (tests/judging/test_request_bytes.py)."""
    rubric = load_rubric(str(write_file("run-done.md", RUN_CHECKLIST)))
    judge_server.responder = lambda body: Reply(body=completion(content="I cannot tell."))
    judge = Judge("m", judge_server.url, SECRET_KEY, timeout=5.0, backoff_base=0.001, **settings)
    judge.grade(rubric, transcript=run)
    system = judge_server.requests[0]["messages"][0]["content"]
    assert f"the id in brackets at that block's head {ids}" in system
    other = "T0B0" if ids.startswith("(M1") else "M1"
    assert other not in system
    if "mode" not in settings:  # render shows what a holistic judgment sends
        shown = render(rubric, "", transcript=read_transcript(run), evidence=settings["evidence"])
        assert shown[0]["content"] == system

"""A whole checklist answered in one call (`answers="one-call"`): one request per vote, read
into each item's answer and combined as per-item answers are, over real HTTP to the scripted
server; its corrective turns, citations, votes, cache, CLI flag, eval files, --resume and
offline batch files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion, tool_reply

from rubriclib import Rubric, load_rubric
from rubriclib.cli import main
from rubriclib.item import Item
from rubriclib.judging.asking.one_call import CHECKLIST_TOOL, OneCallAsking, one_call_requests
from rubriclib.judging.judge import Judge

FACTS = """\
---
name: grounded-facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing and answers the question.
requires: [input, context]
citations: off
checklist:
  - id: invented
    question: Does the output state a number, date or name that the context does not give?
    fail_if: yes
    requires: [context]
  - id: answers
    question: Does the output answer the question the input asks?
    fail_if: no
    requires: [input]
---
# Grounded facts

Call `set_grade_pass` or `set_grade_fail`.
"""

SCORED = """\
---
name: scored-facts
version: 1.0.0
scale: 1-5
pass_threshold: 4
description: How well the output sticks to the facts.
checklist:
  - id: invented
    question: Does the output state a number the input does not give?
    fail_if: "yes"
    weight: 3
  - id: polite
    question: Is the output polite?
    fail_if: "no"
---
Call `set_grade_score`.
"""

FAILING = {"invented": "yes", "answers": "no", "polite": "no"}
"""The answer that fails each test item."""


def answers_for(candidate: str, ids: list[str]) -> dict[str, str]:
    """`bad:ID` in the candidate fails item ID; every other item passes."""
    flip = {"yes": "no", "no": "yes"}
    return {i: FAILING[i] if f"bad:{i}" in candidate else flip[FAILING[i]] for i in ids}


def one_call_responder(reason: str = "r") -> Callable[[dict[str, Any]], Reply]:
    """Answer the one call from the candidate (`answers_for`); per-item requests (the `answer`
    tool) likewise, each with the same reason, so both modes can be compared."""

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        candidate = user.split("## Candidate output [output]")[1]
        tool = body["tools"][0]["function"]
        if tool["name"] == "answer":
            item = next(i for i in FAILING if _asks(user, i))
            answer = answers_for(candidate, [item])[item]
            return tool_reply("answer", {"reason": reason, "answer": answer})
        ids = [key for key in tool["parameters"]["required"] if key in FAILING]
        return tool_reply(CHECKLIST_TOOL, {"reason": reason} | answers_for(candidate, ids))

    return respond


QUESTIONS = {
    "invented": "Does the output state a number",
    "answers": "Does the output answer the question",
    "polite": "Is the output polite?",
}


def _asks(user: str, item: str) -> bool:
    return QUESTIONS[item] in user


@pytest.fixture
def facts(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("grounded-facts.md", FACTS)))


@pytest.fixture
def scored_facts(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("scored-facts.md", SCORED)))


@pytest.fixture
def server(judge_server: JudgeServer) -> JudgeServer:
    judge_server.responder = one_call_responder()
    return judge_server


def one_call_judge(server: JudgeServer, **options: Any) -> Judge:
    settings: dict[str, Any] = {"timeout": 5.0, "backoff_base": 0.001, "backoff_max": 0.01}
    settings |= {"mode": "checklist", "answers": "one-call"}
    return Judge("judge-model", server.url, SECRET_KEY, **(settings | options))


def test_the_whole_checklist_is_one_request_with_one_answer_per_item(
    server: JudgeServer, facts: Rubric
) -> None:
    result = one_call_judge(server).grade(facts, "1969.", input="When?", context="In 1969.")
    assert (result.verdict, result.reason) == ("pass", "all 2 checklist items satisfied")
    assert len(server.requests) == 1
    body = server.requests[0]
    assert body["tool_choice"] == {"type": "function", "function": {"name": CHECKLIST_TOOL}}
    parameters = body["tools"][0]["function"]["parameters"]
    assert list(parameters["properties"]) == ["reason", "invented", "answers"]  # citations off
    assert parameters["required"] == ["reason", "invented", "answers"]
    assert parameters["properties"]["invented"] == {"type": "string", "enum": ["yes", "no"]}
    user = body["messages"][1]["content"]
    assert "- `invented`: Does the output state" in user and "- `answers`: Does" in user
    assert user.count("## Candidate output [output]") == 1  # the candidate is sent once
    assert "## Task input [input]" in user and "## Source context [context]" in user
    assert result.details.judge.answers == "one-call" and result.details.judge.attempts == 1
    assert [(e.id, e.answer, e.attempts) for e in result.details.checklist or []] == [
        ("invented", "no", 1),
        ("answers", "yes", 1),
    ]


@pytest.mark.parametrize("candidate", ["fine", "bad:invented", "bad:answers bad:invented"])
def test_the_verdict_and_items_are_those_of_per_item_answers(
    server: JudgeServer, facts: Rubric, candidate: str
) -> None:
    one = one_call_judge(server).grade(facts, candidate, input="q", context="c")
    assert len(server.requests) == 1
    each = one_call_judge(server, answers="tool").grade(facts, candidate, input="q", context="c")
    assert len(server.requests) == 3  # one per item
    assert (one.verdict, one.reason, one.score) == (each.verdict, each.reason, each.score)
    assert one.details.checklist == each.details.checklist
    assert "answers" not in each.details.judge  # per-item results are written as before


def test_a_1_5_rubric_scores_the_weighted_share_as_per_item_answers_do(
    server: JudgeServer, scored_facts: Rubric
) -> None:
    judge = one_call_judge(server)
    polite = judge.grade(scored_facts, "bad:polite")
    assert (polite.verdict, polite.details.raw_score, polite.score) == ("pass", 4, 0.75)
    invented = judge.grade(scored_facts, "bad:invented")
    assert (invented.verdict, invented.details.raw_score) == ("fail", 2)
    tools = [body["tools"][0]["function"]["parameters"] for body in server.requests]
    assert list(tools[0]["properties"]) == [  # citations optional by default
        "reason",
        "citations",
        "invented_citations",
        "invented",
        "polite_citations",
        "polite",
    ]
    assert tools[0]["required"] == ["reason", "invented", "polite"]


def call(arguments: dict[str, Any]) -> Reply:
    return tool_reply(CHECKLIST_TOOL, arguments)


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"reason": "r", "invented": "no"}, "no answer for answers"),
        ({"reason": "r", "invented": "no", "answers": "maybe"}, "neither yes nor no for answers"),
        (
            {"reason": "r", "invented": "no", "answers": "yes", "tone": "yes"},
            "tone is not a checklist item",
        ),
    ],
)
def test_a_wrong_reply_gets_one_corrective_turn_naming_it_then_is_an_error(
    judge_server: JudgeServer, facts: Rubric, arguments: dict[str, Any], named: str
) -> None:
    judge_server.script(call(arguments), call(arguments))
    result = one_call_judge(judge_server).grade(facts, "fine", input="q", context="c")
    assert (result.verdict, result.passed) == ("error", False)
    assert result.reason == f"no valid verdict after a corrective turn: {CHECKLIST_TOOL}: {named}"
    assert len(judge_server.requests) == 2
    turn = judge_server.requests[1]["messages"][-1]["content"]
    assert turn == (
        f"Please give your answers now as one tool call: call `{CHECKLIST_TOOL}` with a short "
        f"`reason` and each of invented, answers answered yes or no. Your call had {named}."
    )
    assert "pass" not in turn and "fail" not in turn  # neutral about the verdict
    assert [(e.id, e.answer) for e in result.details.checklist or []] == [
        ("invented", None),
        ("answers", None),
    ]
    assert result.details.judge.answers == "one-call" and result.details.judge.corrected


def test_a_corrected_reply_is_read(judge_server: JudgeServer, facts: Rubric) -> None:
    judge_server.script(
        Reply(body=completion(content="invented: no, answers: yes")),
        call({"reason": "r", "invented": "no", "answers": "no"}),
    )
    result = one_call_judge(judge_server).grade(facts, "fine", input="q", context="c")
    assert result.verdict == "fail" and result.details.judge.corrected
    turn = judge_server.requests[1]["messages"][-1]["content"]
    assert turn.endswith("answered yes or no.")  # no call was read: nothing else to name


CITED = FACTS.replace("citations: off", "citations: required")


def test_citations_required_a_failing_item_must_carry_a_verified_citation(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rubric = load_rubric(str(write_file("cited.md", CITED)))
    quote = [{"block": "output", "quote": "in 1970"}]
    bare = {"reason": "r", "citations": quote, "invented": "yes", "answers": "yes"}
    judge_server.script(call(bare), call(bare | {"invented_citations": quote}))
    result = one_call_judge(judge_server).grade(rubric, "in 1970", input="q", context="1969")
    assert result.verdict == "fail"
    turn = judge_server.requests[1]["messages"][-1]["content"]
    assert turn.startswith("Please give your answers again as one tool call, with ")
    assert "`invented_citations`" in turn and "`answers_citations`" not in turn
    invented = (result.details.checklist or [])[0]
    assert [c.status for c in invented.citations or []] == ["verified"]
    assert [c.status for c in result.details.citations or []] == ["verified"]
    parameters = judge_server.requests[0]["tools"][0]["function"]["parameters"]
    assert parameters["required"] == ["reason", "citations", "invented", "answers"]
    judge_server.script(call(bare), call(bare))
    unsupported = one_call_judge(judge_server).grade(rubric, "in 1970", input="q", context="1")
    assert unsupported.verdict == "error"
    assert unsupported.reason.startswith("verdict not supported by a verified citation")


def test_asked_for_evidence_a_judge_that_flips_an_item_instead_gets_an_error(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rubric = load_rubric(str(write_file("cited.md", CITED)))
    quote = [{"block": "output", "quote": "in 1970"}]
    both = {"reason": "r", "citations": quote, "invented": "yes", "answers": "no"}
    flipped = both | {"answers": "yes", "invented_citations": quote}
    judge_server.script(call(both | {"invented_citations": quote}), call(flipped))
    result = one_call_judge(judge_server).grade(rubric, "in 1970", input="q", context="1969")
    assert result.verdict == "error"
    assert "`answers_citations`" in judge_server.requests[1]["messages"][-1]["content"]
    assert result.reason == (
        "verdict not supported by a verified citation: asked to cite evidence for its failing "
        "verdict, the judge said answers invented yes, answers yes instead"
    )


def test_an_item_needing_a_field_the_row_lacks_is_not_judged_as_per_item(
    server: JudgeServer, facts: Rubric
) -> None:
    one = one_call_judge(server).grade(facts, "fine", input="q")
    each = one_call_judge(server, answers="tool").grade(facts, "fine", input="q")
    assert server.requests == []
    assert (one.verdict, one.reason) == (each.verdict, each.reason)
    assert one.reason == "not judged: no context (the rubric grounded-facts requires it)"


def test_the_prompt_shows_the_fields_its_items_need(facts: Rubric) -> None:
    narrowed = facts.model_copy(
        update={"checklist": [facts.checklist[0]]}
    )  # only `invented`, which needs the context alone
    [(prompt, _)] = one_call_requests(narrowed, Item(output="out", input="q", context="c"), None)
    assert "## Source context [context]" in prompt.user
    assert "## Task input [input]" not in prompt.user
    assert set(prompt.blocks) == {"context", "output"}


def test_an_item_named_like_a_property_of_the_tool_is_refused(
    server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    text = FACTS.replace("id: answers", "id: reason")
    rubric = load_rubric(str(write_file("odd.md", text)))
    result = one_call_judge(server).grade(rubric, "fine", input="q", context="c")
    assert result.verdict == "error" and server.requests == []
    assert result.reason.startswith(
        "not judged: answers='one-call': the rubric grounded-facts has a checklist item named "
        "reason, a property the one-call tool already has"
    )


def test_python_names_the_argument_that_asked_for_a_checklist_the_rubric_lacks(
    server: JudgeServer, rubric: Rubric
) -> None:
    one_call = one_call_judge(server).grade(rubric, "fine")
    assert one_call.verdict == "error" and server.requests == []
    assert one_call.reason.startswith(
        f"not judged: answers='one-call': the rubric {rubric.name} has no checklist"
    )
    per_item = one_call_judge(server, answers="tool").grade(rubric, "fine")
    assert per_item.reason.startswith(f"not judged: mode='checklist': the rubric {rubric.name}")


def test_each_vote_is_one_request(server: JudgeServer, facts: Rubric) -> None:
    result = one_call_judge(server, votes=3, temperature=0.7).grade(facts, "ok", "q", "c")
    assert result.verdict == "pass" and result.details.votes is not None
    assert result.details.votes.cast == 2 and len(server.requests) == 2  # 2 of 3 agree
    assert result.details.judge.answers == "one-call" and result.details.judge.attempts == 2
    per_item = one_call_judge(server, votes=3, temperature=0.7, answers="tool")
    per_item.grade(facts, "ok", "q", "c")
    assert len(server.requests) == 2 + 4  # 2 votes x 2 items


def test_the_cache_answers_a_rerun_and_keeps_the_modes_apart(
    server: JudgeServer, facts: Rubric, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    first = one_call_judge(server, cache=cache).grade(facts, "bad:answers", "q", "c")
    again = one_call_judge(server, cache=cache).grade(facts, "bad:answers", "q", "c")
    assert len(server.requests) == 1
    assert (again.verdict, again.reason) == (first.verdict, first.reason)
    assert again.details.judge.cached and [e.cached for e in again.details.checklist or []] == [
        True,
        True,
    ]
    assert again.details.judge.answers == "one-call"
    one_call_judge(server, cache=cache, answers="tool").grade(facts, "bad:answers", "q", "c")
    assert len(server.requests) == 3  # per-item requests have their own keys


def test_the_asking_reads_only_yes_or_no(facts: Rubric) -> None:
    asking = OneCallAsking(facts, "instructions")
    reply = completion([(CHECKLIST_TOOL, {"reason": "r", "invented": True, "answers": "yes"})])
    assert asking.read(reply, "named") == f"{CHECKLIST_TOOL}: neither yes nor no for invented"


def cli(*arguments: str) -> Any:
    return CliRunner().invoke(main, list(arguments))


@pytest.fixture
def endpoint(server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    return server


def test_the_command_line_flag_implies_checklist_mode(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    facts = str(write_file("facts.md", FACTS))
    asked = ["--input", "q", "--context", "c", "--no-cache", "--json"]
    result = cli(
        "judge", facts, "--output", "bad:invented", "--checklist-answers", "one-call", *asked
    )
    assert result.exit_code == 1, result.output
    details = json.loads(result.output)["details"]
    assert [(e["id"], e["answer"]) for e in details["checklist"]] == [
        ("invented", "yes"),
        ("answers", "yes"),
    ]
    assert details["judge"]["answers"] == "one-call" and len(endpoint.requests) == 1
    help_text = cli("judge", "--help").output
    assert "one-call (every item in one call" in " ".join(help_text.split())


EVAL = """\
name: facts
judge: {model: judge-model}
rows:
  - {id: good, input: q, context: c, output: "fine"}
  - {id: bad, input: q, context: c, output: "bad:answers"}
graders:
  - name: facts
    rubric: ./facts.md
"""


def test_an_eval_file_asks_for_one_call_and_resume_keeps_each_mode_apart(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("facts.md", FACTS)
    marked = write_file("marked.yaml", EVAL + "    answers: one-call\n")
    out = tmp_path / "out.jsonl"
    assert cli("eval", str(marked), "--out", str(out), "--no-cache").exit_code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["row"]: line["verdict"] for line in lines} == {"good": "pass", "bad": "fail"}
    assert len(endpoint.requests) == 2  # one per row
    kept = cli("eval", str(marked), "--out", str(out), "--resume", "--no-cache")
    assert kept.exit_code == 0 and len(endpoint.requests) == 2  # all kept
    plain = write_file("plain.yaml", EVAL)
    per_item = ["--out", str(out), "--resume", "--no-cache", "--checklist"]
    assert cli("eval", str(plain), *per_item).exit_code == 0
    assert len(endpoint.requests) == 2 + 4  # a one-call result is not an item-by-item one
    back = cli("eval", str(plain), *per_item[:-1], "--checklist-answers", "one-call")
    assert back.exit_code == 0 and len(endpoint.requests) == 2 + 4 + 2


def test_a_bad_value_in_an_eval_file_is_named_at_its_line(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    write_file("facts.md", FACTS)
    marked = write_file("marked.yaml", EVAL + "    answers: one_call\n")
    result = cli("eval", str(marked), "--no-cache")
    assert result.exit_code == 2
    assert f"{marked}:9: graders[0].answers:" in result.output
    assert "'one-call'" in result.output and endpoint.requests == []


def test_an_eval_grader_without_a_checklist_is_refused_at_the_key(
    endpoint: JudgeServer, write_file: Callable[..., Path], library: Path
) -> None:
    marked = write_file("kw.yaml", EVAL.replace("./facts.md", "keywords"))
    marked.write_text(marked.read_text() + "    answers: one-call\n")
    result = cli("eval", str(marked), "--no-cache")
    assert result.exit_code == 2
    assert f"{marked}:9: graders[0].answers: the rubric keywords has no" in result.output


def test_offline_batch_files_carry_one_request_per_row(
    write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("facts.md", FACTS)
    eval_file = write_file("eval.yaml", EVAL)
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    flags = ["--checklist-answers", "one-call"]
    prepared = cli("batch", "prepare", str(eval_file), "--to", str(to), *flags)
    assert prepared.exit_code == 0, prepared.output
    requests = [json.loads(line) for line in to.read_text().splitlines()]
    assert len(requests) == 2
    assert all(r["body"]["tools"][0]["function"]["name"] == CHECKLIST_TOOL for r in requests)
    respond = one_call_responder()
    answers = [
        {
            "custom_id": r["custom_id"],
            "response": {"status_code": 200, "body": respond(r["body"]).body},
        }
        for r in requests
    ]
    output.write_text("".join(json.dumps(line) + "\n" for line in answers))
    collected = cli(
        "batch", "collect", str(eval_file), "--from", str(output), "--out", str(results), *flags
    )
    assert collected.exit_code == 0, collected.output
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(line["row"], line["verdict"]) for line in lines] == [("good", "pass"), ("bad", "fail")]
    assert all(line["result"]["details"]["judge"]["answers"] == "one-call" for line in lines)


def test_the_command_line_refusal_names_the_flag_typed(
    endpoint: JudgeServer, write_file: Callable[..., Path], library: Path
) -> None:
    no_checklist = "the rubric keywords has no checklist: checklist mode asks"
    for command in (["judge", "keywords", "--output", "x"], ["test-goldens", "keywords"]):
        for typed in (["--checklist-answers", "one-call"], ["--checklist-answers", "probability"]):
            refused = cli(*command, *typed)
            assert refused.exit_code == 2, refused.output
            assert refused.output.startswith(f"rubriclib: error: {' '.join(typed)}: {no_checklist}")
            assert "--checklist:" not in refused.output
    eval_file = write_file("kw.yaml", EVAL.replace("./facts.md", "keywords"))
    for command in (
        ["eval", str(eval_file)],
        ["batch", "prepare", str(eval_file), "--to", str(eval_file) + ".r"],
    ):
        refused = cli(*command, "--checklist-answers", "one-call")
        assert refused.exit_code == 2, refused.output
        assert f"graders.facts: --checklist-answers one-call: {no_checklist}" in refused.output
        assert "--checklist:" not in refused.output
    assert cli("eval", str(eval_file), "--checklist").output.count("--checklist: the rubric") == 1
    assert endpoint.requests == []


def test_an_item_named_like_the_tools_property_is_refused_before_any_request(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    odd = str(write_file("facts.md", FACTS.replace("id: answers", "id: reason")))
    per_item = ["--input", "q", "--context", "c", "--no-cache", "--checklist"]
    assert cli("judge", odd, "--output", "x", *per_item).exit_code == 0  # asked one by one
    one_call = ["--checklist-answers", "one-call"]
    refused = cli("judge", odd, "--output", "x", "--input", "q", "--context", "c", *one_call)
    assert refused.exit_code == 2, refused.output
    assert refused.output.startswith(
        "rubriclib: error: --checklist-answers one-call: the rubric grounded-facts has a "
        "checklist item named reason"
    )
    marked = write_file("marked.yaml", EVAL + "    answers: one-call\n")
    in_file = cli("eval", str(marked), "--no-cache")
    assert in_file.exit_code == 2
    assert f"{marked}:9: graders[0].answers: the rubric grounded-facts has a " in in_file.output
    from_flag = cli("eval", str(write_file("plain.yaml", EVAL)), *one_call)
    assert from_flag.exit_code == 2
    assert "graders.facts: --checklist-answers one-call: the rubric grounded-facts has" in (
        from_flag.output
    )
    assert len(endpoint.requests) == 2  # the items asked one by one only


@pytest.mark.parametrize(
    ("judge", "grader", "where"),
    [
        ("{model: judge-model, answers: one-call}", "", "2: judge.answers"),
        (
            "{model: judge-model}",
            "    judge: {answers: one-call}\n",
            "9: graders[0].judge",
        ),
        ("{model: judge-model, mode: checklist}", "", "2: judge.mode"),
    ],
)
def test_an_eval_file_refusal_is_named_at_the_judge_key_that_asked(
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    library: Path,
    judge: str,
    grader: str,
    where: str,
) -> None:
    text = EVAL.replace("./facts.md", "keywords").replace("{model: judge-model}", judge)
    marked = write_file("kw.yaml", text + grader)
    refused = cli("eval", str(marked), "--no-cache")
    assert refused.exit_code == 2
    assert f"{marked}:{where}" in refused.output, refused.output
    assert "the rubric keywords has no checklist" in refused.output and endpoint.requests == []

"""Checklist judging: each checklist item asked on its own (one `answer` tool), the verdict
computed from the answers, over real HTTP to the scripted server; through the cache, votes,
the CLI flags, eval files and offline batch files."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply

from rubriclib import Rubric, load_rubric
from rubriclib.cli import main
from rubriclib.judging.judge import Judge

PASS_FAIL = """\
---
name: grounded-facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing and answers the question.
requires: [input, context]
goldens:
  - {name: fine, input: "When?", context: "In 1969.", output: "1969.", expected: pass}
  - {name: invents, input: "When?", context: "In 1969.", output: "bad:invented", expected: fail}
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

FAIL_ANSWERS = {
    "Does the output state a number, date or name": ("invented", "yes"),
    "Does the output answer the question": ("answers", "no"),
    "Does the output state a number the input": ("invented", "yes"),
    "Is the output polite?": ("polite", "no"),
}
"""Each test question's item id and the answer that fails it."""


def item_responder() -> Callable[[dict[str, Any]], Reply]:
    """Answer each item from the candidate: `bad:ID` gets the answer that fails item ID,
    `text:ID` a reply without a tool call, `down:ID` an HTTP 500; else the passing answer."""

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        candidate = user.split("## Candidate output [output]")[1]
        item, failing = next(v for q, v in FAIL_ANSWERS.items() if q in user)
        if f"down:{item}" in candidate:
            return error_reply(500, "item endpoint down")
        if f"text:{item}" in candidate and len(body["messages"]) == 2:
            return Reply(body=completion(content="Hmm, let me think."))
        bad = f"bad:{item}" in candidate
        answer = failing if bad else {"yes": "no", "no": "yes"}[failing]
        return tool_reply("answer", {"reason": f"{item} says {answer}", "answer": answer})

    return respond


@pytest.fixture
def facts(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("grounded-facts.md", PASS_FAIL)))


@pytest.fixture
def scored_facts(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("scored-facts.md", SCORED)))


@pytest.fixture
def server(judge_server: JudgeServer) -> JudgeServer:
    judge_server.responder = item_responder()
    return judge_server


def checklist_judge(server: JudgeServer, **options: Any) -> Judge:
    settings: dict[str, Any] = {"timeout": 5.0, "backoff_base": 0.001, "backoff_max": 0.01}
    return Judge("judge-model", server.url, SECRET_KEY, mode="checklist", **(settings | options))


def test_each_item_is_asked_on_its_own_with_only_the_answer_tool(
    server: JudgeServer, facts: Rubric
) -> None:
    result = checklist_judge(server).grade(facts, "1969.", input="When?", context="In 1969.")
    assert (result.verdict, result.passed, result.score) == ("pass", True, 1.0)
    assert result.reason == "all 2 checklist items satisfied"
    assert len(server.requests) == 2
    by_item = {}
    for body in server.requests:
        assert [tool["function"]["name"] for tool in body["tools"]] == ["answer"]
        parameters = body["tools"][0]["function"]["parameters"]
        assert list(parameters["properties"]) == ["reason", "citations", "answer"]
        assert parameters["required"] == ["reason", "answer"]
        assert parameters["properties"]["answer"]["enum"] == ["yes", "no"]
        assert body["tool_choice"] == {"type": "function", "function": {"name": "answer"}}
        system, user = (message["content"] for message in body["messages"])
        assert "`answer`" in system and "set_grade" not in system
        assert "set_grade" not in user  # the rubric's body is not sent, only its description
        assert "Whether the output invents nothing" in user
        by_item["context" if "## Source context [context]" in user else "input"] = user
    assert (
        "```\nIn 1969.\n```" in by_item["context"]
        and "## Task input [input]" not in by_item["context"]
    )
    assert (
        "```\nWhen?\n```" in by_item["input"]
        and "## Source context [context]" not in by_item["input"]
    )
    assert all(text.rstrip().endswith("with `answer`.") for text in by_item.values())
    assert [entry["id"] for entry in result.details["checklist"]] == ["invented", "answers"]
    assert result.details["checklist"][0] == {
        "id": "invented",
        "answer": "no",
        "reason": "invented says no",
        "attempts": 1,
        "cached": False,
    }
    judge_info = result.details["judge"]
    assert judge_info["attempts"] == 2 and judge_info["mode"] == "named"
    assert judge_info["usage"] == {"prompt_tokens": 22, "completion_tokens": 14}


def test_a_failed_item_fails_the_output_and_the_reason_names_it(
    server: JudgeServer, facts: Rubric
) -> None:
    result = checklist_judge(server).grade(facts, "bad:invented", input="q", context="c")
    assert (result.verdict, result.passed) == ("fail", False)
    assert result.reason == (
        "1 of 2 checklist items failed; failed: invented (answered yes: invented says yes)"
    )
    assert [entry["answer"] for entry in result.details["checklist"]] == ["yes", "yes"]


def test_a_1_5_score_is_the_weighted_share_of_satisfied_items(
    server: JudgeServer, scored_facts: Rubric
) -> None:
    judge = checklist_judge(server)
    polite_fails = judge.grade(scored_facts, "bad:polite")  # 3 of 4 weight: 1 + 4 x 0.75 = 4
    assert (polite_fails.verdict, polite_fails.details["raw_score"]) == ("pass", 4)
    assert polite_fails.score == 0.75 and "polite (answered no" in polite_fails.reason
    invented = judge.grade(scored_facts, "bad:invented")  # 1 of 4 weight: 1 + 4 x 0.25 = 2
    assert (invented.verdict, invented.details["raw_score"], invented.score) == ("fail", 2, 0.25)


def test_an_item_that_errors_makes_the_judgment_an_error_never_a_pass(
    server: JudgeServer, facts: Rubric
) -> None:
    result = checklist_judge(server, max_retries=1).grade(facts, "down:answers", "q", "c")
    assert (result.verdict, result.passed, result.score) == ("error", False, None)
    assert result.reason.startswith("no answer from 1 of 2 checklist items: answers (judge ")
    assert "item endpoint down" in result.reason
    answers = {entry["id"]: entry for entry in result.details["checklist"]}
    assert answers["answers"]["answer"] is None and answers["answers"]["attempts"] == 2
    assert answers["invented"]["answer"] == "no"
    assert result.details["judge"]["attempts"] == 3  # 1 + the failing item's 2


def test_an_item_answered_in_text_gets_one_corrective_turn(
    server: JudgeServer, facts: Rubric
) -> None:
    result = checklist_judge(server).grade(facts, "text:invented", input="q", context="c")
    assert result.verdict == "pass"
    corrected = [body for body in server.requests if len(body["messages"]) > 2]
    assert len(corrected) == 1
    assert corrected[0]["messages"][-1]["content"] == (
        "Please give your answer now as one tool call: call `answer` with a short `reason` "
        "and `answer` yes or no."
    )
    assert result.details["checklist"][0]["attempts"] == 2
    assert result.details["judge"]["corrected"] is True


def test_items_of_one_judgment_are_asked_at_once(judge_server: JudgeServer, facts: Rubric) -> None:
    responder = item_responder()
    judge_server.responder = lambda body: Reply(**{**vars(responder(body)), "delay": 0.3})
    result = asyncio.run(checklist_judge(judge_server).agrade(facts, "ok", "q", "c"))
    assert result.verdict == "pass" and judge_server.max_in_flight == 2


def test_a_rerun_is_answered_by_the_cache_item_by_item(
    server: JudgeServer, facts: Rubric, tmp_path: Path
) -> None:
    first = checklist_judge(server, cache=tmp_path / "cache").grade(facts, "bad:answers", "q", "c")
    assert len(server.requests) == 2
    again = checklist_judge(server, cache=tmp_path / "cache").grade(facts, "bad:answers", "q", "c")
    assert len(server.requests) == 2  # nothing sent
    assert (again.verdict, again.reason) == (first.verdict, first.reason) == ("fail", again.reason)
    assert "answers (answered no" in again.reason
    assert again.details["judge"]["cached"] is True and again.details["judge"]["attempts"] == 0
    assert [entry["cached"] for entry in again.details["checklist"]] == [True, True]
    holistic = Judge("judge-model", server.url, SECRET_KEY, cache=tmp_path / "cache")
    server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "fine"})
    assert holistic.grade(facts, "bad:answers", "q", "c").verdict == "pass"  # its own key


def test_each_vote_is_one_pass_over_the_items(server: JudgeServer, facts: Rubric) -> None:
    result = checklist_judge(server, votes=3, temperature=0.7).grade(facts, "ok", "q", "c")
    assert result.verdict == "pass" and result.details["votes"]["cast"] == 2  # 2 of 3 agree
    assert len(server.requests) == 4
    assert result.details["judge"]["attempts"] == 4


def logprob_reply(answer: str, chosen: float, other: float) -> Reply:
    reply = completion([("answer", {"reason": "r", "answer": answer})])
    rival = "no" if answer == "yes" else "yes"
    top = [{"token": answer, "logprob": chosen}, {"token": rival, "logprob": other}]
    tokens = [
        {"token": '"yes', "logprob": -5.0, "top_logprobs": []},  # in the reason: not the answer
        {"token": f' "{answer}', "logprob": chosen, "top_logprobs": top},
        {"token": '"}', "logprob": 0.0, "top_logprobs": []},
    ]
    reply["choices"][0]["logprobs"] = {"content": tokens}
    return Reply(body=reply)


def test_the_answer_probability_is_kept_when_logprobs_come_back(
    judge_server: JudgeServer, facts: Rubric
) -> None:
    judge_server.script(
        logprob_reply("no", math.log(0.6), math.log(0.2)), logprob_reply("yes", 0.0, -100)
    )
    result = checklist_judge(judge_server).grade(facts, "ok", "q", "c")
    invented, answers = result.details["checklist"]
    assert invented["p"] == pytest.approx(0.75)  # 0.6 against 0.2: RocketEval's normalised score
    assert answers["p"] == pytest.approx(1.0)
    assert "logprobs" not in judge_server.requests[0]  # read when present, never asked for


def test_a_rubric_without_a_checklist_is_not_judged(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    result = checklist_judge(judge_server).grade(rubric, "fine")
    assert result.verdict == "error" and judge_server.requests == []
    assert result.reason.startswith(
        f"not judged: mode='checklist': the rubric {rubric.name} has no checklist"
    )


def cli(*arguments: str) -> Any:
    return CliRunner().invoke(main, list(arguments))


@pytest.fixture
def endpoint(server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    return server


def test_judge_checklist_on_the_command_line(endpoint: JudgeServer, tmp_path: Path) -> None:
    (tmp_path / "facts.md").write_text(PASS_FAIL)
    facts = str(tmp_path / "facts.md")
    common = ["--input", "q", "--context", "c", "--no-cache"]
    result = cli("judge", facts, "--output", "bad:invented", *common, "--checklist", "--json")
    assert result.exit_code == 1, result.output
    checklist = json.loads(result.output)["details"]["checklist"]
    assert [(entry["id"], entry["answer"]) for entry in checklist] == [
        ("invented", "yes"),
        ("answers", "yes"),
    ]
    assert len(endpoint.requests) == 2
    endpoint.responder = lambda body: tool_reply("set_grade_pass", {"reason": "fine"})
    holistic = cli("judge", facts, "--output", "bad:invented", *common)
    assert holistic.exit_code == 0 and len(endpoint.requests) == 3


def test_checklist_mode_refuses_a_rubric_without_one_before_any_request(
    endpoint: JudgeServer, write_file: Callable[..., Path], library: Path
) -> None:
    judged = cli("judge", "keywords", "--output", "x", "--checklist")
    assert judged.exit_code == 2
    assert judged.output.strip() == (
        "rubriclib: error: --checklist: the rubric keywords has no checklist: checklist mode asks a "
        "rubric's checklist items (add `checklist:` to its frontmatter, or judge it without "
        "checklist mode)"
    )
    facts = str(write_file("facts.md", PASS_FAIL))
    goldens = cli("test-goldens", facts, "keywords", "--checklist")
    assert goldens.exit_code == 2 and "the rubric keywords has no checklist" in goldens.output
    assert "grounded-facts" not in goldens.output  # only the rubric that has none is named
    assert endpoint.requests == []


def test_test_goldens_in_checklist_mode(endpoint: JudgeServer, tmp_path: Path) -> None:
    (tmp_path / "facts.md").write_text(PASS_FAIL)
    result = cli("test-goldens", str(tmp_path / "facts.md"), "--checklist", "--format", "json")
    assert result.exit_code == 0, result.output
    assert len(endpoint.requests) == 4  # 2 goldens x 2 items
    assert all(body["tools"][0]["function"]["name"] == "answer" for body in endpoint.requests)


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


def test_eval_reads_checklist_on_a_grader_and_the_flag(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("facts.md", PASS_FAIL)
    plain = write_file("plain.yaml", EVAL)
    marked = write_file("marked.yaml", EVAL + "    mode: checklist\n")
    out = tmp_path / "out.jsonl"
    assert cli("eval", str(marked), "--out", str(out), "--no-cache").exit_code == 0  # no gate
    lines = [json.loads(line) for line in out.read_text().splitlines()]  # in finishing order
    assert {line["row"]: line["verdict"] for line in lines} == {"good": "pass", "bad": "fail"}
    assert all("checklist" in line["result"]["details"] for line in lines)
    assert len(endpoint.requests) == 4
    flagged = ("--no-cache", "--checklist", "--force")
    assert cli("eval", str(plain), "--out", str(out), *flagged).exit_code == 0
    assert len(endpoint.requests) == 8


def test_a_resumed_eval_keeps_only_results_judged_in_its_mode(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    items = endpoint.responder

    def either(body: dict[str, Any]) -> Reply:
        if body["tools"][0]["function"]["name"] == "answer":
            return items(body)  # type: ignore[misc]
        return tool_reply("set_grade_pass", {"reason": "holistic"})

    endpoint.responder = either
    write_file("facts.md", PASS_FAIL)
    plain = write_file("plain.yaml", EVAL)
    out = tmp_path / "out.jsonl"
    assert cli("eval", str(plain), "--out", str(out), "--no-cache").exit_code == 0
    holistic = len(endpoint.requests)
    again = cli("eval", str(plain), "--out", str(out), "--resume", "--no-cache", "--checklist")
    assert again.exit_code == 0, again.output
    assert len(endpoint.requests) == holistic + 4  # every row judged again, item by item
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4  # the holistic lines stay, superseded by the lines after them
    assert all("checklist" not in line["result"]["details"] for line in lines[:2])
    assert all("checklist" in line["result"]["details"] for line in lines[2:])
    last = cli("eval", str(plain), "--out", str(out), "--resume", "--no-cache", "--checklist")
    assert last.exit_code == 0 and len(endpoint.requests) == holistic + 4  # now all kept


def test_eval_refuses_checklist_mode_for_a_rubric_without_one(
    endpoint: JudgeServer, write_file: Callable[..., Path], library: Path
) -> None:
    marked = write_file("kw.yaml", EVAL.replace("./facts.md", "keywords") + "    mode: checklist\n")
    result = cli("eval", str(marked), "--no-cache")
    assert result.exit_code == 2
    assert f"{marked}:9: graders[0].mode: the rubric keywords has no" in result.output
    plain = write_file("plain.yaml", EVAL.replace("./facts.md", "keywords"))
    flagged = cli("eval", str(plain), "--no-cache", "--checklist")
    assert flagged.exit_code == 2
    assert f"{plain}: graders.facts: --checklist: the rubric keywords has no" in flagged.output
    assert endpoint.requests == []


def test_offline_batch_files_carry_every_item_request(
    write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("facts.md", PASS_FAIL)
    eval_file = write_file("eval.yaml", EVAL)
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    prepared = cli("batch", "prepare", str(eval_file), "--to", str(to), "--checklist")
    assert prepared.exit_code == 0, prepared.output
    requests = [json.loads(line) for line in to.read_text().splitlines()]
    assert len(requests) == 4 and len({line["custom_id"] for line in requests}) == 4
    respond = item_responder()
    answers = [
        {
            "custom_id": line["custom_id"],
            "response": {"status_code": 200, "body": respond(line["body"]).body},
        }
        for line in requests
    ]
    output.write_text("".join(json.dumps(line) + "\n" for line in answers))
    collected = cli(
        "batch", "collect", str(eval_file), "--from", str(output), "--out", str(results),
        "--checklist",
    )  # fmt: skip
    assert collected.exit_code == 0, collected.output  # no gate
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(line["row"], line["verdict"]) for line in lines] == [("good", "pass"), ("bad", "fail")]
    assert "answers (answered no" in lines[1]["result"]["reason"]
    assert "4 answer(s) used" in collected.output


def test_reports_say_which_items_decide_the_failures(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    facts = str(write_file("facts.md", PASS_FAIL))
    table = cli("test-goldens", facts, "--checklist")
    assert table.exit_code == 0, table.output
    assert "  checklist items failed: invented 1\n" in table.output
    report = json.loads(cli("test-goldens", facts, "--checklist", "--format", "json").output)
    assert report["rubrics"][0]["checklist_failures"] == {"invented": 1}
    rows = [
        {"input": "When?", "context": "In 1969.", "output": "1969.", "label": "pass"},
        {"input": "When?", "context": "In 1969.", "output": "bad:answers", "label": "fail"},
        {"input": "When?", "context": "In 1969.", "output": "bad:answers too", "label": "fail"},
        {"input": "When?", "context": "In 1969.", "output": "bad:invented", "label": "pass"},
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows))
    calibrated = cli("calibrate", facts, "--labels", str(labels), "--checklist", "--format", "json")
    assert calibrated.exit_code == 0, calibrated.output
    found = json.loads(calibrated.output)
    assert found["checklist_failures"] == {"answers": 2, "invented": 1}
    assert found["disagreements"] == 1
    plain = cli("calibrate", facts, "--labels", str(labels))
    assert "checklist items failed" not in plain.output  # holistic: no items were asked


def test_calibrate_refuses_checklist_mode_for_a_rubric_without_one(
    endpoint: JudgeServer, tmp_path: Path, library: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"output": "x", "label": "pass"}) + "\n")
    refused = cli("calibrate", "keywords", "--labels", str(labels), "--checklist")
    assert refused.exit_code == 2
    assert "--checklist: the rubric keywords has no checklist" in refused.output
    assert endpoint.requests == []


def test_a_checklist_question_about_a_run_shows_the_run_and_says_it_is_about_it() -> None:
    import json
    from pathlib import Path

    from rubriclib import load_rubric
    from rubriclib.item import Item
    from rubriclib.judging.asking.checklist_protocol import question_messages

    rubric = load_rubric("task-completion")
    run = json.loads((Path(__file__).parents[1] / "data/runs/openai_chat.json").read_text())
    for system, user in question_messages(rubric, Item(transcript=run), 128_000):
        assert "one yes/no question about the agent run" in system["content"]
        assert "[M8] tool result for refund (call_2, answers the call in M7)" in user["content"]
        assert user["content"].endswith("Answer the question about the agent run with `answer`.\n")


def test_checklist_mode_refuses_a_rubric_with_output_fields(
    endpoint: JudgeServer, write_file: Callable[..., Path], library: Path
) -> None:
    fields = PASS_FAIL.replace(
        "requires: [input, context]\n",
        "requires: [input, context]\noutput:\n  severity: {type: string, enum: [low, high]}\n",
    )
    rubric = load_rubric(write_file("fields.md", fields))
    for answers in ("tool", "probability", "one-call"):
        judge = Judge(model="m", base_url=endpoint.url, mode="checklist", answers=answers)
        result = judge.grade(rubric, "fine", "q", "c")
        assert result.verdict == "error", answers
        assert "has output fields, which checklist items do not fill" in result.reason
    judged = cli(
        "judge", str(rubric.path), "--input", "q", "--context", "c", "--output", "x", "--checklist"
    )
    assert judged.exit_code == 2
    assert judged.output.strip() == (
        "rubriclib: error: --checklist: the rubric grounded-facts has output fields, which "
        "checklist items do not fill: judge it without checklist mode, where one verdict fills "
        "them"
    )
    assert endpoint.requests == []


def test_eval_refuses_checklist_mode_for_a_rubric_with_output_fields(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    fields = "requires: [input, context]\noutput:\n  severity: {type: string, enum: [low, high]}\n"
    write_file("facts.md", PASS_FAIL.replace("requires: [input, context]\n", fields))
    marked = write_file("marked.yaml", EVAL + "    mode: checklist\n")
    result = cli("eval", str(marked), "--no-cache")
    assert result.exit_code == 2
    assert f"{marked}:9: graders[0].mode: the rubric grounded-facts has output" in result.output
    plain = write_file("plain.yaml", EVAL)
    flagged = cli("eval", str(plain), "--no-cache", "--checklist")
    assert flagged.exit_code == 2
    assert f"{plain}: graders.facts: --checklist: the rubric grounded-facts has output" in (
        flagged.output
    )
    assert endpoint.requests == []
    filled = {"reason": "fine", "severity": "low"}
    endpoint.responder = lambda body: tool_reply("set_grade_pass", filled)
    assert cli("eval", str(plain), "--no-cache").exit_code == 0  # holistic: the fields are filled

"""`protocol: json` over the wire: no tools, a strict `response_format` holding the verdict
tool's fields (reason and citations first, then the verdict, then output fields), on every
scale and in every checklist mode; the JSON read as the tool's call; the one corrective turn
naming the problem, then `error`; llama-cpp-python's refusal of `json_schema` answered with
its `json_object` form, remembered as a quirk; the digest unchanged, the cache keys apart."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, VALID_RUBRIC, keyword_responder
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply
from test_checklist_judging import PASS_FAIL, item_responder
from test_label_judging import RUBRIC as LABELS
from test_output_judging import FILLED, ITEM
from test_output_judging import RUBRIC as FIELDS_RUBRIC

from rubriclib import Item, Judge, JudgeSettings, Panel, Rubric, load_rubric
from rubriclib.cli import main
from rubriclib.errors import JudgeConfigError


def json_judge(server: JudgeServer, model: str = "judge-model", **options: Any) -> Judge:
    settings: dict[str, Any] = {"timeout": 5.0, "backoff_base": 0.001, "backoff_max": 0.01}
    settings |= {"protocol": "json"}
    return Judge(model, server.url, SECRET_KEY, **(settings | options))


def answered(content: str) -> Reply:
    return Reply(body=completion(content=content))


def asked_schema(body: dict[str, Any]) -> dict[str, Any]:
    """The strict schema a json_schema request asks for (no tools offered beside it)."""
    assert "tools" not in body and "tool_choice" not in body
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True
    schema: dict[str, Any] = response_format["json_schema"]["schema"]
    return schema


@pytest.mark.parametrize(
    ("scale", "reply", "verdict", "order"),
    [
        ("tiny", {"reason": "fine", "verdict": "pass"}, "pass", ["reason", "citations", "verdict"]),
        ("scored", {"reason": "good", "score": 4}, "pass", ["reason", "citations", "score"]),
        (
            "labels",
            {"reason": "half", "label": "partly-resolved"},
            "fail",
            ["reason", "citations", "label"],
        ),
    ],
)
def test_every_scale_is_asked_as_one_json_object_in_its_tools_fields(
    judge_server: JudgeServer,
    rubric: Rubric,
    scored: Rubric,
    write_file: Callable[..., Path],
    scale: str,
    reply: dict[str, Any],
    verdict: str,
    order: list[str],
) -> None:
    rubrics = {"tiny": rubric, "scored": scored}
    rubrics["labels"] = load_rubric(str(write_file("support.md", LABELS)))
    judge_server.script(answered(json.dumps(reply)))
    result = json_judge(judge_server).grade(rubrics[scale], "Paris.")
    assert result.verdict == verdict, result.reason
    assert result.reason == reply["reason"]
    assert result.details.judge.mode == "json_schema"
    assert result.details.judge.protocol == "json"
    body = judge_server.requests[0]
    schema = asked_schema(body)
    assert list(schema["properties"]) == order
    assert schema["required"] == order and schema["additionalProperties"] is False
    assert schema["properties"]["citations"]["type"] == ["array", "null"]  # optional: nullable
    name = body["response_format"]["json_schema"]["name"]
    assert name in ("set_grade", "set_grade_score", "set_grade_label")
    system = body["messages"][0]["content"]
    assert "Reply only with one JSON object, reason first" in system
    assert "call" not in system.lower()


def test_a_pairwise_rubric_is_asked_both_orders_in_json(
    judge_server: JudgeServer, pairwise: Rubric
) -> None:
    judge_server.script(
        answered(json.dumps({"reason": "A is right", "winner": "A"})),
        answered(json.dumps({"reason": "B is right", "winner": "B"})),
    )
    result = json_judge(judge_server).grade(
        pairwise, "Paris.", input="Capital of France?", baseline="Lyon."
    )
    assert result.verdict == "pass" and result.details.pairwise.winner == "output"
    for body in judge_server.requests:
        assert list(asked_schema(body)["properties"]) == ["reason", "citations", "winner"]


def test_tools_stay_the_default_and_record_their_protocol(
    judge: Judge, judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "ok"}))
    result = judge.grade(rubric, "fine")
    assert judge.protocol == "tools"
    assert "tools" in judge_server.requests[0] and "response_format" not in judge_server.requests[0]
    assert result.details.judge.protocol == "tools"
    assert result.model_dump(mode="json")["details"]["judge"]["protocol"] == "tools"


def test_optional_output_fields_are_required_but_nullable_and_a_null_is_left_out(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    triage = load_rubric(str(write_file("triage.md", FIELDS_RUBRIC)))
    answer = {"reason": "It refuses.", "citations": None, "verdict": "fail"}
    judge_server.script(answered(json.dumps(answer | FILLED | {"confidence": None})))
    result = json_judge(judge_server).grade_item(triage, ITEM)
    assert result.verdict == "fail", result.reason
    assert result.details.output is not None and "confidence" not in result.details.output
    assert result.details.output["severity"] == "high"
    schema = asked_schema(judge_server.requests[0])
    assert list(schema["properties"]) == [
        "reason",
        "citations",
        "verdict",
        "severity",
        "confidence",
        "issues",
    ]
    assert schema["properties"]["confidence"]["type"] == ["number", "null"]
    assert schema["properties"]["severity"]["type"] == "string"  # required: not nullable
    issue = schema["properties"]["issues"]["items"]
    assert issue["additionalProperties"] is False
    assert set(issue["required"]) == set(issue["properties"])
    assert "minLength" not in json.dumps(schema)  # a strict schema takes no string lengths


def test_text_that_is_not_json_gets_one_turn_naming_the_problem(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        answered("I think it passes."),
        answered(json.dumps({"reason": "fine", "verdict": "pass"})),
    )
    result = json_judge(judge_server).grade(rubric, "fine")
    assert result.verdict == "pass"
    assert result.details.judge.corrected is True
    assert result.details.judge.correction is not None
    assert "not one JSON object" in result.details.judge.correction
    turn = judge_server.requests[1]["messages"]
    assert turn[-2] == {"role": "assistant", "content": "I think it passes."}
    ask = turn[-1]["content"]
    assert ask.startswith("Please give your answer now as only one JSON object with `reason`")
    assert "Your reply could not be read: the reply is not one JSON object." in ask
    assert "pass" not in ask.split("`verdict`")[1]  # names the problem, never a verdict
    assert "response_format" in judge_server.requests[1]


@pytest.mark.parametrize(
    ("first", "second", "why"),
    [
        ("no verdict here", "still prose", "the reply is not one JSON object"),
        ('{"reason": "r", "verdict": "maybe"}', '{"reason": "r"}', "the JSON answer has verdict"),
        ('["pass"]', "[]", "the reply is JSON but not an object"),
    ],
)
def test_broken_output_twice_is_an_error_never_a_verdict(
    judge_server: JudgeServer, rubric: Rubric, first: str, second: str, why: str
) -> None:
    judge_server.script(answered(first), answered(second))
    result = json_judge(judge_server).grade(rubric, "fine")
    assert result.verdict == "error" and result.passed is False
    assert result.reason.startswith("no valid verdict after a corrective turn: ")
    assert len(judge_server.requests) == 2
    assert why in (result.details.judge.correction or "") + result.reason


def test_a_fenced_json_answer_is_read_and_prose_around_it_is_not(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    fenced = '```json\n{"reason": "fine", "verdict": "pass"}\n```'
    judge_server.script(answered(fenced))
    assert json_judge(judge_server).grade(rubric, "fine").verdict == "pass"
    wrapped = 'Sure! {"reason": "fine", "verdict": "pass"} Hope this helps.'
    judge_server.script(answered(wrapped), answered(wrapped))
    assert json_judge(judge_server).grade(rubric, "fine").verdict == "error"


def test_a_refused_json_schema_falls_back_to_json_object_and_is_remembered(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge_server.refuse_json_schema = True
    judge_server.responder = keyword_responder()
    judge = json_judge(judge_server, capabilities=tmp_path / "capabilities")
    result = judge.grade(rubric, "verdict:fail here")
    assert result.verdict == "fail" and result.details.judge.mode == "json_object"
    assert judge.quirks == {"no_json_schema"}
    refused, sent = judge_server.requests
    assert refused["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["type"] == "json_object"
    schema = sent["response_format"]["schema"]
    assert list(schema["properties"]) == ["reason", "citations", "verdict"]
    assert schema["properties"]["reason"]["minLength"] == 1  # a grammar enforces it here
    assert (
        f"The JSON object follows this schema: {json.dumps(schema)}"
        in (sent["messages"][0]["content"])
    )
    again = json_judge(judge_server, capabilities=tmp_path / "capabilities")
    assert again.grade(rubric, "verdict:pass").verdict == "pass"
    assert judge_server.requests[-1]["response_format"]["type"] == "json_object"
    assert len(judge_server.requests) == 3  # the quirk was remembered: nothing refused again


def test_the_digest_is_the_protocols_own_but_the_cache_keys_differ(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge_server.responder = keyword_responder()
    cache = tmp_path / "verdicts"
    tools = Judge("judge-model", judge_server.url, SECRET_KEY, cache=cache)
    by_tools = tools.grade(rubric, "verdict:pass")
    by_json = json_judge(judge_server, cache=cache).grade(rubric, "verdict:pass")
    assert by_tools.details.rubric == by_json.details.rubric  # name, version, digest
    assert by_json.details.judge.cached is False  # another request, another key
    again = json_judge(judge_server, cache=cache).grade(rubric, "verdict:pass")
    assert again.details.judge.cached is True
    assert again.details.judge.protocol == "json" and again.details.judge.mode == "json_schema"
    assert len(judge_server.requests) == 2


def test_votes_and_a_panel_ask_in_json(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.responder = keyword_responder()
    voted = json_judge(judge_server, votes=3, temperature=0.7).grade(rubric, "verdict:flip")
    assert voted.verdict in ("pass", "fail") and voted.details.votes is not None
    panel = Panel([json_judge(judge_server), json_judge(judge_server, model="other")])
    [result] = panel.grade_many(rubric, [Item(output="verdict:pass")])
    assert result.verdict == "pass" and result.details.judge.protocol == "json"
    assert all("response_format" in body for body in judge_server.requests)


@pytest.mark.parametrize("answers", ["tool", "one-call"])
def test_a_checklist_is_answered_in_json(
    judge_server: JudgeServer, write_file: Callable[..., Path], answers: str
) -> None:
    facts = load_rubric(str(write_file("grounded-facts.md", PASS_FAIL)))
    if answers == "tool":
        judge_server.responder = item_responder()
    else:
        one = {"reason": "checked", "invented": "yes", "answers": "yes"}
        judge_server.script(answered(json.dumps(one)))
    judge = json_judge(judge_server, mode="checklist", answers=answers)
    result = judge.grade_item(facts, Item(input="When?", context="In 1969.", output="bad:invented"))
    assert result.verdict == "fail", result.reason
    for body in judge_server.requests:
        schema = asked_schema(body)
        assert list(schema["properties"])[0] == "reason"
        system, prompt = body["messages"][0]["content"], body["messages"][1]["content"]
        assert "one JSON object" in system and "call to" not in system
        assert prompt.rstrip().endswith("with one JSON object.")
        assert "`answer`" not in prompt and "`answer_checklist`" not in prompt
    assert result.details.judge.protocol == "json"


def test_probability_answers_stay_one_plain_word(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    facts = load_rubric(str(write_file("grounded-facts.md", PASS_FAIL)))
    judge_server.script(answered("no"), answered("yes"))
    judge = json_judge(judge_server, mode="checklist", answers="probability")
    result = judge.grade_item(facts, Item(input="When?", context="In 1969.", output="1969."))
    assert result.verdict == "pass", result.reason
    assert all("response_format" not in body for body in judge_server.requests)
    assert result.details.judge.protocol == "tools" and result.details.judge.mode == "text"


def test_the_protocol_comes_from_the_environment_the_config_and_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, judge_server: JudgeServer
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rubriclib.toml").write_text('protocol = "json"\n', encoding="utf-8")
    assert Judge("m", judge_server.url, SECRET_KEY).protocol == "json"
    monkeypatch.setenv("RUBRICLIB_PROTOCOL", "tools")
    assert Judge("m", judge_server.url, SECRET_KEY).protocol == "tools"
    settings = JudgeSettings(model="m", base_url=judge_server.url, protocol="json")
    assert Judge.from_settings(settings, api_key=SECRET_KEY).protocol == "json"
    with pytest.raises(
        JudgeConfigError, match="protocol must be 'tools', 'json' or 'auto', not 'xml'"
    ):
        Judge("m", judge_server.url, SECRET_KEY, protocol="xml")  # type: ignore[arg-type]


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


EVAL = """\
name: facts
judge: {model: judge-model}
rows:
  - {id: good, output: "verdict:pass"}
  - {id: bad, output: "verdict:fail"}
graders:
  - name: tiny
    rubric: ./tiny.md
"""


def test_every_judging_command_takes_protocol(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    tiny = str(write_file("tiny.md", VALID_RUBRIC))
    judged = cli("judge", tiny, "--output", "verdict:fail", "--protocol", "json", "--json")
    assert judged.exit_code == 1, judged.output
    assert json.loads(judged.output)["details"]["judge"]["protocol"] == "json"
    goldens = cli("test-goldens", tiny, "--protocol", "json", "--no-cache")
    assert goldens.exit_code == 1  # the scripted judge fails "fine": a golden missed
    assert all("response_format" in body for body in endpoint.requests)
    assert len(endpoint.requests) == 3
    refused = cli("judge", tiny, "--output", "x", "--protocol", "xml")
    assert (
        refused.exit_code == 2 and "'xml' is not one of 'tools', 'json', 'auto'" in refused.output
    )


def test_an_eval_file_grader_and_the_flag_set_the_protocol(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("tiny.md", VALID_RUBRIC)
    plain = write_file("plain.yaml", EVAL)
    marked = write_file("marked.yaml", EVAL + "    protocol: json\n")
    out = tmp_path / "out.jsonl"
    assert cli("eval", str(marked), "--out", str(out), "--no-cache").exit_code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["row"]: line["verdict"] for line in lines} == {"good": "pass", "bad": "fail"}
    assert {line["result"]["details"]["judge"]["protocol"] for line in lines} == {"json"}
    assert all("response_format" in body for body in endpoint.requests)
    flagged = ("--no-cache", "--protocol", "json", "--force")
    assert cli("eval", str(plain), "--out", str(out), *flagged).exit_code == 0
    assert len(endpoint.requests) == 4 and "tools" not in endpoint.requests[-1]
    planned = cli("eval", str(marked), "--dry-run").output
    assert "tiny: tiny@1.2.3" in planned and ", protocol json" in planned
    assert ", protocol" not in cli("eval", str(plain), "--dry-run").output
    assert ", protocol auto" in cli("eval", str(plain), "--dry-run", "--protocol", "auto").output
    bad = write_file("bad.yaml", EVAL + "    protocol: xml\n")
    refused = cli("eval", str(bad), "--no-cache")
    assert refused.exit_code == 2 and "graders[0].protocol" in refused.output
    assert len(endpoint.requests) == 4


def test_a_bad_protocol_in_the_config_or_environment_is_named(
    endpoint: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rubriclib.toml").write_text('protocol = "xml"\n', encoding="utf-8")
    refused = cli("judge", "groundedness", "--output", "x", "--context", "c")
    assert refused.exit_code == 2
    assert "rubriclib.toml: protocol: must be tools, json or auto, not 'xml'" in refused.output
    (tmp_path / "rubriclib.toml").write_text('protocol = "json"\n', encoding="utf-8")
    shown = cli("config")
    assert "protocol" in shown.output and "json" in shown.output
    monkeypatch.setenv("RUBRICLIB_PROTOCOL", "xml")
    refused = cli("judge", "groundedness", "--output", "x", "--context", "c")
    assert refused.exit_code == 2
    assert "RUBRICLIB_PROTOCOL: value: must be tools, json or auto, not 'xml'" in refused.output
    assert endpoint.requests == []


TOOLS_REFUSED = error_reply(400, "tools param requires --jinja flag")
"""llama-server's answer to a request with tools when started without --jinja."""


def test_auto_asks_with_tools_until_they_are_refused_then_in_json(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge_server.script(TOOLS_REFUSED, answered(json.dumps({"reason": "ok", "verdict": "pass"})))
    capabilities = tmp_path / "capabilities"
    judge = json_judge(judge_server, protocol="auto", capabilities=capabilities)
    result = judge.grade(rubric, "fine")
    assert result.verdict == "pass", result.reason
    assert judge.quirks == {"no_tools"}
    assert result.details.judge.protocol == "json" and result.details.judge.mode == "json_schema"
    refused, sent = judge_server.requests
    assert "tools" in refused and "tools" not in sent and "response_format" in sent
    again = json_judge(judge_server, protocol="auto", capabilities=capabilities)
    judge_server.script(answered(json.dumps({"reason": "no", "verdict": "fail"})))
    assert again.grade(rubric, "broken").verdict == "fail"
    assert "response_format" in judge_server.requests[-1]  # remembered: tools not tried again


def test_auto_stays_with_tools_where_they_work(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "ok"}))
    result = json_judge(judge_server, protocol="auto").grade(rubric, "fine")
    assert result.verdict == "pass" and result.details.judge.protocol == "tools"
    assert "tools" in judge_server.requests[0] and "response_format" not in judge_server.requests[0]


def test_a_tools_judge_learns_the_refusal_but_never_answers_in_json(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(TOOLS_REFUSED, TOOLS_REFUSED, TOOLS_REFUSED, TOOLS_REFUSED)
    judge = Judge("m", judge_server.url, SECRET_KEY, max_retries=1, backoff_base=0.001)
    result = judge.grade(rubric, "fine")
    assert result.verdict == "error" and "--jinja" in result.reason
    assert all("response_format" not in body for body in judge_server.requests)


def test_the_protocols_are_named_once() -> None:
    from typing import get_args

    from rubriclib.config import PROTOCOLS
    from rubriclib.settings import Protocol

    assert get_args(Protocol) == PROTOCOLS


def test_a_resumed_eval_judges_again_what_another_protocol_asked(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("tiny.md", VALID_RUBRIC)
    plain = str(write_file("plain.yaml", EVAL))
    out = str(tmp_path / "out.jsonl")
    assert cli("eval", plain, "--out", out, "--no-cache").exit_code == 0
    resumed = ("--out", out, "--resume", "--no-cache")
    assert cli("eval", plain, *resumed, "--protocol", "auto").exit_code == 0
    assert len(endpoint.requests) == 2  # auto keeps what tools asked
    assert cli("eval", plain, *resumed, "--protocol", "json").exit_code == 0
    assert len(endpoint.requests) == 4  # both rows asked again, in JSON
    assert all("response_format" in body for body in endpoint.requests[2:])
    assert cli("eval", plain, *resumed, "--protocol", "json").exit_code == 0
    assert len(endpoint.requests) == 4  # now all kept

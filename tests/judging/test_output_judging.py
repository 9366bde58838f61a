"""A rubric's output fields judged over the wire: offered in the verdict tool's schema (so a
grammar-constrained server enforces them), checked on return, one corrective turn naming a
field that breaks its schema, then `error`; kept in `details.output`, the cache and votes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import SECRET_KEY
from judge_server import JudgeServer, tool_reply

from rubriclib import Item, Judge, Rubric, load_rubric

RUBRIC = """\
---
name: triage
version: 1.0.0
scale: pass-fail
description: Whether a support reply resolves the ticket.
output:
  severity: {type: string, enum: [low, medium, high], description: How bad the worst issue is}
  confidence: {type: number, minimum: 0, maximum: 1, optional: true}
  issues:
    type: array
    maxItems: 3
    items:
      type: object
      properties:
        description: {type: string, citations: true}
        kind: {type: string, enum: [policy, accuracy, tone]}
      required: [description, kind]
---
# Triage

Does the reply resolve the ticket? List each issue.
"""
ITEM = Item(input="Where is my refund?", output="We never give refunds. Goodbye.")
ISSUE = {
    "description": "refuses a refund the policy allows",
    "kind": "policy",
    "citations": [{"block": "output", "quote": "We never give refunds."}],
}
FILLED = {"severity": "high", "issues": [ISSUE]}


def triage(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("triage.md", RUBRIC)))


def fail_call(**fields: Any) -> Any:
    return tool_reply("set_grade_fail", {"reason": "It refuses the refund.", **fields})


def named_fail(**fields: Any) -> Any:
    """A corrective turn's reply: it forces the one tool `set_grade` by name."""
    return tool_reply("set_grade", {"reason": "It refuses.", "verdict": "fail", **fields})


def test_fields_go_into_the_verdict_tools_schema_before_the_verdict(
    judge: Judge, judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    judge_server.script(fail_call(**FILLED))
    judge.grade(triage(write_file), output=ITEM.output, input=ITEM.input)
    body = judge_server.requests[0]
    for tool in body["tools"]:
        parameters = tool["function"]["parameters"]
        assert list(parameters["properties"]) == [
            "reason",
            "citations",
            "severity",
            "confidence",
            "issues",
        ]
        assert parameters["required"] == ["reason", "severity", "issues"]
        severity = parameters["properties"]["severity"]
        assert severity == {
            "type": "string",
            "enum": ["low", "medium", "high"],
            "description": "How bad the worst issue is",
        }
        item = parameters["properties"]["issues"]["items"]
        assert item["additionalProperties"] is False
        assert list(item["properties"]) == ["description", "kind", "citations"]
        assert "citations" not in item["properties"]["description"]  # ours, not JSON schema
    system = body["messages"][0]["content"]
    assert "fill in `severity`, `confidence`, `issues`" in system


def test_the_filled_fields_land_in_details_with_their_citations_checked(
    judge: Judge, judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    wrong_quote = {**ISSUE, "citations": [{"block": "output", "quote": "We refund gladly."}]}
    judge_server.script(fail_call(severity="high", issues=[ISSUE, wrong_quote]))
    result = judge.grade(triage(write_file), output=ITEM.output, input=ITEM.input)
    assert result.verdict == "fail" and len(judge_server.requests) == 1
    output = result.details.output
    assert output is not None and output["severity"] == "high"
    statuses = [issue["citations"][0]["status"] for issue in output["issues"]]
    assert statuses == ["verified", "unverified"]
    assert result.model_dump(mode="json")["details"]["output"]["issues"][0]["kind"] == "policy"


def test_a_field_that_breaks_its_schema_gets_one_turn_naming_it_then_error(
    judge: Judge, judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    bad = {"severity": "urgent", "issues": [{"description": "x", "kind": "style"}]}
    judge_server.script(fail_call(**bad), named_fail(**bad))
    result = judge.grade(triage(write_file), output=ITEM.output, input=ITEM.input)
    assert result.verdict == "error" and not result.passed and result.score is None
    assert "severity: 'urgent' is not one of low, medium, high" in result.reason
    assert "issues[0].kind: 'style' is not one of policy, accuracy, tone" in result.reason
    turn = judge_server.requests[1]["messages"][-1]
    assert turn["role"] == "user"
    assert "- severity: 'urgent' is not one of low, medium, high" in turn["content"]
    assert "pass" not in turn["content"] and "fail" not in turn["content"]  # neutral


def test_a_corrected_reply_is_the_verdict(
    judge: Judge, judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    judge_server.script(fail_call(severity="high"), named_fail(**FILLED))
    result = judge.grade(triage(write_file), output=ITEM.output, input=ITEM.input)
    assert result.verdict == "fail" and result.details.judge.corrected
    assert "issues: is missing" in (result.details.judge.correction or "")
    assert result.details.output is not None and result.details.output["severity"] == "high"


def test_cached_and_voted_results_keep_their_fields(
    judge_server: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    rubric = triage(write_file)
    judge = Judge(
        model="judge-model",
        base_url=judge_server.url,
        api_key=SECRET_KEY,
        cache=tmp_path / "cache",
        votes=3,
        temperature=0.5,
    )
    low = {"severity": "low", "issues": []}
    judge_server.script(
        fail_call(**FILLED),
        tool_reply("set_grade_pass", {"reason": "Fine.", **low}),
        fail_call(**{**FILLED, "severity": "medium"}),
    )
    voted = judge.grade(rubric, output=ITEM.output, input=ITEM.input)
    assert voted.verdict == "fail" and voted.details.votes is not None
    assert [vote["severity"] for vote in voted.details.votes.outputs or []] == [
        "high",
        "low",
        "medium",
    ]
    assert voted.details.output is not None and voted.details.output["severity"] == "high"
    again = judge.grade(rubric, output=ITEM.output, input=ITEM.input)
    assert len(judge_server.requests) == 3  # all three votes from the cache
    assert again.details.output == voted.details.output


def test_a_pairwise_rubric_cannot_have_output_fields(write_file: Callable[..., Path]) -> None:
    from rubriclib import RubricError

    text = RUBRIC.replace("scale: pass-fail", "scale: pairwise").replace(
        "Does the reply", "Which reply"
    )
    try:
        load_rubric(str(write_file("pair.md", text)))
    except RubricError as error:
        assert [p.field for p in error.problems] == ["output"]
        assert "not pairwise" in str(error)
    else:
        raise AssertionError("a pairwise rubric with output fields was accepted")


def test_a_panel_keeps_each_judges_fields(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    from rubriclib import Panel

    with JudgeServer() as second:
        judges = [
            Judge(model=name, base_url=server.url, api_key=SECRET_KEY, timeout=5.0)
            for name, server in (("first", judge_server), ("second", second))
        ]
        judge_server.script(fail_call(**FILLED))
        second.script(fail_call(**{**FILLED, "severity": "medium"}))
        result = Panel(judges).grade(triage(write_file), output=ITEM.output, input=ITEM.input)
    assert result.verdict == "fail" and result.details.panel is not None
    severities = [
        member.output["severity"] for member in result.details.panel.judges if member.output
    ]
    assert severities == ["high", "medium"]

"""A labels rubric judged over the wire: the label tool (reason, citations, then `label` as an
enum), the verdict by the rubric's map, `details.label`, a bad label's corrective turn, the
cache, votes (the majority label; a tie is an error) and panels."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, tool_reply

from rubriclib import Judge, Panel, Rubric, load_rubric

RUBRIC = """\
---
name: support
version: 1.0.0
scale: labels
description: Whether a support reply resolves the ticket.
labels:
  resolved: pass
  partly-resolved: fail
  not-resolved: fail
---
# Support

Label the reply: resolved, partly-resolved or not-resolved.
"""
OUTPUT = "I have started your refund; it needs a manager's approval."


@pytest.fixture
def support(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("support.md", RUBRIC)))


def labelled(label: str, reason: str = "It starts the refund.") -> object:
    return tool_reply("set_grade_label", {"reason": reason, "label": label})


def judge_at(server: JudgeServer, **options: object) -> Judge:
    return Judge(model="m", base_url=server.url, api_key=SECRET_KEY, timeout=5.0, **options)  # type: ignore[arg-type]


def test_the_label_tool_reasons_first_and_offers_the_labels_in_order(
    judge: Judge, judge_server: JudgeServer, support: Rubric
) -> None:
    judge_server.script(labelled("partly-resolved"))
    result = judge.grade(support, OUTPUT)
    assert result.verdict == "fail" and result.score == 0.0
    assert (
        result.details.label == "partly-resolved" and result.details["label"] == "partly-resolved"
    )
    assert result.model_dump(mode="json")["details"]["label"] == "partly-resolved"
    body = judge_server.requests[0]
    [tool] = body["tools"]
    assert tool["function"]["name"] == "set_grade_label"
    properties = tool["function"]["parameters"]["properties"]
    assert list(properties) == ["reason", "citations", "label"]
    assert properties["label"] == {
        "type": "string",
        "enum": ["resolved", "partly-resolved", "not-resolved"],
    }
    assert body["tool_choice"] == {"type": "function", "function": {"name": "set_grade_label"}}
    system = body["messages"][0]["content"]
    assert "then the label: one of resolved, partly-resolved, not-resolved" in system


def test_a_passing_label_passes(judge: Judge, judge_server: JudgeServer, support: Rubric) -> None:
    judge_server.script(labelled("resolved"))
    result = judge.grade(support, OUTPUT)
    assert (result.verdict, result.passed, result.details.label) == ("pass", True, "resolved")


def test_an_unknown_label_gets_one_turn_then_error(
    judge: Judge, judge_server: JudgeServer, support: Rubric
) -> None:
    judge_server.script(labelled("fixed"), labelled("solved"))
    result = judge.grade(support, OUTPUT)
    assert result.verdict == "error" and not result.passed
    assert "label 'solved', not one of resolved, partly-resolved, not-resolved" in result.reason
    turn = judge_server.requests[1]["messages"][-1]["content"]
    assert "`label`: one of resolved, partly-resolved, not-resolved" in turn
    assert "pass" not in turn and "fail" not in turn  # neutral: names no verdict


def test_votes_take_the_majority_label_and_a_tie_is_an_error(
    judge_server: JudgeServer, support: Rubric
) -> None:
    judge = judge_at(judge_server, votes=3, temperature=0.7)
    judge_server.script(labelled("resolved"), labelled("partly-resolved"), labelled("resolved"))
    result = judge.grade(support, OUTPUT)
    assert (result.verdict, result.details.label) == ("pass", "resolved")
    assert result.details.votes is not None
    assert result.details.votes.labels == ["resolved", "partly-resolved", "resolved"]
    judge_server.script(labelled("resolved"), labelled("partly-resolved"), labelled("not-resolved"))
    tied = judge.grade(support, OUTPUT + " ")
    assert tied.verdict == "error" and not tied.passed
    assert "resolved 1, partly-resolved 1, not-resolved 1 tie" in tied.reason


def test_two_votes_that_split_by_label_never_pass(
    judge_server: JudgeServer, support: Rubric
) -> None:
    judge = judge_at(judge_server, votes=2, temperature=0.7)
    judge_server.script(labelled("resolved"), labelled("not-resolved"))
    result = judge.grade(support, OUTPUT)
    assert result.verdict == "error" and "a tie is an error, never a pass" in result.reason


def test_the_cache_keeps_the_label(
    judge_server: JudgeServer, support: Rubric, tmp_path: Path
) -> None:
    judge = judge_at(judge_server, cache=tmp_path / "cache")
    judge_server.script(labelled("partly-resolved"))
    first = judge.grade(support, OUTPUT)
    again = judge.grade(support, OUTPUT)
    assert len(judge_server.requests) == 1 and again.details.judge.cached
    assert (again.verdict, again.details.label) == (first.verdict, "partly-resolved")


def test_a_panel_decides_by_label(judge_server: JudgeServer, support: Rubric) -> None:
    with JudgeServer() as second, JudgeServer() as third:
        servers = [judge_server, second, third]
        for server, label in zip(
            servers, ["not-resolved", "resolved", "not-resolved"], strict=True
        ):
            server.script(labelled(label))
        result = Panel([judge_at(server) for server in servers]).grade(support, OUTPUT)
    assert (result.verdict, result.details.label) == ("fail", "not-resolved")
    assert result.details.panel is not None
    assert [member.label for member in result.details.panel.judges] == [
        "not-resolved",
        "resolved",
        "not-resolved",
    ]


GOLDENS = """\
- {name: fixed, output: "label:resolved Your refund is on its way.", expected: resolved}
- {name: started, output: "label:partly-resolved Refund started.", expected: partly-resolved}
- {name: hoped, output: "label:resolved I hope it works out.", expected: partly-resolved}
- {name: refused, output: "label:not-resolved We cannot help.", expected: not-resolved}
"""


def by_keyword(body: dict[str, object]) -> object:
    """The label the candidate names (`label:NAME`): the judge gets `hoped` wrong."""
    user = str(body["messages"][1]["content"])  # type: ignore[index]
    return labelled(user.split("label:", 1)[1].split()[0])


def test_test_goldens_counts_label_agreement_kappa_and_the_confusion_matrix(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    import json

    from click.testing import CliRunner

    from rubriclib.cli import main

    rubric_path = write_file("project/rubrics/support.md", RUBRIC)
    write_file("project/goldens/support.yaml", GOLDENS)
    endpoint.responder = by_keyword  # type: ignore[assignment]
    runner = CliRunner()
    ran = runner.invoke(main, ["test-goldens", str(rubric_path), "--format", "json"])
    assert ran.exit_code == 1, ran.output  # one golden missed
    [report] = json.loads(ran.stdout)["rubrics"]
    assert report["accuracy"] == 0.75
    assert report["counts"] == {
        "expected_resolved": {"resolved": 1, "partly-resolved": 0, "not-resolved": 0},
        "expected_partly-resolved": {"resolved": 1, "partly-resolved": 1, "not-resolved": 0},
        "expected_not-resolved": {"resolved": 0, "partly-resolved": 0, "not-resolved": 1},
        "errors": 0,
        "verdicts": {"true_pass": 1, "false_pass": 1, "true_fail": 2, "false_fail": 0},
    }
    # kappa over the three labels: p_o 0.75; p_e = (1*2 + 2*1 + 1*1) / 16 = 0.3125
    assert report["kappa"] == pytest.approx((0.75 - 0.3125) / (1 - 0.3125))
    table = runner.invoke(main, ["test-goldens", str(rubric_path)]).stdout
    assert "expected partly-resolved: got resolved 1, partly-resolved 1, not-resolved 0" in table
    assert "by verdict: true pass 1, false pass 1, true fail 2, false fail 0" in table
    assert "hoped" in table and "expected partly-resolved" in table


def test_assert_rubric_can_expect_a_label(
    judge: Judge, judge_server: JudgeServer, support: Rubric
) -> None:
    from rubriclib.integrations.testing import RubricFailed, assert_rubric

    judge_server.script(labelled("partly-resolved"))
    result = assert_rubric(support, OUTPUT, judge=judge, label="partly-resolved")
    assert result.verdict == "fail"  # a failing label, as expected: the assertion holds
    judge_server.script(labelled("not-resolved"))
    with pytest.raises(RubricFailed) as failed:
        assert_rubric(support, OUTPUT, judge=judge, label="partly-resolved")
    assert "gave verdict fail (label not-resolved)" in str(failed.value)
    assert "expected label: partly-resolved" in str(failed.value)
    sent = len(judge_server.requests)
    with pytest.raises(ValueError, match="label 'fixed' needs one of resolved, partly"):
        assert_rubric(support, OUTPUT, judge=judge, label="fixed")
    assert len(judge_server.requests) == sent  # refused before any request

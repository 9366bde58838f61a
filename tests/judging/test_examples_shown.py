"""Worked examples shown to the judge: before the candidate, in every mode (holistic, checklist
items, probability answers, one call, pairwise), in no block a citation can name, and in the
digest the verdict cache is keyed by; over real HTTP to the scripted server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion, tool_reply

from rubriclib import Rubric, load_rubric
from rubriclib.judging import render
from rubriclib.judging.citations import given_citations
from rubriclib.judging.judge import Judge

FACTS = """\
---
name: grounded-facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing.
requires: [context]
checklist:
  - id: invented
    question: Does the output state a date the context does not give?
    fail_if: yes
examples:
  - name: invented-year
    context: The bridge opened in spring.
    output: The bridge opened in 1931, a year the moon was made of cheese.
    expected: fail
    why: The year is nowhere in the context.
  - name: faithful
    context: The bridge opened in spring.
    output: It opened in spring.
    expected: pass
---
# Grounded facts

Fail an output that states a date the context does not give.
"""

PAIRWISE = """\
---
name: better-answer
version: 1.0.0
scale: pairwise
description: Which answer is better.
examples:
  - name: shorter-wins
    output: Paris.
    baseline: The capital, which is a city, is Paris, I believe.
    expected_winner: output
    why: Both are right; the output says it plainly.
---
Pick the better response.
"""

EXAMPLE_TEXT = "a year the moon was made of cheese"


def answering(body: dict[str, Any]) -> Reply:
    """A judge that answers whatever it is asked: a verdict, an item, a whole checklist, a
    winner, or one word."""
    tools = body.get("tools") or []
    if not tools:
        return Reply(body=completion(content="no"))
    name = tools[0]["function"]["name"]
    arguments: dict[str, Any] = {"reason": "r"}
    if name == "answer":
        arguments["answer"] = "no"
    elif name == "answer_checklist":
        arguments["invented"] = "no"
    elif name == "set_pairwise_winner":
        arguments["winner"] = "A"
    elif name == "set_grade":
        arguments["verdict"] = "pass"
    return tool_reply(name, arguments)


@pytest.fixture
def facts(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("facts.md", FACTS)))


def judge_for(server: JudgeServer, **settings: Any) -> Judge:
    server.responder = answering
    return Judge(model="m", base_url=server.url, api_key=SECRET_KEY, **settings)


def users(server: JudgeServer) -> list[str]:
    return [request["messages"][1]["content"] for request in server.requests]


def test_the_examples_come_after_the_body_and_before_the_candidate(facts: Rubric) -> None:
    user = render(facts, "It opened in 1931.", context="The bridge opened in spring.")[1]["content"]
    body, examples, candidate = (
        user.index("# Grounded facts"),
        user.index("## Worked examples: how this rubric was applied"),
        user.index("## Source context [context]"),
    )
    assert body < examples < candidate
    shown = user[examples:candidate]
    assert "### Example 1: invented-year" in shown and "### Example 2: faithful" in shown
    assert f"```\nThe bridge opened in 1931, {EXAMPLE_TEXT}.\n```" in shown
    assert "Verdict: fail\n\nWhy: The year is nowhere in the context." in shown
    assert "Verdict: pass" in shown and "[" not in shown  # no block id: nothing to cite there


@pytest.mark.parametrize(
    ("settings", "requests"),
    [
        ({}, 1),
        ({"mode": "checklist"}, 1),
        ({"mode": "checklist", "answers": "probability"}, 1),
        ({"mode": "checklist", "answers": "one-call"}, 1),
    ],
    ids=["holistic", "checklist-items", "probability", "one-call"],
)
def test_every_mode_shows_the_examples_before_the_candidate(
    judge_server: JudgeServer, facts: Rubric, settings: dict[str, Any], requests: int
) -> None:
    result = judge_for(judge_server, **settings).grade(facts, "It opened in 1931.", context="c")
    assert result.verdict == "pass", result.reason
    assert len(users(judge_server)) == requests
    for user in users(judge_server):
        assert EXAMPLE_TEXT in user
        assert user.index("## Worked examples") < user.index("It opened in 1931.")


def test_a_pairwise_judgment_shows_its_examples_in_both_orders(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rubric = load_rubric(str(write_file("better.md", PAIRWISE)))
    result = judge_for(judge_server).grade(rubric, "Lyon.", baseline="Marseille.")
    assert result.verdict in ("pass", "fail"), result.reason
    shown = users(judge_server)
    assert len(shown) == 2
    for user in shown:
        assert "Verdict: the output wins" in user and "Baseline:\n```\nThe capital" in user
        assert user.index("## Worked examples") < user.index("## Response A [A]")


CITED = [
    {"block": "context", "quote": "opened in May"},
    {"block": "context", "quote": EXAMPLE_TEXT},
]
CITING = {
    "holistic": ({}, "set_grade_fail", {"citations": CITED}),
    "checklist-items": ({"mode": "checklist"}, "answer", {"answer": "yes", "citations": CITED}),
    "one-call": (
        {"mode": "checklist", "answers": "one-call"},
        "answer_checklist",
        {"invented": "yes", "invented_citations": CITED},
    ),
}


@pytest.mark.parametrize("mode", CITING)
def test_a_quote_from_an_example_is_not_verified_and_one_from_the_candidate_is(
    judge_server: JudgeServer, facts: Rubric, mode: str
) -> None:
    settings, tool, arguments = CITING[mode]
    judge = judge_for(judge_server, **settings)
    judge_server.responder = lambda body: tool_reply(tool, {"reason": "r", **arguments})
    result = judge.grade(facts, "It opened in 1931.", context="The bridge opened in May.")
    assert result.verdict == "fail", result.reason
    statuses = [(c["quote"], c["status"]) for c in given_citations(result.details)]
    assert statuses == [("opened in May", "verified"), (EXAMPLE_TEXT, "unverified")]
    assert "found_in" not in given_citations(result.details)[1]  # in no block at all


def test_an_example_is_in_the_digest_and_so_the_cache_key(
    judge_server: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    judge = judge_for(judge_server, cache=tmp_path / "cache")
    first = load_rubric(str(write_file("facts.md", FACTS)))
    judge.grade(first, "It opened in 1931.", context="c")
    assert judge.grade(first, "It opened in 1931.", context="c").details["judge"]["cached"]
    changed = FACTS.replace("nowhere in the context", "not in the context")
    second = load_rubric(str(write_file("facts.md", changed)))
    assert second.digest != first.digest
    again = judge.grade(second, "It opened in 1931.", context="c")
    assert not again.details["judge"]["cached"] and len(judge_server.requests) == 2
    tagged = FACTS.replace("    expected: pass\n", "    expected: pass\n    tags: [plain]\n")
    assert load_rubric(str(write_file("facts.md", tagged))).digest == first.digest  # for people


def test_the_prompt_size_check_counts_the_examples(
    judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    long = FACTS.replace("It opened in spring.", "It opened in spring. " + "Spring. " * 400)
    rubric = load_rubric(str(write_file("long.md", long)))
    plain = load_rubric(str(write_file("plain.md", FACTS)))
    judge = judge_for(judge_server, max_prompt_tokens=600)
    assert judge.grade(plain, "It opened in 1931.", context="c").verdict == "pass"
    refused = judge.grade(rubric, "It opened in 1931.", context="c")
    assert refused.verdict == "error" and "not judged" in refused.reason
    assert len(judge_server.requests) == 1  # the long one never sent

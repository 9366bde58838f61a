"""The pure protocol: tools per mode, reply reading on any shape, text intent, corrective turn."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from judge_server import completion

from rubriclib import Rubric, load_rubric
from rubriclib.judging.asking.protocol import RubricAsking, corrective_turn, verdict_requests
from rubriclib.judging.asking.reply import (
    JudgeVerdict,
    parse_reply,
    read_reply,
    text_intent,
    usage_of,
)
from rubriclib.judging.asking.request import (
    request_body,
    sampling,
    tool_choice,
    tool_mode,
    verdict_tools,
)


@pytest.fixture
def waza(write_file: Callable[..., Path]) -> Rubric:
    text = (Path(__file__).parents[1] / "data" / "waza-instruction-following.md").read_text()
    return load_rubric(str(write_file("waza.md", text)))


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [tool["function"]["name"] for tool in tools]


def sent(rubric: Rubric, user: str, mode: Any) -> dict[str, Any]:
    """The first-turn body a judgment sends in `mode` (as `Judgment` builds it): the system
    message of that mode, then the user message."""
    from rubriclib.judging.prompt.render import chat

    asking = RubricAsking(rubric)
    return asking.body(chat(asking.system(mode), user), mode, "m", {})


def test_tools_and_choice_per_mode(rubric: Rubric) -> None:
    assert names(verdict_tools(rubric, "required")) == ["set_grade_pass", "set_grade_fail"]
    assert names(verdict_tools(rubric, "auto")) == ["set_grade_pass", "set_grade_fail"]
    assert names(verdict_tools(rubric, "named")) == ["set_grade"]
    assert tool_choice(rubric, "required") == "required"
    assert tool_choice(rubric, "auto") == "auto"
    assert tool_choice(rubric, "named") == {"type": "function", "function": {"name": "set_grade"}}


@pytest.mark.parametrize("mode", ["required", "named", "auto"])
def test_reason_comes_first_in_every_schema(rubric: Rubric, mode: Any) -> None:
    for tool in verdict_tools(rubric, mode):
        parameters = tool["function"]["parameters"]
        assert list(parameters["properties"])[0] == "reason"
        assert parameters["required"][0] == "reason"


def test_the_named_tool_serves_a_waza_rubric_too(waza: Rubric) -> None:
    [tool] = verdict_tools(waza, "named")
    assert tool["function"]["name"] == "set_grade"
    assert read_reply(
        completion([("set_grade", {"reason": "r", "verdict": "fail"})]), waza, "named"
    ) == JudgeVerdict("fail", "r")


def test_request_body_is_json_and_carries_sampling(rubric: Rubric) -> None:
    messages = [{"role": "user", "content": "x"}]
    body = request_body(rubric, messages, "named", "m", {"temperature": 0.0, "max_tokens": 9})
    assert json.loads(json.dumps(body)) == body
    assert body["model"] == "m" and body["max_tokens"] == 9 and body["messages"] == messages


@pytest.mark.parametrize(
    ("reply", "mode", "expected"),
    [
        (
            completion([("set_grade_pass", {"reason": " ok "})]),
            "required",
            JudgeVerdict("pass", "ok"),
        ),
        (completion([("set_grade_fail", {"reason": "no"})]), "auto", JudgeVerdict("fail", "no")),
        (
            completion([("set_grade", {"reason": "r", "verdict": "pass"})]),
            "named",
            JudgeVerdict("pass", "r"),
        ),
        (
            completion([("set_grade", {"reason": "r", "verdict": "maybe"})]),
            "named",
            "verdict 'maybe', not 'pass' or 'fail'",
        ),
        (completion([("set_grade", {"verdict": "pass"})]), "named", "without a 'reason' string"),
        (
            completion([("set_grade_pass", {"reason": "r"})]),
            "named",
            "unknown tool 'set_grade_pass'",
        ),
        (
            completion([("set_grade", {"reason": "r", "verdict": "pass"})]),
            "required",
            "unknown tool 'set_grade'",
        ),
        (completion([("set_grade_pass", "null")]), "required", "not a JSON object"),
        (
            completion(content="functions.set_grade_pass:"),
            "required",
            "without a verdict tool call (text: 'functions.set_grade_pass:')",
        ),
        (None, "required", "not a JSON object"),
        ({"choices": [{"message": {"tool_calls": "x"}}]}, "required", "tool_calls is not a list"),
        (
            {"choices": [{"message": {"tool_calls": [{"function": {"name": "set_grade_pass"}}]}}]},
            "required",
            "not JSON",
        ),
        ({"choices": ["x"]}, "required", "no message"),
    ],
)
def test_read_reply(rubric: Rubric, reply: Any, mode: Any, expected: Any) -> None:
    outcome = read_reply(reply, rubric, mode)
    if isinstance(expected, JudgeVerdict):
        assert outcome == expected
    else:
        assert isinstance(outcome, str) and expected in outcome


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("functions.set_grade_pass:", "pass"),
        ("set_grade_fail", "fail"),
        ("I would call set_grade_pass, not set_grade_fail", None),
        ("PASS", None),
        ("functions.set_grade_passing", None),
        ("", None),
    ],
)
def test_text_intent(rubric: Rubric, text: str, intent: str | None) -> None:
    assert text_intent(text, rubric) == intent


def test_text_intent_uses_a_waza_rubrics_names(waza: Rubric) -> None:
    assert text_intent("functions.set_waza_grade_pass:", waza) == "pass"
    assert text_intent("functions.set_grade_pass:", waza) is None


@pytest.mark.parametrize("mode", ["required", "named", "auto"])
def test_the_corrective_turn_quotes_no_problem(rubric: Rubric, mode: Any) -> None:
    empty = completion(content="")
    [ask] = corrective_turn(empty, rubric, mode)
    assert ask["role"] == "user" and ask["content"].startswith("Please give your verdict now")
    assert "meets the rubric" in ask["content"] and "does not" in ask["content"]
    with_text = corrective_turn(completion(content="  hmm \n ok "), rubric, mode)
    assert with_text[0] == {"role": "assistant", "content": "hmm ok"}


def test_usage_of_counts_only_integers() -> None:
    assert usage_of(completion()) == {"prompt_tokens": 11, "completion_tokens": 7}
    assert usage_of({"usage": {"prompt_tokens": "lots", "completion_tokens": True}}) == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
    }
    assert usage_of([1]) == {"prompt_tokens": 0, "completion_tokens": 0}


@pytest.mark.parametrize("name", ["groundedness", "answer-correctness"])
@pytest.mark.parametrize("mode", ["required", "named", "auto"])
def test_the_protocol_costs_at_most_150_prompt_tokens_and_citations_at_most_320(
    name: str, mode: Any
) -> None:
    """System message plus tool schemas, estimated at four characters a token: with citations
    off, and with the `citations` argument (its schema in each tool, its line in the system
    message)."""
    from rubriclib import render

    for policy, limit in (("off", 150), ("required", 320)):
        rubric = load_rubric(name).model_copy(update={"citations": policy})
        body = sent(rubric, render(rubric, "x")[1]["content"], mode)
        system = body["messages"][0]["content"]
        tools = json.dumps(verdict_tools(rubric, mode))
        assert (len(system) + len(tools)) / 4 <= limit
        assert ("citations" in tools) == ("citations" in system) == (policy != "off")


def test_the_static_prefix_comes_first(rubric: Rubric) -> None:
    """System message, then the rubric body, then the values, the candidate last: a provider's
    prompt cache can reuse everything before the values."""
    from rubriclib import render

    one = render(rubric, "first output", context="same")
    two = render(rubric, "second output", context="same")
    assert one[0] == two[0]
    shared = len(rubric.body)
    assert one[1]["content"][:shared] == two[1]["content"][:shared] == rubric.body


def test_the_tool_mode_follows_the_quirks_learned(rubric: Rubric, scored: Rubric) -> None:
    assert tool_mode(rubric, set()) == "required"
    assert tool_mode(rubric, set(), correcting=True) == "named"
    assert tool_mode(rubric, {"no_required_tool_choice"}) == "named"
    both = {"no_required_tool_choice", "no_named_tool_choice"}
    assert tool_mode(rubric, both) == "auto"
    assert tool_mode(rubric, both, correcting=True) == "auto"
    assert tool_mode(scored, set()) == "named"
    assert tool_mode(scored, {"no_named_tool_choice"}) == "auto"


def test_sampling_is_shaped_by_the_quirks_learned() -> None:
    assert sampling(0.0, 1024, set()) == {"temperature": 0.0, "max_tokens": 1024}
    assert sampling(0.7, 1024, {"no_temperature"}) == {"max_tokens": 1024}
    assert sampling(0.7, 64, {"max_completion_tokens"}) == {
        "temperature": 0.7,
        "max_completion_tokens": 64,
    }
    assert sampling(None, None, set()) == {}


def test_a_reply_body_that_is_not_json_parses_to_none() -> None:
    assert parse_reply(b'{"choices": []}') == {"choices": []}
    assert parse_reply(b"<html>bad gateway</html>") is None
    assert parse_reply(None) is None


TOOL_NAME = re.compile(r"\bset_\w+")


@pytest.mark.parametrize("name", ["groundedness", "answer-correctness", "preference"])
@pytest.mark.parametrize("mode", ["required", "named", "auto"])
def test_the_messages_name_exactly_the_tools_offered(name: str, mode: Any) -> None:
    """Every scale in every mode: the system and user messages of a request name the tools
    of that request and no other (the body words its verdict without tool names)."""
    from rubriclib.item import Item
    from rubriclib.judging.prompt.render import item_messages

    rubric = load_rubric(name)
    item = Item(output="x", input="q", context="c", reference="r", baseline="y")
    rendered = item_messages(rubric, item)
    asked = verdict_requests(rubric, item, None)
    assert len(asked) == len(rendered) == (2 if rubric.scale == "pairwise" else 1)
    for messages, (prompt, _) in zip(rendered, asked, strict=True):
        body = sent(rubric, prompt.user, mode)
        offered = set(names(body["tools"]))
        named = {
            found for message in body["messages"] for found in TOOL_NAME.findall(message["content"])
        }
        assert named == offered, (named, offered)
        assert body["messages"][1:] == messages[1:]  # only the system message is the mode's


def test_render_shows_the_messages_of_the_first_mode_tried(rubric: Rubric) -> None:
    """`render` (and `rubriclib render`) show what the first mode sends; the fixture's body
    names `set_grade_pass`, as rubrics written before tool modes did: named mode says what it
    stands for."""
    from rubriclib import render

    messages = render(rubric, "x")
    first = tool_mode(rubric, set())
    assert first == "required"
    assert sent(rubric, messages[1]["content"], first)["messages"] == messages
    named = sent(rubric, messages[1]["content"], "named")["messages"][0]["content"]
    assert (
        "Reply only with a call to `set_grade`, reason first, then the verdict: pass if the "
        "output meets the rubric, else fail (the rubric's `set_grade_pass` and `set_grade_fail`). "
        "Cite evidence in `citations`" in named
    )


def test_a_waza_body_keeps_its_tools_and_named_mode_says_what_they_stand_for(waza: Rubric) -> None:
    from rubriclib import render

    user = render(waza, "x")[1]["content"]
    required = sent(waza, user, "required")["messages"][0]["content"]
    assert "`set_waza_grade_pass`" in required and "`set_grade`" not in required
    named = sent(waza, user, "named")["messages"][0]["content"]
    assert "a call to `set_grade`" in named
    assert "(the rubric's `set_waza_grade_pass` and `set_waza_grade_fail`)" in named

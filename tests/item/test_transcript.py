"""Agent runs read into one model from every shape they are recorded in, and broken runs
named message by message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rubriclib.item import Item, as_item
from rubriclib.item.transcript import TranscriptError, read_transcript

RUNS = Path(__file__).parents[1] / "data" / "runs"
SHAPES = {
    "openai_chat.json": "openai-chat",
    "anthropic.json": "anthropic",
    "responses.json": "openai-responses",
}


def run(name: str) -> Any:
    return json.loads((RUNS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", SHAPES)
def test_the_same_run_in_every_shape_reads_to_the_same_messages(name: str) -> None:
    transcript = read_transcript(run(name))
    assert transcript.shape == SHAPES[name]
    reference = read_transcript(run("openai_chat.json"))
    assert transcript.messages == reference.messages
    roles = [message.role for message in transcript.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user", "assistant",
                     "tool", "assistant"]  # fmt: skip
    lookup, refund = transcript.messages[2], transcript.messages[6]
    assert lookup.text == "Let me look up that order."
    assert [(c.id, c.name, c.arguments) for c in lookup.tool_calls] == [
        ("call_1", "get_order", {"order_id": "A-17"})
    ]
    assert refund.tool_calls[0].arguments == {"order_id": "A-17", "amount": 12.5}
    assert transcript.messages[3].answers == "call_1"
    assert transcript.final_answer == "Done: $12.50 is on its way back to your card."


def test_anthropic_thinking_tool_errors_and_images_are_kept() -> None:
    transcript = read_transcript(
        [
            {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                         {"type": "image", "source": {"type": "base64"}}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should search.", "signature": "x"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "mug"}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "timeout", "is_error": True},
                {"type": "text", "text": "Try again?"},
            ]},
        ]
    )  # fmt: skip
    user, assistant, result, again = transcript.messages
    assert user.text == "What is this?\n(image not shown)"
    assert assistant.thinking == "I should search.\n(redacted thinking)"
    assert (result.role, result.text, result.is_error) == ("tool", "timeout", True)
    assert (again.role, again.text) == ("user", "Try again?")
    assert transcript.final_answer is None


def test_responses_reasoning_and_encrypted_reasoning_are_thinking() -> None:
    transcript = read_transcript(
        [
            {"role": "user", "content": "Plan my day"},
            {"type": "reasoning", "id": "r1", "summary": [{"type": "summary_text", "text": "Check the calendar."}]},
            {"type": "function_call", "call_id": "c1", "name": "calendar", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "[]"},
            {"type": "reasoning", "id": "r2", "summary": [], "encrypted_content": "gAAA"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Free all day."}]},
        ]
    )  # fmt: skip
    first, second = transcript.messages[1], transcript.messages[3]
    assert (first.thinking, first.tool_calls[0].arguments) == ("Check the calendar.", {})
    assert second.thinking == "(reasoning not readable: encrypted)"
    assert second.text == "Free all day."


def problems(value: Any) -> list[tuple[str, str]]:
    with pytest.raises(TranscriptError) as caught:
        read_transcript(value)
    return caught.value.problems


def test_a_broken_run_names_every_message_and_what_is_wrong() -> None:
    found = problems(
        [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "nowhere", "content": "ok"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
            ]},
            {"role": "robot", "content": "beep"},
            {"role": "tool", "content": "lost"},
        ]
    )  # fmt: skip
    assert found == [
        ("transcript[2].tool_calls[0].function.arguments",
         "is not JSON (Expecting property name enclosed in double quotes at character 1)"),
        ("transcript[3].role",
         "unknown role 'robot'; roles here are system, developer, user, assistant, tool"),
        ("transcript[4].tool_call_id", "a tool message needs the id of its call"),
        ("transcript[1]", "answers call 'nowhere', which is not earlier in the run"),
    ]  # fmt: skip


def test_a_result_before_its_call_is_not_answered() -> None:
    found = problems(
        [
            {"role": "tool", "tool_call_id": "c1", "content": "early"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
        ]
    )  # fmt: skip
    assert found == [("transcript[0]", "answers call 'c1', which is not earlier in the run")]


def test_shapes_mixed_in_one_run_are_refused() -> None:
    found = problems(
        [
            {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "x"}]},
        ]
    )  # fmt: skip
    assert found == [
        ("transcript[1]", "a 'tool_result' block is Anthropic Messages, but transcript[0] is "
         "OpenAI chat: a run is recorded in one shape")
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([], "must be a non-empty list of messages (an agent run), not an empty list"),
        ("user: hi", "must be a non-empty list of messages (an agent run), not str"),
        ({"messages": [], "tools": []}, "unknown key 'tools'; a run has messages, system"),
    ],
)
def test_what_is_not_a_run_says_so(value: Any, expected: str) -> None:
    assert problems(value) == [("transcript", expected)]


def test_unknown_parts_and_item_types_are_problems_never_dropped() -> None:
    assert problems([{"role": "user", "content": [{"type": "hologram"}]}]) == [
        ("transcript[0].content[0]", "unknown content part 'hologram'")
    ]
    assert problems([{"type": "web_search_call", "id": "w"}, {"type": "message", "role": "user",
                                                               "content": "hi"}]) == [
        ("transcript[0].type", "unknown item type 'web_search_call'; items are message, "
         "function_call, function_call_output, reasoning")
    ]  # fmt: skip


def test_an_item_judges_a_run_on_its_final_answer_unless_given_an_output() -> None:
    item = Item(transcript=run("anthropic.json"))
    assert item.output == "Done: $12.50 is on its way back to your card."
    assert Item(transcript=run("anthropic.json"), output="mine").output == "mine"
    ends_on_a_call = run("openai_chat.json")[:8]
    assert (
        Item(transcript=ends_on_a_call).output == "Order A-17 is a mug for $12.50. Shall I "
        "refund it to your card?"
    )
    assert Item(transcript=[{"role": "user", "content": "hi"}]).output == ""


def test_a_bad_run_in_an_item_names_the_message_and_nothing_else() -> None:
    with pytest.raises(TranscriptError) as caught:
        as_item({"transcript": [{"role": "robot", "content": "x"}]}, "items[3]")
    assert str(caught.value) == (
        "items[3].transcript[0].role: unknown role 'robot'; roles here are system, developer, "
        "user, assistant, tool"
    )


def test_a_run_gives_the_input_a_rubric_requires_when_it_holds_a_request() -> None:
    from rubriclib.item import missing_fields

    requires = ["input", "transcript", "context"]
    assert missing_fields(requires, Item(transcript=run("responses.json"))) == ["context"]
    no_request = [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hi"},
    ]
    assert missing_fields(requires, Item(transcript=no_request)) == ["input", "context"]
    assert missing_fields(requires, Item(output="x", input=" ")) == [
        "input",
        "transcript",
        "context",
    ]


def chat_call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip


def answered_by(transcript: Any) -> list[tuple[int, str, int]]:
    """`(result index, tool, call's message index)` for each tool result."""
    return [
        (index, pair[1].name, pair[0])
        for index, pair in enumerate(transcript.pairing.calls)
        if pair is not None
    ]


def test_ids_reused_across_turns_pair_each_result_with_the_nearest_open_call() -> None:
    # A local server numbers calls per reply: call_0 in four turns, call_1 beside one of them.
    transcript = read_transcript(run("reused_ids.json"))
    assert answered_by(transcript) == [
        (3, "get_reservation", 2),
        (5, "search_flights", 4),
        (6, "get_voucher", 4),
        (8, "calculate", 7),
        (12, "update_reservation", 11),
    ]
    assert transcript.pairing.notes == ()


def test_ids_reused_within_one_turn_are_answered_in_order_or_by_the_tool_they_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls = [chat_call("call_0", "weather", city="Paris"), chat_call("call_0", "time", city="Rome")]
    turn = {"role": "assistant", "content": None, "tool_calls": calls}
    warnings: list[tuple[str, str]] = []
    in_order = read_transcript([turn, {"role": "tool", "tool_call_id": "call_0", "content": "9"},
                                {"role": "tool", "tool_call_id": "call_0", "content": "10:00"}],
                               warnings=warnings)  # fmt: skip
    assert answered_by(in_order) == [(1, "weather", 0), (2, "time", 0)]
    assert warnings == [("transcript[1]", "call id 'call_0' is used by 2 open calls in "
                         "transcript[0] (time, weather); paired with the first, 'weather' (a tool "
                         "result that names its tool settles it)")]  # fmt: skip
    assert not caplog.records  # given a list, nothing is logged
    named = read_transcript([turn,
        {"role": "tool", "tool_call_id": "call_0", "name": "time", "content": "10:00"},
        {"role": "tool", "tool_call_id": "call_0", "name": "weather", "content": "9"}])  # fmt: skip
    assert answered_by(named) == [(1, "time", 0), (2, "weather", 0)]
    assert not caplog.records  # the names settle it


def test_a_result_whose_tool_name_disagrees_or_that_answers_twice_is_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    messages = [
        {"role": "assistant", "tool_calls": [chat_call("c1", "calculate", expression="1+1")]},
        {"role": "tool", "tool_call_id": "c1", "name": "book", "content": "Booked."},
        {"role": "tool", "tool_call_id": "c1", "content": "2"},
    ]
    with caplog.at_level("WARNING", logger="rubriclib"):
        transcript = read_transcript(messages)
    assert answered_by(transcript) == [(1, "calculate", 0), (2, "calculate", 0)]
    assert [record.getMessage() for record in caplog.records] == [
        "transcript[1]: names tool 'book', but call 'c1' it answers (in transcript[0]) is to "
        "'calculate'",
        "transcript[2]: answers call 'c1' in transcript[0], which already has a result: shown "
        "under that call again",
    ]


def test_calls_recorded_without_ids_get_unique_stable_ids() -> None:
    no_id = {"type": "function", "function": {"name": "ping", "arguments": "{}"}}
    messages = [
        {"role": "assistant", "tool_calls": [no_id, no_id, chat_call("call-M1-2", "ping")]},
        {"role": "assistant", "tool_calls": [no_id]},
    ]
    ids = [[call.id for call in m.tool_calls] for m in read_transcript(messages).messages]
    assert ids == [["call-M1-1", "call-M1-2'", "call-M1-2"], ["call-M2-1"]]
    assert ids == [[c.id for c in m.tool_calls] for m in read_transcript(messages).messages]


def test_a_lone_surrogate_is_refused_in_every_way_a_run_is_given() -> None:
    chat = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": '"\\udc00"'},
                }
            ],
        },
    ]
    with pytest.raises(TranscriptError) as from_chat:
        read_transcript(chat)
    assert from_chat.value.problems == [
        (
            "transcript[1]",
            "holds a lone surrogate '\\udc00' (in its tool_calls), which is not text: no UTF-8 "
            "can carry it to a judge",
        )
    ]
    canonical = {"shape": "openai-chat", "messages": [{"role": "user", "text": "a\ud800"}]}
    with pytest.raises(TranscriptError) as from_canonical:
        read_transcript(canonical)
    assert [where for where, _ in from_canonical.value.problems] == ["transcript.messages[0]"]
    paired = json.loads('"\\ud83d\\ude00 is a pair of escapes: one character"')
    assert read_transcript([{"role": "user", "content": paired}]).messages[0].text == paired

"""Recorded letta runs for the tests: letta's message objects as JSON, as letta's client reads
them from an agent (`letta_client.types.agents.Message`, told apart by `message_type`), and the
extractor settings that the parity tests run through letta-evals' own extractors and ours."""

from __future__ import annotations

import json
from typing import Any

WHEN = "2026-01-01T09:00:00Z"


def message(kind: str, number: int, **fields: Any) -> dict[str, Any]:
    """One of letta's message objects, with the id and date every one carries."""
    return {"message_type": kind, "id": f"message-{number}", "date": WHEN, **fields}


def call(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"tool_call_id": call_id, "name": name, "arguments": text}


LOOKUP = call("call-1", "lookup_order", {"order": 7})
REFUND = call("call-2", "refund", {"order": 7, "amount": 20})
LOOKUP_8 = call("call-3", "lookup_order", {"order": 8})

FIRST_TURN = [
    message(
        "system_message",
        0,
        content="You are Tallyboard's support agent. Never refund a shipped order.",
    ),
    message("user_message", 1, content="Where is order 7? Refund it if you can."),
    message("reasoning_message", 2, reasoning="Look the order up first.", source="reasoner_model"),
    message("tool_call_message", 3, tool_call=LOOKUP, tool_calls=[LOOKUP]),
    message(
        "tool_return_message",
        4,
        tool_call_id="call-1",
        tool_return='{"status": "shipped", "day": "Monday"}',
        status="success",
        stdout=["looked up order 7\n"],
    ),
    message("assistant_message", 5, content="Order 7 shipped on Monday. ANSWER: shipped"),
]
SECOND_TURN = [
    message("user_message", 6, content=[{"type": "text", "text": "And order 8? Refund 7 anyway."}]),
    message("hidden_reasoning_message", 7, state="redacted"),
    message("tool_call_message", 8, tool_call=REFUND, tool_calls=[REFUND, LOOKUP_8]),
    message(
        "tool_return_message",
        9,
        tool_call_id="call-2",
        tool_return="refund refused: order 7 has shipped",
        status="error",
    ),
    message(
        "tool_return_message",
        10,
        tool_call_id="call-3",
        tool_return='{"status": "packing"}',
        status="success",
    ),
    message(
        "assistant_message",
        11,
        content=[
            {"type": "text", "text": "Order 8 is being packed."},
            {
                "type": "text",
                "text": "I could not refund order 7: it has shipped (ref R-77, 20 EUR).",
            },
        ],
    ),
]
RUN = FIRST_TURN + SECOND_TURN
"""A support agent's run: a system and user message, reasoning (shown and redacted), calls
(one `tool_call`, then two `tool_calls` in one message), returns (one an error, one with
stdout), and answers as text and as content parts."""

RUNS: dict[str, list[Any]] = {
    "one-turn": RUN,
    "two-turns": [FIRST_TURN, SECOND_TURN],
    "no-answer": [
        message("user_message", 0, content="Cancel my plan."),
        message("tool_call_message", 1, tool_call=call("c-1", "cancel_plan", {})),
        message("tool_return_message", 2, tool_call_id="c-1", tool_return="", status="success"),
    ],
    "empty-answer": [
        message("user_message", 0, content="Hello?"),
        message("assistant_message", 1, content=""),
        message("assistant_message", 2, content=[]),
    ],
    "repeated-call": [
        message("user_message", 0, content="Check orders 1 and 2."),
        message("tool_call_message", 1, tool_call=call("a", "lookup_order", {"order": 1})),
        message("tool_call_message", 2, tool_call=call("b", "lookup_order", {"order": 2})),
        message("tool_return_message", 3, tool_call_id="b", tool_return="two", status="success"),
        message("tool_return_message", 4, tool_call_id="a", tool_return="one", status="success"),
        message("assistant_message", 5, content="Order 1: one. Order 2: two. ANSWER: one, two"),
    ],
}
"""Runs the extractors are compared on: flat (one turn, as letta-evals 0.26 fetches an agent's
history) and as a trajectory of turns, with no answer, empty answers, and one tool called twice."""

EXTRACTORS: list[tuple[str, dict[str, Any]]] = [
    ("last_assistant", {}),
    ("first_assistant", {}),
    ("all_assistant", {}),
    ("all_assistant", {"separator": " // "}),
    ("last_turn", {}),
    ("last_turn", {"separator": "|"}),
    ("pattern", {"pattern": r"ref (R-\d+)", "group": 1}),
    ("pattern", {"pattern": r"\d+"}),
    ("pattern", {"pattern": r"(\d+) (EUR)?", "search_all": True, "group": 1}),
    ("pattern", {"pattern": r"Order \d+", "search_all": True}),
    ("pattern", {"pattern": r"Order (?P<order>\d+)", "group": "order"}),
    ("pattern", {"pattern": r"(nothing)?Order", "group": 1}),
    ("pattern", {"pattern": r"like this"}),
    ("pattern", {"pattern": r"Order", "group": 2}),
    ("pattern", {"pattern": r"(O)(r)der", "search_all": True, "group": "x"}),
    ("tool_arguments", {"tool_name": "lookup_order"}),
    ("tool_arguments", {"tool_name": "refund"}),
    ("tool_arguments", {"tool_name": "no_such_tool"}),
    ("tool_output", {"tool_name": "lookup_order"}),
    ("tool_output", {"tool_name": "refund"}),
    ("tool_output", {"tool_name": "cancel_plan"}),
    ("tool_output", {"tool_name": "no_such_tool"}),
    ("after_marker", {"marker": "ANSWER:"}),
    ("after_marker", {"marker": "ANSWER:", "include_marker": True}),
    ("after_marker", {"marker": "not there"}),
]
"""Every built-in extractor of letta-evals 0.26 that reads only messages, with the settings
that change what it does (separators, groups, search_all, missing tools and markers), and
groups letta's `pattern` raises on once it finds a match."""

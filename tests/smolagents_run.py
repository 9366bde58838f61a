"""Write agent runs as smolagents records them: its own ToolCallingAgent and CodeAgent run a
scripted Model (no network) through tool calls, and each run's memory is saved in both forms
a user has: `agent.write_memory_to_messages()` (each message's `.dict()`) and
`agent.memory.get_full_steps()`, as JSON. Run under `.integrations/smolagents`
(`make integrations`):

    .integrations/smolagents/bin/python tests/smolagents_run.py OUT_DIR

`smolagents_messages.json` and `smolagents_steps.json` are the support run of
tests/data/runs/openai_chat.json, in two tasks (the second run with `reset=False`, so the
memory holds both), each ended by the `final_answer` tool; `smolagents_errors_*.json` have a
tool that fails, a step calling two tools at once, and a final answer refused by a check;
`smolagents_code_*.json` is a CodeAgent's run, planned first, its tools called from the Python
it writes.
tests/data/runs/ holds what it wrote; tests/item/test_smolagents.py reads those files and,
with smolagents installed, runs this again and checks they are still what it writes.
"""

from __future__ import annotations

import importlib.resources
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from smolagents import CodeAgent, ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)
from smolagents.monitoring import LogLevel

SYSTEM = "You are Acme's support agent. Confirm with the user before any refund."


class Scripted(Model):
    """A model answering with `replies` in order, one per call: `(text, [(call id, tool,
    arguments), ...])`."""

    def __init__(self, replies: list[tuple[str | None, list[tuple[str, str, Any]]]]) -> None:
        super().__init__(model_id="scripted")
        self.replies = iter(replies)

    def generate(self, messages: Any, *args: Any, **kwargs: Any) -> ChatMessage:
        text, calls = next(self.replies)
        return ChatMessage(
            role=MessageRole.ASSISTANT,
            content=text,
            tool_calls=[
                ChatMessageToolCall(
                    ChatMessageToolCallFunction(arguments, name), call_id, "function"
                )
                for call_id, name, arguments in calls
            ]
            or None,
        )


@tool
def get_order(order_id: str) -> str:
    """Look up an order.

    Args:
        order_id: The order's id, such as A-17.
    """
    return json.dumps({"order_id": order_id, "item": "mug", "paid": 12.5})


@tool
def find_order(order_id: str) -> str:
    """Look up an order by its id written without a dash.

    Args:
        order_id: The order's id, such as A17.
    """
    if "-" in order_id:
        raise ValueError("No such order: write its id without the dash.")
    return json.dumps({"order_id": order_id, "item": "mug", "paid": 12.5})


@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an order to the card it was paid with.

    Args:
        order_id: The order's id.
        amount: How much to refund.
    """
    return json.dumps({"status": "refunded"})


@tool
def get_customer(order_id: str) -> str:
    """The customer who placed an order.

    Args:
        order_id: The order's id.
    """
    return json.dumps({"name": "Ada", "orders": 3})


def templates(agent_prompts: str) -> Any:
    """smolagents' own prompt templates, with a short system prompt of ours."""
    path = importlib.resources.files("smolagents.prompts").joinpath(agent_prompts)
    loaded = yaml.safe_load(path.read_text())
    return {**loaded, "system_prompt": SYSTEM}


def support_run() -> ToolCallingAgent:
    """The support run of openai_chat.json: two tasks, each answered by `final_answer`."""
    model = Scripted(
        [
            ("Let me look up that order.", [("call_1", "get_order", {"order_id": "A-17"})]),
            (
                None,
                [
                    (
                        "call_f1",
                        "final_answer",
                        {
                            "answer": "Order A-17 is a mug for $12.50. Shall I refund it to your card?"
                        },
                    )
                ],
            ),
            (None, [("call_2", "refund", {"order_id": "A-17", "amount": 12.5})]),
            (
                None,
                [
                    (
                        "call_f2",
                        "final_answer",
                        {"answer": "Done: $12.50 is on its way back to your card."},
                    )
                ],
            ),
        ]
    )
    agent = ToolCallingAgent(
        tools=[get_order, refund],
        model=model,
        prompt_templates=templates("toolcalling_agent.yaml"),
        verbosity_level=LogLevel.OFF,
    )
    agent.run("Please refund order A-17, the mug arrived broken.")
    agent.run("Yes, please.", reset=False)
    return agent


def errors_run() -> ToolCallingAgent:
    """A tool that fails, two tools called at once, and a final answer a check refuses."""
    model = Scripted(
        [
            (
                "The order id needs checking first.",
                [("call_1", "find_order", {"order_id": "A-17"})],
            ),
            (
                None,
                [
                    ("call_2", "find_order", {"order_id": "A17"}),
                    ("call_3", "get_customer", {"order_id": "A17"}),
                ],
            ),
            (None, [("call_4", "final_answer", {"answer": "ok"})]),
            (None, [("call_5", "final_answer", {"answer": "Order A17 is Ada's mug, $12.50."})]),
        ]
    )

    def says_what(answer: Any, memory: Any, agent: Any = None) -> bool:
        return answer != "ok"

    agent = ToolCallingAgent(
        tools=[find_order, get_customer],
        model=model,
        prompt_templates=templates("toolcalling_agent.yaml"),
        final_answer_checks=[says_what],
        verbosity_level=LogLevel.OFF,
    )
    agent.run("What is order A-17, and whose?")
    return agent


def code_run() -> CodeAgent:
    """A CodeAgent: a plan, then its tools called from the Python it writes, its answer given
    by `final_answer`."""
    model = Scripted(
        [
            ("1. Look the order up.\n2. Answer with what it is.", []),
            (
                "Thought: Let me look up that order.\n<code>\n"
                'order = get_order(order_id="A-17")\nprint(order)\n</code>',
                [],
            ),
            (
                "Thought: It is a mug for $12.50.\n<code>\n"
                'final_answer("Order A-17 is a mug for $12.50.")\n</code>',
                [],
            ),
        ]
    )
    agent = CodeAgent(
        tools=[get_order],
        model=model,
        prompt_templates=templates("code_agent.yaml"),
        planning_interval=3,
        verbosity_level=LogLevel.OFF,
    )
    agent.run("What is order A-17?")
    return agent


def main(out: Path) -> None:
    for name, agent in (
        ("smolagents", support_run()),
        ("smolagents_errors", errors_run()),
        ("smolagents_code", code_run()),
    ):
        messages = [message.dict() for message in agent.write_memory_to_messages()]
        for form, saved in (("messages", messages), ("steps", agent.memory.get_full_steps())):
            text = json.dumps(saved, indent=2, ensure_ascii=False)
            (out / f"{name}_{form}.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

"""Write agent runs as Pydantic AI writes them: its own Agent runs a FunctionModel (no network)
through tool calls, and `ModelMessagesTypeAdapter.dump_json(result.all_messages())` saves the
messages. Run under `.integrations/pydantic-ai` (`make integrations`):

    .integrations/pydantic-ai/bin/python tests/pydantic_ai_run.py OUT_DIR

`pydantic_ai.json` is the support run of tests/data/runs/openai_chat.json, in two turns (the
second given the first's messages as history); `pydantic_ai_retries.json` has instructions,
thinking, a tool call retried (the tool's ModelRetry), an answer sent back by an output
validator, and an image in the prompt. tests/data/runs/ holds what it wrote;
tests/item/test_pydantic_ai.py reads those files and, with Pydantic AI installed, runs this
again and checks they are still what it writes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, ImageUrl, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

SYSTEM = "You are Acme's support agent. Confirm with the user before any refund."
SUPPORT = [
    [
        TextPart("Let me look up that order."),
        ToolCallPart("get_order", {"order_id": "A-17"}, tool_call_id="call_1"),
    ],
    [TextPart("Order A-17 is a mug for $12.50. Shall I refund it to your card?")],
    [ToolCallPart("refund", {"order_id": "A-17", "amount": 12.5}, tool_call_id="call_2")],
    [TextPart("Done: $12.50 is on its way back to your card.")],
]
RETRIES = [
    [
        ThinkingPart("The order id needs checking first."),
        ToolCallPart("get_order", '{"order_id": "A-17"}', tool_call_id="call_1"),
    ],
    [ToolCallPart("get_order", {"order_id": "A17"}, tool_call_id="call_2")],
    [TextPart("ok")],
    [TextPart("Order A17 is a mug for $12.50.")],
]


def scripted(replies: list[list[Any]]) -> FunctionModel:
    """A model answering with `replies` in order, one per call."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=replies[sum(m.kind == "response" for m in messages)])

    return FunctionModel(answer)


def support_run() -> list[ModelMessage]:
    agent = Agent(scripted(SUPPORT), system_prompt=SYSTEM)

    @agent.tool_plain
    def get_order(order_id: str) -> dict[str, Any]:
        """Look up an order."""
        return {"order_id": order_id, "item": "mug", "paid": 12.5}

    @agent.tool_plain
    def refund(order_id: str, amount: float) -> dict[str, Any]:
        """Refund an order to the card it was paid with."""
        return {"status": "refunded"}

    first = agent.run_sync("Please refund order A-17, the mug arrived broken.")
    return agent.run_sync("Yes, please.", message_history=first.all_messages()).all_messages()


def retries_run() -> list[ModelMessage]:
    agent = Agent(scripted(RETRIES), instructions="Be brief.")

    @agent.tool_plain
    def get_order(order_id: str) -> dict[str, Any]:
        """Look up an order."""
        if "-" in order_id:
            raise ModelRetry("No such order: write its id without the dash.")
        return {"order_id": order_id, "paid": 12.5}

    @agent.output_validator
    def says_what(output: str) -> str:
        if output == "ok":
            raise ModelRetry("Say what the order is.")
        return output

    prompt = ["What is order A-17?", ImageUrl("https://example.com/mug.png")]
    return agent.run_sync(prompt).all_messages()


def main(out: Path) -> None:
    for name, messages in (("pydantic_ai", support_run()), ("pydantic_ai_retries", retries_run())):
        (out / f"{name}.json").write_bytes(ModelMessagesTypeAdapter.dump_json(messages, indent=2))


if __name__ == "__main__":
    main(Path(sys.argv[1]))

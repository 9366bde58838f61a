"""The Acme refund run (tests/data/runs/openai_chat.json) recorded by the real libraries: the
anthropic and openai SDKs against a scripted server on 127.0.0.1 (their `Message` and
`Response` objects dumped as a person logs them), and langchain-core's own messages and dicts."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SYSTEM = "You are Acme's support agent. Confirm with the user before any refund."
ASK = "Please refund order A-17, the mug arrived broken."
LOOK = "Let me look up that order."
ORDER = '{"order_id": "A-17", "item": "mug", "paid": 12.5}'
CONFIRM = "Order A-17 is a mug for $12.50. Shall I refund it to your card?"
YES = "Yes, please."
REFUNDED = '{"status": "refunded"}'
DONE = "Done: $12.50 is on its way back to your card."
GET_ORDER = ("call_1", "get_order", {"order_id": "A-17"})
REFUND = ("call_2", "refund", {"order_id": "A-17", "amount": 12.5})


@contextmanager
def scripted(*bodies: dict[str, Any]) -> Iterator[str]:
    """A server answering each POST with the next body; yields its base URL."""
    replies = deque(json.dumps(body).encode() for body in bodies)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            data = replies.popleft()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _anthropic_reply(index: int, *blocks: dict[str, Any]) -> dict[str, Any]:
    calls = any(block["type"] == "tool_use" for block in blocks)
    return {
        "id": f"msg_0{index}", "type": "message", "role": "assistant", "model": "claude-test",
        "content": list(blocks), "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 40, "output_tokens": 12},
    }  # fmt: skip


def _tool_use(call: tuple[str, str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call[0], "name": call[1], "input": call[2]}


def anthropic_run() -> dict[str, Any]:
    """`{system, messages}` with each assistant turn the SDK's `Message`, dumped."""
    import anthropic

    text = lambda words: {"type": "text", "text": words}  # noqa: E731
    bodies = [
        _anthropic_reply(1, text(LOOK), _tool_use(GET_ORDER)),
        _anthropic_reply(2, text(CONFIRM)),
        _anthropic_reply(3, _tool_use(REFUND)),
        _anthropic_reply(4, text(DONE)),
    ]
    user_turns: list[Any] = [
        [{"type": "tool_result", "tool_use_id": "call_1", "content": ORDER}],
        YES,
        [{"type": "tool_result", "tool_use_id": "call_2", "content": [text(REFUNDED)]}],
    ]
    messages: list[Any] = [{"role": "user", "content": ASK}]
    with scripted(*bodies) as url:
        client = anthropic.Anthropic(base_url=url, api_key="test", max_retries=0)
        for turn in [*user_turns, None]:
            reply = client.messages.create(
                model="claude-test", max_tokens=1024, system=SYSTEM, messages=messages
            )
            messages.append(reply.model_dump(mode="json"))
            if turn is not None:
                messages.append({"role": "user", "content": turn})
    return {"system": SYSTEM, "messages": messages}


def _response(index: int, *output: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"resp_0{index}", "object": "response", "created_at": 1700000000, "model": "gpt-test",
        "status": "completed", "instructions": SYSTEM, "output": list(output),
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": 40, "output_tokens": 12, "total_tokens": 52,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }  # fmt: skip


def _said(index: int, words: str) -> dict[str, Any]:
    return {"type": "message", "id": f"msg_{index}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": words, "annotations": []}]}  # fmt: skip


def _function_call(call: tuple[str, str, Any]) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call[0]}", "call_id": call[0], "name": call[1],
            "arguments": json.dumps(call[2]), "status": "completed"}  # fmt: skip


def responses_run() -> tuple[list[Any], list[Any]]:
    """The run's Responses input as sent, two ways: each whole `Response` dumped in its place,
    and each Response's `output` items dumped (`input += response.output`)."""
    import openai

    bodies = [
        _response(1, _said(1, LOOK), _function_call(GET_ORDER)),
        _response(2, _said(2, CONFIRM)),
        _response(3, _function_call(REFUND)),
        _response(4, _said(4, DONE)),
    ]
    user_turns: list[Any] = [
        {"type": "function_call_output", "call_id": "call_1", "output": ORDER},
        {"role": "user", "content": [{"type": "input_text", "text": YES}]},
        {"type": "function_call_output", "call_id": "call_2", "output": REFUNDED},
    ]
    whole: list[Any] = [{"role": "user", "content": ASK}]
    items: list[Any] = [{"role": "user", "content": ASK}]
    with scripted(*bodies) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="test", max_retries=0)
        for turn in [*user_turns, None]:
            response = client.responses.create(model="gpt-test", instructions=SYSTEM, input=items)
            whole.append(response.model_dump(mode="json"))
            items.extend(item.model_dump(mode="json") for item in response.output)
            if turn is not None:
                whole.append(turn)
                items.append(turn)
    return whole, items


def langchain_messages() -> list[Any]:
    """The run as langchain-core's message objects."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    def calls(*made: tuple[str, str, Any]) -> list[Any]:
        return [{"id": id_, "name": name, "args": args} for id_, name, args in made]

    return [
        SystemMessage(SYSTEM),
        HumanMessage(ASK),
        AIMessage(LOOK, tool_calls=calls(GET_ORDER)),
        ToolMessage(ORDER, tool_call_id="call_1", name="get_order"),
        AIMessage(CONFIRM),
        HumanMessage(YES),
        AIMessage("", tool_calls=calls(REFUND)),
        ToolMessage(REFUNDED, tool_call_id="call_2", name="refund"),
        AIMessage(DONE),
    ]

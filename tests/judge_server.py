"""A scripted Chat Completions server on 127.0.0.1 for tests and benchmarks.

Each POST to /v1/chat/completions takes the next scripted reply (or asks `responder`), and
every request body is recorded, so tests can assert what the openai SDK really sent. For
benchmarks, `latency` delays every answer and `record=False` keeps only the count of requests.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    disconnect: bool = False


def completion(
    tool_calls: list[tuple[str, Any]] | None = None, content: str | None = None
) -> dict[str, Any]:
    """A chat.completion body; tool arguments that are not strings are JSON-encoded."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{index}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
            for index, (name, arguments) in enumerate(tool_calls)
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if tool_calls else "stop",
                "message": message,
            }
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def tool_reply(name: str, arguments: Any) -> Reply:
    return Reply(body=completion([(name, arguments)]))


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status, {"error": {"message": message, "type": "error", "code": None}}, headers or {}
    )


JSON_SCHEMA_REFUSAL = Reply(
    422,
    {
        "detail": [
            {
                "type": "literal_error",
                "loc": ["body", "response_format", "type"],
                "msg": "Input should be 'text' or 'json_object'",
                "input": "json_schema",
            }
        ]
    },
)
"""llama-cpp-python 0.3's answer to `response_format: {"type": "json_schema", ...}`."""


def _asks(body: dict[str, Any], kind: str) -> bool:
    asked = body.get("response_format")
    return isinstance(asked, dict) and asked.get("type") == kind


def as_json_answer(body: dict[str, Any], reply: Reply) -> Reply:
    """A scripted tool-call reply as a judge answering in JSON gives it when the request asks
    for a `response_format` (`protocol: json`): the call's arguments as the message's text,
    and a pass-fail rubric's own tool (`set_grade_pass`) as its `verdict`. Other replies (an
    error, plain text, a reply with no call) are sent as they are."""
    if not (_asks(body, "json_schema") or _asks(body, "json_object")):
        return reply
    message = reply.body["choices"][0]["message"] if isinstance(reply.body, dict) else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not calls:
        return reply
    function = calls[0]["function"]
    try:
        answer = json.loads(function["arguments"])
    except ValueError:
        answer = None
    if not isinstance(answer, dict):  # arguments that are not JSON stay text that is not JSON
        return Reply(body=completion(content=function["arguments"]), delay=reply.delay)
    name = function["name"]
    if name.endswith(("_pass", "_fail")) and "verdict" not in answer:
        answer = {"verdict": name.rsplit("_", 1)[1]} | answer
    answered = completion(content=json.dumps(answer))
    if "logprobs" in reply.body["choices"][0]:  # a checklist item's answer reads them
        answered["choices"][0]["logprobs"] = reply.body["choices"][0]["logprobs"]
    return Reply(body=answered, delay=reply.delay)


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = 128  # the listen backlog: 64 clients may connect at once, and more

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that went away mid-request (a killed worker, a cancelled run) is no error
        # of the server's: no traceback on stderr. Anything else is still printed.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


class JudgeServer:
    """The server; `url` is an OpenAI base URL. Use as a context manager or call close().

    `latency` (seconds, settable at any time) delays every chat completion, on top of a reply's
    own `delay`; with `record=False` the request bodies and headers are not kept (a long
    benchmark would hold them all), only `request_count`.
    """

    def __init__(self, latency: float = 0.0, *, record: bool = True) -> None:
        self.replies: deque[Reply] = deque()
        self.responder: Callable[[dict[str, Any]], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.request_count = 0
        self.latency = latency
        self.record = record
        self.in_flight = 0
        self.max_in_flight = 0
        self.refuse_json_schema = False
        """Refuse `response_format: json_schema` as llama-cpp-python's server does (HTTP 422),
        taking only its `json_object` form."""
        self._lock = threading.Lock()
        self._http = _HTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def close(self) -> None:
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> JudgeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.request_count += 1
            if self.record:
                self.requests.append(body)
            if self.refuse_json_schema and _asks(body, "json_schema"):
                return JSON_SCHEMA_REFUSAL
            if self.replies:
                return as_json_answer(body, self.replies.popleft())
        if self.responder is not None:
            return as_json_answer(body, self.responder(body))
        return error_reply(500, "the test scripted no reply for this request")


def _handler_for(server: JudgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else headers and body wait on delayed ACKs (~40 ms)

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/").endswith("/models"):
                self._send(
                    Reply(body={"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                )
            else:
                self._send(error_reply(404, "not found"))

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.endswith("/chat/completions"):
                self._send(error_reply(404, "not found"))
                return
            with server._lock:
                if server.record:
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                reply = server._next_reply(body)
                if server.latency or reply.delay:
                    time.sleep(server.latency + reply.delay)
                if reply.disconnect:
                    self.close_connection = True
                    self.connection.close()
                    return
                self._send(reply)
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _send(self, reply: Reply) -> None:
            """Status line, headers and body in one write (one segment for a small reply)."""
            data = (
                json.dumps(reply.body).encode() if not isinstance(reply.body, bytes) else reply.body
            )
            phrase = self.responses[reply.status][0] if reply.status in self.responses else ""
            headers = {
                "Server": self.version_string(),
                "Date": self.date_time_string(),
                "Content-Type": "application/json",
                "Content-Length": str(len(data)),
                **reply.headers,
            }
            connection = next((v for k, v in headers.items() if k.lower() == "connection"), "")
            connection = connection.lower()
            if connection == "close":
                self.close_connection = True
            elif connection == "keep-alive":
                self.close_connection = False
            head = f"{self.protocol_version} {reply.status} {phrase}\r\n" + "".join(
                f"{name}: {value}\r\n" for name, value in headers.items()
            )
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(head.encode("latin-1") + b"\r\n" + data)

    return Handler

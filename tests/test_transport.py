"""The lean HTTP/1.1 client: keep-alive, answers framed every way HTTP allows, dead and stale
connections, timeouts, and when the openai SDK's client is used instead."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, error_reply, tool_reply

from rubriclib.failures import EndpointError, describe, signal_kind
from rubriclib.judge import Judge
from rubriclib.registry import load_rubric
from rubriclib.transport import LeanTransport, display_url, lean_usable

VERDICT = json.dumps(
    {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {
                                "name": "set_grade_pass",
                                "arguments": json.dumps({"reason": "fine"}),
                            },
                        }
                    ],
                }
            }
        ]
    }
).encode()


def ok(body: bytes, *headers: str) -> bytes:
    head = "".join(f"{header}\r\n" for header in headers)
    return f"HTTP/1.1 200 OK\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body


class RawServer:
    """A TCP server on 127.0.0.1 that answers each request with scripted raw bytes (None: close
    the connection without answering; b"": never answer), recording requests and connections."""

    def __init__(self, *answers: bytes | None, close_after_answer: bool = False) -> None:
        self.answers = list(answers)
        self.close_after_answer = close_after_answer
        self.requests: list[bytes] = []
        self.connections = 0

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                self.requests.append(head + await reader.readexactly(length))
                answer = self.answers.pop(0)
                if answer is None:
                    break
                if not answer:  # stay silent until the client gives up
                    await reader.read()
                    break
                writer.write(answer)
                await writer.drain()
                if self.close_after_answer:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(scenario())


def test_one_connection_carries_every_request_and_the_headers_the_endpoint_needs() -> None:
    raw = RawServer(ok(VERDICT), ok(VERDICT))

    async def scenario() -> list[bytes]:
        async with raw as url:
            transport = LeanTransport(url, SECRET_KEY)
            replies = [await transport.post("/chat/completions", b"{}", 5) for _ in range(2)]
            await transport.aclose()
            return replies

    assert run(scenario) == [VERDICT, VERDICT]
    assert raw.connections == 1
    head = raw.requests[0].decode()
    assert head.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
    assert f"Authorization: Bearer {SECRET_KEY}\r\n" in head
    assert "Host: 127.0.0.1:" in head and "Content-Length: 2\r\n" in head


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"".join(
            f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in (VERDICT[:50], VERDICT[50:])
        )
        + b"0\r\n\r\n",
        ok(gzip.compress(VERDICT), "Content-Encoding: gzip"),
        b"HTTP/1.1 100 Continue\r\n\r\n" + ok(VERDICT),
        b"HTTP/1.0 200 OK\r\n\r\n" + VERDICT,  # no length: the body runs to the close
    ],
    ids=["chunked", "gzip", "100-continue", "read-to-close"],
)
def test_every_way_of_framing_an_answer_is_read(answer: bytes) -> None:
    raw = RawServer(answer, close_after_answer=True)

    async def scenario() -> bytes:
        async with raw as url:
            return await LeanTransport(url, SECRET_KEY).post("/chat/completions", b"{}", 5)

    assert run(scenario) == VERDICT


def test_a_kept_alive_connection_the_server_closed_is_replaced_without_an_error() -> None:
    # The server answers and then closes, without saying so: the next request finds it dead.
    raw = RawServer(ok(VERDICT), ok(VERDICT), close_after_answer=True)

    async def scenario() -> list[bytes]:
        async with raw as url:
            transport = LeanTransport(url, SECRET_KEY)
            first = await transport.post("/chat/completions", b"{}", 5)
            await asyncio.sleep(0.05)
            return [first, await transport.post("/chat/completions", b"{}", 5)]

    assert run(scenario) == [VERDICT, VERDICT]
    assert raw.connections == 2


def test_connection_close_is_honoured() -> None:
    raw = RawServer(ok(VERDICT, "Connection: close"), ok(VERDICT))

    async def scenario() -> None:
        async with raw as url:
            transport = LeanTransport(url, SECRET_KEY)
            for _ in range(2):
                await transport.post("/chat/completions", b"{}", 5)

    run(scenario)
    assert raw.connections == 2


def failure(url_of: Callable[[str], str], raw: RawServer, timeout: float = 5) -> EndpointError:
    async def scenario() -> EndpointError:
        async with raw as url:
            try:
                await LeanTransport(url_of(url), SECRET_KEY).post("/x", b"{}", timeout)
            except EndpointError as error:
                return error
        raise AssertionError("no EndpointError")

    return run(scenario)  # type: ignore[no-any-return]


def test_a_status_answer_is_worded_as_the_sdk_words_it_with_its_headers() -> None:
    body = json.dumps({"error": {"message": "slow down"}}).encode()
    error = failure(lambda url: url, RawServer(ok(body).replace(b"200 OK", b"429 Too Many"), None))
    assert (error.status, error.message, error.body) == (
        429,
        "Error code: 429 - slow down",
        {"message": "slow down"},
    )
    assert error.headers["content-length"] == str(len(body))
    assert signal_kind(error) == "rate_limited"


@pytest.mark.parametrize(
    ("answer", "cause"),
    [
        (None, "the server closed the connection without answering"),
        (b"SMTP ready\r\n\r\n", "the connection failed"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 999\r\n\r\n{}", "the connection failed"),
    ],
    ids=["closed", "not-http", "cut-short"],
)
def test_a_broken_answer_is_a_connection_failure(answer: bytes | None, cause: str) -> None:
    error = failure(lambda url: url, RawServer(answer, close_after_answer=True))
    assert error.status is None and not error.timed_out
    assert describe(error).startswith(cause) and signal_kind(error) == "connection"


def test_a_closed_port_and_a_silent_server_are_told_apart() -> None:
    refused = failure(lambda url: url.replace(url.split(":")[2].split("/")[0], "9"), RawServer())
    assert describe(refused).startswith("cannot connect to the endpoint (")
    assert signal_kind(refused) == "connection"

    timed_out = failure(lambda url: url, RawServer(b""), timeout=0.2)
    assert timed_out.timed_out and describe(timed_out) == "the request timed out"
    assert signal_kind(timed_out) == "failed"


def test_the_lean_client_is_used_only_where_no_proxy_applies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        for variant in (name, name.upper()):
            monkeypatch.delenv(variant, raising=False)
    assert lean_usable("http://127.0.0.1:8000/v1") and lean_usable(None)
    assert not lean_usable("unix:///tmp/judge.sock")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert not lean_usable(None) and lean_usable("http://127.0.0.1:8000/v1")
    monkeypatch.setenv("NO_PROXY", "api.openai.com")
    assert lean_usable("https://api.openai.com/v1")


@pytest.mark.parametrize("transport", ["auto", "sdk"])
def test_both_clients_give_the_same_results_and_failures(
    judge_server: JudgeServer, library: Path, transport: str
) -> None:
    """Retries after a 429 and a 500, a verdict, and a dead key stopping the run: the same
    whichever client carries the requests."""
    judge = Judge(
        model="m",
        base_url=judge_server.url,
        api_key=SECRET_KEY,
        backoff_base=0.001,
        backoff_max=0.01,
        transport=transport,  # type: ignore[arg-type]
    )
    rubric = load_rubric("keywords")
    judge_server.script(
        error_reply(429, "slow down", {"retry-after": "0"}),
        error_reply(500, "oops"),
        tool_reply("set_grade_pass", {"reason": "scripted pass"}),
    )
    [result] = judge.grade_many(rubric, [{"output": "x"}], concurrency=1)
    assert (result.verdict, result.details["judge"]["attempts"]) == ("pass", 3)

    judge_server.script(*[error_reply(401, f"bad key {SECRET_KEY}")] * 5)
    results = judge.grade_many(rubric, [{"output": str(n)} for n in range(5)], concurrency=1)
    assert [r.verdict for r in results] == ["error"] * 5
    assert results[0].reason.startswith("judge request failed after 1 attempt(s): HTTP 401")
    assert all(SECRET_KEY not in r.reason for r in results)
    assert sum(r.reason.startswith("not judged: HTTP 401") for r in results) == 4


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (None, "https://api.openai.com/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
        ("https://[2001:DB8::1]/v1", "https://[2001:db8::1]/v1"),
        ("https://user:s3cret@Example.com/v1?api-key=s3cret#s3cret", "https://example.com/v1"),
        ("http://user:s3cret@host:notaport/v1", "(not a URL)"),
        ("s3cret@host/v1", "(not a URL)"),
        ("http://", "(not a URL)"),
    ],
)
def test_a_url_is_shown_without_credentials_and_with_its_ipv6_brackets(
    url: str | None, shown: str
) -> None:
    assert display_url(url) == shown
    if "://" in shown:  # a judge refuses the rest before showing them
        assert Judge(model="m", base_url=url, api_key="k").endpoint == shown

"""The aiohttp transport: keep-alive, answers framed every way HTTP allows, dead and stale
connections, timeouts, the proxy the environment names, the SDK's client giving the same results,
and no session left open by any way of judging."""

from __future__ import annotations

import asyncio
import gc
import gzip
import json
import logging
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, error_reply, tool_reply

from rubriclib.judging.endpoints.failures import EndpointError, describe, signal_kind
from rubriclib.judging.endpoints.transport import HttpTransport, display_url, proxy_for
from rubriclib.judging.judge import Judge
from rubriclib.rubrics.registry import load_rubric

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
    """A TCP server on 127.0.0.1 that answers each request with scripted raw bytes (None, or no
    answer left: close the connection without answering; b"": never answer), recording requests
    and connections."""

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
                answer = self.answers.pop(0) if self.answers else None
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


async def post(transport: HttpTransport, timeout: float = 5) -> bytes:
    return await transport.post({}, timeout=timeout, custom_id="request-1")


def test_one_connection_carries_every_request_and_the_headers_the_endpoint_needs() -> None:
    raw = RawServer(ok(VERDICT), ok(VERDICT))

    async def scenario() -> list[bytes]:
        async with raw as url:
            transport = HttpTransport(url, SECRET_KEY)
            replies = [await post(transport) for _ in range(2)]
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
            transport = HttpTransport(url, SECRET_KEY)
            try:
                return await post(transport)
            finally:
                await transport.aclose()

    assert run(scenario) == VERDICT


def test_a_kept_alive_connection_the_server_closed_is_replaced_without_an_error() -> None:
    # The server answers and then closes, without saying so: the next request finds it dead.
    raw = RawServer(ok(VERDICT), ok(VERDICT), close_after_answer=True)

    async def scenario() -> list[bytes]:
        async with raw as url:
            transport = HttpTransport(url, SECRET_KEY)
            first = await post(transport)
            await asyncio.sleep(0.05)
            second = await post(transport)
            await transport.aclose()
            return [first, second]

    assert run(scenario) == [VERDICT, VERDICT]
    assert raw.connections == 2


def test_connection_close_is_honoured() -> None:
    raw = RawServer(ok(VERDICT, "Connection: close"), ok(VERDICT))

    async def scenario() -> None:
        async with raw as url:
            transport = HttpTransport(url, SECRET_KEY)
            for _ in range(2):
                await post(transport)
            await transport.aclose()

    run(scenario)
    assert raw.connections == 2


def failure(url_of: Callable[[str], str], raw: RawServer, timeout: float = 5) -> EndpointError:
    async def scenario() -> EndpointError:
        async with raw as url:
            transport = HttpTransport(url_of(url), SECRET_KEY)
            try:
                await post(transport, timeout)
            except EndpointError as error:
                return error
            finally:
                await transport.aclose()
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
    assert describe(refused) == "cannot connect to http://127.0.0.1:9/v1 (Connection refused)"
    assert signal_kind(refused) == "connection"

    timed_out = failure(lambda url: url, RawServer(b""), timeout=0.2)
    assert timed_out.timed_out and describe(timed_out) == "the request timed out"
    assert signal_kind(timed_out) == "failed"


def clear_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        for variant in (name, name.upper()):
            monkeypatch.delenv(variant, raising=False)


def test_the_proxy_is_the_one_the_standard_library_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_proxies(monkeypatch)
    assert proxy_for("http://127.0.0.1:8000/v1") is None and proxy_for(None) is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert proxy_for(None) == "http://proxy.internal:3128"
    assert proxy_for("http://127.0.0.1:8000/v1") is None
    monkeypatch.setenv("ALL_PROXY", "http://all.internal:3128")
    assert proxy_for("http://judge.example/v1") == "http://all.internal:3128"
    monkeypatch.setenv("NO_PROXY", "api.openai.com")
    assert proxy_for("https://api.openai.com/v1") is None


def test_a_proxied_request_goes_through_the_proxy_on_the_same_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clear_proxies(monkeypatch)
    proxy = RawServer(ok(VERDICT))

    async def scenario() -> bytes:
        async with proxy as url:
            monkeypatch.setenv("HTTP_PROXY", url.removesuffix("/v1"))
            transport = HttpTransport("http://judge.invalid:8000/v1", SECRET_KEY)
            try:
                return await post(transport)
            finally:
                await transport.aclose()

    assert run(scenario) == VERDICT
    head = proxy.requests[0].decode()
    assert head.startswith("POST http://judge.invalid:8000/v1/chat/completions HTTP/1.1\r\n")
    assert f"Authorization: Bearer {SECRET_KEY}\r\n" in head


def unclosed_reports(judging: Callable[[], Any], caplog: pytest.LogCaptureFixture) -> list[str]:
    """What asyncio logs and Python warns about sessions left open by `judging`."""
    caplog.set_level(logging.ERROR, logger="asyncio")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        judging()
        gc.collect()
    told = [str(warning.message) for warning in caught] + [r.getMessage() for r in caplog.records]
    return [text for text in told if "Unclosed" in text]


def test_an_ad_hoc_agrade_leaves_no_session_open(
    endpoint: JudgeServer, library: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rubric = load_rubric("keywords")

    def ad_hoc() -> None:
        judge = Judge(model="m", base_url=endpoint.url, api_key=SECRET_KEY)

        async def grade_twice() -> list[str]:  # one after another, then two at once
            first = await judge.agrade(rubric, output="verdict:pass")
            both = await asyncio.gather(
                *(judge.agrade(rubric, output="verdict:pass") for _ in range(2))
            )
            return [result.verdict for result in (first, *both)]

        assert asyncio.run(grade_twice()) == ["pass"] * 3

    def left_open() -> None:  # the detector works: a session nobody closes is reported
        transport = HttpTransport(endpoint.url, SECRET_KEY)
        messages = [{"role": role, "content": "verdict:pass"} for role in ("system", "user")]
        asyncio.run(transport.post({"messages": messages}, timeout=5, custom_id="x"))

    assert unclosed_reports(ad_hoc, caplog) == []
    assert unclosed_reports(left_open, caplog) != []


def test_a_run_keeps_one_session_until_it_closes_and_an_ad_hoc_judgment_its_own(
    library: Path,
) -> None:
    raw = RawServer(*[ok(VERDICT)] * 5)
    rubric = load_rubric("keywords")

    async def scenario() -> list[str]:
        async with raw as url:
            judge = Judge(model="m", base_url=url, api_key=SECRET_KEY)
            results = await judge.agrade_many(
                rubric, [{"output": str(n)} for n in range(3)], concurrency=1
            )
            for _ in range(2):
                results.append(await judge.agrade(rubric, output="x"))
            return [result.verdict for result in results]

    assert run(scenario) == ["pass"] * 5
    assert raw.connections == 3  # the run's one, then one per ad-hoc judgment


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


def test_the_transport_is_chosen_once_by_name_or_given() -> None:
    from rubriclib.batch.files import Recorder
    from rubriclib.judging.endpoints.transport import SdkTransport, chosen_transport

    url = "http://127.0.0.1:9/v1"
    assert isinstance(chosen_transport("auto", url, "k"), HttpTransport)
    assert isinstance(chosen_transport("sdk", url, "k"), SdkTransport)
    recorder = Recorder()
    assert chosen_transport(recorder, url, "k") is recorder


class ScriptedTransport:
    """A Transport with no server: answers every request with a pass verdict, keeping what
    it was sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], str]] = []
        self.closed = 0

    async def post(self, body: dict[str, Any], *, timeout: float, custom_id: str) -> bytes:
        self.sent.append((body, custom_id))
        call = {"id": "c1", "type": "function",
                "function": {"name": "set_grade_pass", "arguments": '{"reason": "scripted"}'}}  # fmt: skip
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        reply = {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
        return json.dumps(reply).encode()

    async def aclose(self) -> None:
        self.closed += 1


def test_grade_sends_through_an_injected_transport_as_agrade_does(library: Path) -> None:
    transport = ScriptedTransport()
    judge = Judge("m", "http://127.0.0.1:9/v1", SECRET_KEY, transport=transport)  # no server
    rubric = load_rubric("keywords")
    result = judge.grade(rubric, output="x")
    assert (result.verdict, result.reason) == ("pass", "scripted")
    assert asyncio.run(judge.agrade(rubric, output="x")).verdict == "pass"
    [(sync_body, sync_id), (async_body, async_id)] = transport.sent
    assert sync_body == async_body and sync_id == async_id  # the same request either way
    assert transport.closed == 2  # each ad-hoc judgment leaves nothing open

    async def inside_a_running_loop() -> str:
        return judge.grade(rubric, output="y").verdict

    assert asyncio.run(inside_a_running_loop()) == "pass" and len(transport.sent) == 3

"""A lean HTTP/1.1 client for the judge's async requests: keep-alive connections, one write per
request, bytes back. It costs about a tenth of the SDK's client CPU per request, which decides
throughput once many judgments are in flight (see benchmarks/cpu_profile.py).

Used for plain http/https endpoints with no proxy configured; `Judge(transport="sdk")` and
proxied endpoints keep the openai SDK's client. Failures are raised as `EndpointError`, the
same type `failures.from_sdk` makes of the SDK's exceptions."""

from __future__ import annotations

import asyncio
import os
import ssl
import urllib.parse
import urllib.request
import zlib
from typing import Any, Protocol, runtime_checkable

from rubriclib._version import __version__
from rubriclib.failures import EndpointError, status_error

DEFAULT_BASE_URL = "https://api.openai.com/v1"
MAX_HEADER_BYTES = 64 * 1024
Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]
BROKEN = (OSError, EOFError, asyncio.LimitOverrunError, ValueError, zlib.error)
"""What a connection that died, or an answer that is not HTTP, raises while being read."""


def display_url(url: str | None) -> str:
    """`url` (None: the default endpoint) for showing: scheme://host[:port]/path, with no user,
    password, query string or fragment; an IPv6 host keeps its brackets. Text that is not a
    URL with a host (and a numeric port) is shown as `(not a URL)`: it may hold anything."""
    parts = urllib.parse.urlsplit(url or DEFAULT_BASE_URL)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is not a number
        return "(not a URL)"
    host = parts.hostname or ""
    if not parts.scheme or not host:
        return "(not a URL)"
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}"


@runtime_checkable
class Poster(Protocol):
    """Anything a Judge can hand its requests to instead of sending them itself (`Judge(
    transport=poster)`): a provider Batch API, an offline request file, an offline output file.
    `custom_id` names the request (the verdict cache's key of it: the same request, trial and
    vote always get the same one); the answer is the reply's body, a failure an `EndpointError`."""

    async def post(
        self, path: str, payload: dict[str, Any], timeout: float, custom_id: str
    ) -> bytes: ...


class _Stale(Exception):
    """A kept-alive connection the server had closed: nothing was read from it."""


def lean_usable(base_url: str | None) -> bool:
    """Whether the lean client can reach `base_url`: http or https, and no proxy applies."""
    url = urllib.parse.urlsplit(base_url or DEFAULT_BASE_URL)
    if url.scheme not in ("http", "https") or not url.hostname:
        return False
    proxies = urllib.request.getproxies()
    proxied = url.scheme in proxies or "all" in proxies
    return not proxied or bool(urllib.request.proxy_bypass(url.hostname))


class LeanTransport:
    """POSTs JSON to one endpoint over a pool of keep-alive connections, in one event loop."""

    def __init__(self, base_url: str | None, api_key: str) -> None:
        url = urllib.parse.urlsplit(base_url or DEFAULT_BASE_URL)
        self._tls = url.scheme == "https"
        self._host = url.hostname or ""
        self._port = url.port or (443 if self._tls else 80)
        self._prefix = url.path.rstrip("/")
        host = f"[{self._host}]" if ":" in self._host else self._host
        default_port = self._port == (443 if self._tls else 80)
        headers = {
            "Host": host if default_port else f"{host}:{self._port}",
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"rubriclib/{__version__}",
            # The SDK sends these when they are set; so do we.
            "OpenAI-Organization": os.environ.get("OPENAI_ORG_ID"),
            "OpenAI-Project": os.environ.get("OPENAI_PROJECT_ID"),
        }
        self._headers = "".join(f"{k}: {v}\r\n" for k, v in headers.items() if v).encode()
        self._idle: list[Connection] = []
        self._ssl: ssl.SSLContext | None = None

    async def post(self, path: str, payload: bytes, timeout: float) -> bytes:
        """The response body of a 2xx answer; any other outcome raises `EndpointError`."""
        request = (
            f"POST {self._prefix}{path} HTTP/1.1\r\n".encode()
            + self._headers
            + f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        try:
            async with asyncio.timeout(timeout):
                status, headers, body = await self._exchange(request)
        except TimeoutError:
            raise EndpointError("the request timed out", timed_out=True) from None
        if status >= 300:
            raise status_error(status, headers, body)
        return body

    async def aclose(self) -> None:
        """Close every idle connection."""
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()

    async def _exchange(self, request: bytes) -> tuple[int, dict[str, str], bytes]:
        while True:
            reused = bool(self._idle)
            reader, writer = self._idle.pop() if reused else await self._connect()
            try:
                writer.write(request)
                status, headers, body, keep_alive = await _read_response(reader)
            except _Stale:
                writer.close()
                if reused:  # the server closed it while idle: send on another connection
                    continue
                raise EndpointError("the server closed the connection without answering") from None
            except BROKEN as error:
                writer.close()
                if reused and isinstance(error, ConnectionResetError):
                    continue
                cause = str(error) or type(error).__name__
                raise EndpointError(f"the connection failed ({cause})") from None
            except BaseException:  # cancelled or timed out mid-answer: the connection is spent
                writer.close()
                raise
            if keep_alive:
                self._idle.append((reader, writer))
            else:
                writer.close()
            return status, headers, body

    async def _connect(self) -> Connection:
        if self._tls and self._ssl is None:
            self._ssl = _ssl_context()
        try:
            return await asyncio.open_connection(
                self._host, self._port, ssl=self._ssl, limit=MAX_HEADER_BYTES
            )
        except OSError as error:
            raise EndpointError(f"cannot connect to the endpoint ({error})") from None


def _ssl_context() -> ssl.SSLContext:
    """Verified TLS with the CA bundle the SDK's client uses (certifi), else the system's."""
    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:
        return ssl.create_default_context()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes, bool]:
    """Status, lower-cased headers, body and whether the connection may be reused."""
    while True:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            if not error.partial:
                raise _Stale from None
            raise
        lines = head.decode("latin-1").split("\r\n")
        version, status_text, *_ = lines[0].split(" ", 2) + [""]
        status = int(status_text)
        if status >= 200:
            break  # 1xx answers (100 Continue) precede the real one
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name:
            headers[name.strip().lower()] = value.strip()
    keep_alive = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
    if status in (204, 304):
        body = b""
    elif "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunked(reader)
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:
        body, keep_alive = await reader.read(), False
    if headers.get("content-encoding", "").lower() in ("gzip", "deflate"):
        body = zlib.decompress(body, 47)  # 47: gzip or zlib header, detected
    return status, headers, body, keep_alive


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)

"""How a judge's async requests travel: `Transport`, the one interface (chosen when a Judge is
built, never swapped afterwards), and the two clients that speak HTTP through it.

- `HttpTransport`: aiohttp (async judging's client of record, proxied or not). It spends about
  a tenth of the SDK's client CPU per request, which decides throughput once many judgments
  are in flight (see benchmarks/cpu_profile.py), with a parser and connection pool that many
  services run, and it refuses control characters in headers.
- `SdkTransport`: the openai SDK's async client (`Judge(transport="sdk")`), and its sync
  client (`Judge.grade`).

The Batch API (`batch.api.BatchTransport`) and the offline batch files
(`batch.files.Recorder`, `batch.files.Answerer`) are Transports too. Every failure is an
`EndpointError`, whichever carried the request. aiohttp and openai are imported only when a
request is sent."""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from rubriclib._version import __version__
from rubriclib.judging.endpoints.failures import (
    EndpointError,
    connection_error,
    from_sdk,
    status_error,
)

if TYPE_CHECKING:
    import aiohttp
    import openai

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PATH = "/chat/completions"


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
class Transport(Protocol):
    """Carries a Judge's Chat Completions requests. `custom_id` names the request (the verdict
    cache's key of it: the same request, trial and vote always get the same one; a batch file
    keys its lines by it); the answer is the reply's body, a failure an `EndpointError`."""

    async def post(self, body: dict[str, Any], *, timeout: float, custom_id: str) -> bytes: ...

    async def aclose(self) -> None:
        """Release what the running event loop holds (connections); `post` may open them
        again."""
        ...


def proxy_for(base_url: str | None) -> str | None:
    """The proxy a request to `base_url` goes through, read as the standard library (and so
    the SDK) reads it: HTTP(S)_PROXY by scheme, else ALL_PROXY, unless NO_PROXY bypasses the
    host."""
    url = urllib.parse.urlsplit(base_url or DEFAULT_BASE_URL)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or (url.hostname and urllib.request.proxy_bypass(url.hostname)):
        return None
    return proxy


class HttpTransport:
    """POSTs JSON to one endpoint through aiohttp: one session (a keep-alive connection pool)
    per event loop, open from the first request until `aclose`."""

    def __init__(self, base_url: str | None, api_key: str) -> None:
        self.base_url = base_url
        self._url = (base_url or DEFAULT_BASE_URL).rstrip("/") + PATH
        headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"rubriclib/{__version__}",
            # The SDK sends these when they are set; so do we.
            "OpenAI-Organization": os.environ.get("OPENAI_ORG_ID"),
            "OpenAI-Project": os.environ.get("OPENAI_PROJECT_ID"),
        }
        self._headers = {name: value for name, value in headers.items() if value}
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proxy: str | None = None

    async def post(self, body: dict[str, Any], *, timeout: float, custom_id: str = "") -> bytes:
        """The response body of a 2xx answer; any other outcome raises `EndpointError`."""
        import aiohttp

        session = self._open()
        payload = json.dumps(body).encode()
        try:
            async with asyncio.timeout(timeout):
                return await self._exchange(session, payload)
        except TimeoutError:
            raise EndpointError("the request timed out", timed_out=True) from None
        except aiohttp.ClientConnectorError as error:
            raise connection_error(display_url(self.base_url), error) from None
        except aiohttp.ServerDisconnectedError:
            raise EndpointError("the server closed the connection without answering") from None
        except (aiohttp.ClientError, ValueError) as error:
            raise EndpointError(f"the connection failed ({_cause(error)})") from None

    async def _exchange(self, session: aiohttp.ClientSession, payload: bytes) -> bytes:
        async with session.post(
            self._url, data=payload, headers=self._headers, proxy=self._proxy
        ) as response:
            raw = await response.read()
            if response.status >= 300:
                headers = {name.lower(): value for name, value in response.headers.items()}
                raise status_error(response.status, headers, raw)
            return raw

    def _open(self) -> aiohttp.ClientSession:
        """This loop's session, opened on first use (with the proxy the environment names)."""
        loop = asyncio.get_running_loop()
        if self._session is not None and not self._session.closed and self._loop is loop:
            return self._session
        import aiohttp

        if self._session is not None and self._loop is not loop:
            self._session.detach()  # its loop has ended; its connections went with it
        self._proxy = proxy_for(self.base_url)
        tls = _ssl_context() if self._url.startswith("https:") or self._proxy else None
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ssl=tls if tls is not None else True),
            timeout=aiohttp.ClientTimeout(total=None),  # each post has its own limit
            trust_env=False,  # the proxy is chosen above, as the SDK chooses it
            auto_decompress=True,
        )
        self._loop = loop
        return self._session

    async def aclose(self) -> None:
        """Close this loop's session and its connections."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            if self._loop is asyncio.get_running_loop():
                await session.close()
            else:
                session.detach()


class SdkTransport:
    """POSTs through the openai SDK's async client (one per event loop), or its sync client
    (`post_sync`, what `Judge.grade` sends with), their own retries off so every request is
    counted; the SDK's exceptions become `EndpointError`s."""

    def __init__(self, base_url: str | None, api_key: str) -> None:
        self.base_url = base_url
        self._api_key = api_key
        self._client: openai.AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sync_client: openai.OpenAI | None = None

    def post_sync(self, body: dict[str, Any], *, timeout: float) -> bytes:
        if self._sync_client is None:
            import openai

            self._sync_client = openai.OpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0
            )
        try:
            return self._sync_client.post(
                PATH, body=body, cast_to=bytes, options={"timeout": timeout}
            )
        except Exception as error:
            raise from_sdk(error, display_url(self.base_url)) from None

    async def post(self, body: dict[str, Any], *, timeout: float, custom_id: str = "") -> bytes:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0
            )
            self._loop = loop
        try:
            return await self._client.post(
                PATH, body=body, cast_to=bytes, options={"timeout": timeout}
            )
        except Exception as error:
            raise from_sdk(error, display_url(self.base_url)) from None

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None and self._loop is asyncio.get_running_loop():
            await client.close()


def chosen_transport(
    choice: Literal["auto", "sdk"] | Transport, base_url: str | None, api_key: str
) -> Transport:
    """The transport a Judge sends its async requests through: "auto" is aiohttp
    (`HttpTransport`), "sdk" the openai SDK's async client; any other Transport is itself."""
    if choice == "auto":
        return HttpTransport(base_url, api_key)
    if choice == "sdk":
        return SdkTransport(base_url, api_key)
    return choice


def _cause(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _ssl_context() -> ssl.SSLContext:
    """Verified TLS with the CA bundle the SDK's client uses (certifi), else the system's."""
    try:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    except ImportError:
        return ssl.create_default_context()

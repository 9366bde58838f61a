"""What an endpoint's failure means: retry it or not, wait how long, work around which quirk,
and how to say what happened. Pure functions over `EndpointError`, which both HTTP clients
(the lean transport and the openai SDK, through `from_sdk`) raise."""

from __future__ import annotations

import contextlib
import email.utils
import json
import os
import random
import re
import socket
import ssl
import time
from collections.abc import Mapping
from typing import Any, Literal

RETRYABLE_STATUS = {408, 409, 429}
"""Besides every 5xx: statuses worth another try."""

SignalKind = Literal["ok", "rate_limited", "unusable", "connection", "failed"]


class EndpointError(Exception):
    """A request that got no 2xx answer: an HTTP status (with the parsed `body` and lower-cased
    `headers`), a timeout, or (neither) a connection that failed before an answer."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body
        self.headers = dict(headers or {})
        self.timed_out = timed_out


class EndpointUnusable(Exception):
    """A run has stopped sending to its endpoint (bad key, unknown model, nothing listening)."""


def status_error(status: int, headers: Mapping[str, str], raw: bytes) -> EndpointError:
    """The error for an HTTP answer that is not 2xx, worded as the openai SDK words it."""
    text = raw.decode("utf-8", "replace").strip()
    body: Any = text
    with contextlib.suppress(ValueError):
        body = json.loads(text)
    message = f"Error code: {status}"
    detail = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(detail, dict) and isinstance(detail.get("message"), str) and detail["message"]:
        message += f" - {detail['message']}"
    return EndpointError(message, status=status, body=detail, headers=headers)


def connection_error(url: str, error: BaseException) -> EndpointError:
    """The error for a connection to `url` (as shown: `display_url`) that failed before any
    answer, saying why as the operating system does (`Connection refused`, `Name or service not
    known`), not as the client frames it (aiohttp's `ssl:default`, httpx's `[Errno 111]`)."""
    return EndpointError(f"cannot connect to {url} ({_why_not_connected(error)})")


def _why_not_connected(error: BaseException) -> str:
    """The operating system's reason in `error` (aiohttp's `os_error`) or its causes (the
    SDK's and httpx's wrap it): a TLS failure as the ssl module says it, a name lookup's or an
    errno's words; else the first OSError's own text."""
    cause: BaseException | None = getattr(error, "os_error", None) or error
    first: OSError | None = None
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return str(cause)
        if isinstance(cause, socket.gaierror) and cause.strerror:
            return cause.strerror
        if isinstance(cause, OSError) and cause.errno and cause.errno > 0:
            return os.strerror(cause.errno)
        if first is None and isinstance(cause, OSError):
            first = cause
        cause = cause.__cause__ or cause.__context__
    return str(first or error) or type(error).__name__


def from_sdk(error: BaseException, url: str = "the endpoint") -> BaseException:
    """The openai SDK's exception as an `EndpointError` (a failed connection naming `url`, as
    shown); anything else unchanged."""
    import openai

    if isinstance(error, openai.APITimeoutError):
        return EndpointError("the request timed out", timed_out=True)
    if isinstance(error, openai.APIConnectionError):
        return connection_error(url, error)
    if isinstance(error, openai.APIStatusError):
        headers = {name.lower(): value for name, value in error.response.headers.items()}
        return EndpointError(
            error.message, status=error.status_code, body=error.body, headers=headers
        )
    return error


def is_retryable(error: BaseException) -> bool:
    """Connection errors, timeouts, 408, 409, 429 and 5xx."""
    if not isinstance(error, EndpointError):
        return False
    if error.status is None:  # a timeout or a failed connection
        return True
    return error.status in RETRYABLE_STATUS or error.status >= 500


def backoff_delay(
    retry: int, error: BaseException, base: float, ceiling: float, max_retry_after: float
) -> float:
    """Exponential backoff with jitter, or the server's Retry-After (capped)."""
    retry_after = retry_after_seconds(error)
    if retry_after is not None:
        return min(retry_after, max_retry_after)
    top = min(ceiling, base * 2.0 ** (retry - 1))
    return top * random.uniform(0.5, 1.0)


def quirk_in(error: BaseException, sent: dict[str, Any], known: set[str]) -> str | None:
    """The not-yet-known quirk an endpoint's rejection of the request body `sent` points to."""
    if not isinstance(error, EndpointError) or error.status not in (400, 422, 500):
        return None
    text = f"{error.message} {json.dumps(error.body, default=str)}".lower()
    body_message = error.body.get("message") if isinstance(error.body, dict) else error.body
    # llama-cpp-python fails an assertion on tool_choice="required": HTTP 500, empty message.
    silent_crash = error.status == 500 and not str(body_message or "").strip()
    choice = sent.get("tool_choice")  # none in a plain-text request
    response_format = sent.get("response_format")
    schema_asked = (
        isinstance(response_format, dict) and response_format.get("type") == "json_schema"
    )
    choice_quirk = "no_named_tool_choice" if isinstance(choice, dict) else "no_required_tool_choice"
    candidates = [
        (choice_quirk, choice not in (None, "auto") and ("tool_choice" in text or silent_crash)),
        ("no_logprobs", "logprobs" in text and "logprobs" in sent),
        ("no_temperature", "temperature" in text and "temperature" in sent),
        ("max_completion_tokens", "max_tokens" in text and "max_tokens" in sent),
        # llama-cpp-python: "Input should be 'text' or 'json_object'" at response_format.type
        ("no_json_schema", schema_asked and ("json_schema" in text or "response_format" in text)),
        ("no_seed", "seed" in text and "seed" in sent),
        # a conversation holding tool results refused (a judge exploring a run sends them)
        ("no_exploring", _holds_tool_results(sent) and bool(re.search("tool|role|message", text))),
        # tools refused whole (llama-server without --jinja, an Ollama model without them)
        ("no_tools", "tools" in sent and re.search(r"\btools?\b", text) is not None),
    ]
    return next((quirk for quirk, hit in candidates if hit and quirk not in known), None)


def _holds_tool_results(sent: dict[str, Any]) -> bool:
    messages = sent.get("messages")
    return isinstance(messages, list) and any(
        isinstance(message, dict) and message.get("role") == "tool" for message in messages
    )


def signal_kind(reply: Any) -> SignalKind:
    """What a request's outcome says about the endpoint as a whole: `ok`, `rate_limited`,
    `unusable` (401, 403, 404: it cannot serve this run), `connection` (nothing answered), or
    `failed` (any other failure that got an HTTP answer, or timed out)."""
    if not isinstance(reply, BaseException):
        return "ok"
    if not isinstance(reply, EndpointError) or reply.timed_out:
        return "failed"
    if reply.status is None:
        return "connection"
    if reply.status == 429:
        return "rate_limited"
    if reply.status in (401, 403, 404):
        return "unusable"
    return "failed"


def retry_after_seconds(error: BaseException) -> float | None:
    """Seconds the server asked to wait (retry-after-ms, Retry-After seconds or HTTP date)."""
    if not isinstance(error, EndpointError):
        return None
    headers = error.headers
    if (milliseconds := headers.get("retry-after-ms")) is not None:
        try:
            return max(float(milliseconds) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
        return max(moment.timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def describe(error: BaseException, key_origin: str | None = None) -> str:
    """One line on what went wrong (the caller redacts the API key: `redact`); an endpoint
    that refused the key (HTTP 401) is told with where the key came from, `key_origin`
    (`refused_key`), first, so a line cut short still says what to fix."""
    if isinstance(error, EndpointError):
        if error.status is None:
            return error.message
        status = f"HTTP {error.status}"
        if error.status == 401 and key_origin is not None:
            status += f" ({refused_key(key_origin)})"
        return f"{status}: {' '.join(error.message.split())[:300]}"
    return f"{type(error).__name__}: {error}"


def refused_key(key_origin: str) -> str:
    """What to fix when an endpoint refuses the key a request carried, by where the key came
    from (`config.judge_key`'s origin: `env NAME`, `api_key`, or `default` for none sent);
    never the key."""
    if key_origin.startswith("env "):
        return f"check the key in {key_origin.removeprefix('env ')}"
    if key_origin == "api_key":
        return "check the api_key given"
    return "no key was sent: set OPENAI_API_KEY"


def redact(text: str, secret: str | None) -> str:
    """`text` with every copy of `secret` (an API key) replaced by `[redacted]`; a secret under
    four characters is left alone, since replacing it would garble the text and hide nothing."""
    return text.replace(secret, "[redacted]") if secret and len(secret) >= 4 else text

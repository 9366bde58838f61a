"""What an endpoint's failure means: retry it or not, wait how long, work around which quirk,
and how to say what happened. Pure functions over the openai SDK's exceptions."""

from __future__ import annotations

import email.utils
import json
import random
import time
from typing import Any, Literal

import openai

RETRYABLE_STATUS = {408, 409, 429}
"""Besides every 5xx: statuses worth another try."""

SignalKind = Literal["ok", "rate_limited", "unusable", "connection", "failed"]


def is_retryable(error: BaseException) -> bool:
    """Connection errors, timeouts, 408, 409, 429 and 5xx."""
    if isinstance(error, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code in RETRYABLE_STATUS or error.status_code >= 500
    return False


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
    if not isinstance(error, openai.APIStatusError) or error.status_code not in (400, 422, 500):
        return None
    text = f"{error.message} {json.dumps(error.body, default=str)}".lower()
    body_message = error.body.get("message") if isinstance(error.body, dict) else error.body
    # llama-cpp-python fails an assertion on tool_choice="required": HTTP 500, empty message.
    silent_crash = error.status_code == 500 and not str(body_message or "").strip()
    choice = sent["tool_choice"]
    choice_quirk = "no_named_tool_choice" if isinstance(choice, dict) else "no_required_tool_choice"
    candidates = [
        (choice_quirk, choice != "auto" and ("tool_choice" in text or silent_crash)),
        ("no_temperature", "temperature" in text and "temperature" in sent),
        ("max_completion_tokens", "max_tokens" in text and "max_tokens" in sent),
    ]
    return next((quirk for quirk, hit in candidates if hit and quirk not in known), None)


def signal_kind(reply: Any) -> SignalKind:
    """What a request's outcome says about the endpoint as a whole: `ok`, `rate_limited`,
    `unusable` (401, 403, 404: it cannot serve this run), `connection` (nothing answered), or
    `failed` (any other failure that got an HTTP answer, or timed out)."""
    if not isinstance(reply, BaseException):
        return "ok"
    if isinstance(reply, openai.APITimeoutError):
        return "failed"
    if isinstance(reply, openai.APIConnectionError):
        return "connection"
    if isinstance(reply, openai.APIStatusError):
        if reply.status_code == 429:
            return "rate_limited"
        if reply.status_code in (401, 403, 404):
            return "unusable"
    return "failed"


def retry_after_seconds(error: BaseException) -> float | None:
    """Seconds the server asked to wait (retry-after-ms, Retry-After seconds or HTTP date)."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
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


def describe(error: BaseException) -> str:
    """One line on what went wrong (the caller redacts the API key)."""
    if isinstance(error, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(error, openai.APIConnectionError):
        return f"cannot connect to the endpoint ({error.__cause__ or error})"
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {' '.join(str(error.message).split())[:300]}"
    return f"{type(error).__name__}: {error}"

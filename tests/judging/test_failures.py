"""failures.py: what an endpoint's failure means, and how it is said without the key."""

from __future__ import annotations

import email.utils
import time

import httpx2
import openai
import pytest

from rubriclib.judging.endpoints.failures import (
    EndpointError,
    backoff_delay,
    describe,
    from_sdk,
    is_retryable,
    quirk_in,
    redact,
    retry_after_seconds,
    signal_kind,
    status_error,
)

KEY = "sk-test-0123456789"
SENT = {"tool_choice": "required", "temperature": 0.0, "max_tokens": 10}


def test_redact_hides_every_copy_of_the_key() -> None:
    text = f"HTTP 401: Incorrect API key provided: {KEY}. You passed {KEY}."
    assert redact(text, KEY) == (
        "HTTP 401: Incorrect API key provided: [redacted]. You passed [redacted]."
    )


@pytest.mark.parametrize("secret", [None, "", "abc"])
def test_redact_leaves_text_alone_when_the_key_is_too_short_to_hide_anything(
    secret: str | None,
) -> None:
    assert redact("a cab and a crab", secret) == "a cab and a crab"


def test_a_status_answer_takes_the_error_message_from_the_json_body() -> None:
    raw = b'{"error": {"message": "Rate limit reached", "type": "requests"}}'
    error = status_error(429, {"retry-after": "2"}, raw)
    assert error.message == "Error code: 429 - Rate limit reached"
    assert error.body == {"message": "Rate limit reached", "type": "requests"}
    assert error.status == 429 and error.headers == {"retry-after": "2"}


def test_a_status_answer_that_is_not_json_keeps_its_text_as_the_body() -> None:
    error = status_error(502, {}, b"  Bad Gateway\n")
    assert error.message == "Error code: 502" and error.body == "Bad Gateway"


def test_the_sdk_exceptions_become_endpoint_errors() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    timed_out = from_sdk(openai.APITimeoutError(request))
    assert isinstance(timed_out, EndpointError) and timed_out.timed_out
    refused = from_sdk(openai.APIConnectionError(request=request))
    assert isinstance(refused, EndpointError) and refused.status is None
    assert refused.message == "cannot connect to the endpoint (Connection error.)"
    try:
        raise openai.APIConnectionError(request=request) from ConnectionRefusedError(111, "x")
    except openai.APIConnectionError as error:
        named = from_sdk(error, "http://127.0.0.1:9/v1")
    assert str(named) == "cannot connect to http://127.0.0.1:9/v1 (Connection refused)"
    response = httpx2.Response(503, headers={"Retry-After": "7"}, request=request)
    status = from_sdk(openai.InternalServerError("busy", response=response, body=None))
    assert isinstance(status, EndpointError)
    assert status.status == 503 and status.headers["retry-after"] == "7"
    other = ValueError("not the endpoint's")
    assert from_sdk(other) is other


@pytest.mark.parametrize(
    ("error", "retryable"),
    [
        (EndpointError("cannot connect"), True),
        (EndpointError("the request timed out", timed_out=True), True),
        (EndpointError("", status=408), True),
        (EndpointError("", status=409), True),
        (EndpointError("", status=429), True),
        (EndpointError("", status=500), True),
        (EndpointError("", status=503), True),
        (EndpointError("", status=400), False),
        (EndpointError("", status=401), False),
        (EndpointError("", status=404), False),
        (ValueError("a bug"), False),
    ],
)
def test_which_failures_are_tried_again(error: BaseException, retryable: bool) -> None:
    assert is_retryable(error) is retryable


def test_backoff_grows_with_each_retry_up_to_the_ceiling_with_jitter() -> None:
    error = EndpointError("", status=503)
    for retry, top in [(1, 1.0), (2, 2.0), (3, 4.0), (6, 10.0)]:
        delay = backoff_delay(retry, error, base=1.0, ceiling=10.0, max_retry_after=60.0)
        assert top / 2 <= delay <= top


def test_the_servers_retry_after_wins_over_backoff_but_is_capped() -> None:
    asked = EndpointError("", status=429, headers={"retry-after": "30"})
    assert backoff_delay(1, asked, base=1.0, ceiling=10.0, max_retry_after=60.0) == 30.0
    assert backoff_delay(1, asked, base=1.0, ceiling=10.0, max_retry_after=5.0) == 5.0


def test_retry_after_is_read_in_milliseconds_seconds_or_as_a_date() -> None:
    def after(**headers: str) -> float | None:
        return retry_after_seconds(EndpointError("", status=429, headers=headers))

    assert after(**{"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert after(**{"retry-after": "2"}) == 2.0
    assert after(**{"retry-after": "-3"}) == 0.0
    in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)
    seconds = after(**{"retry-after": in_a_minute})
    assert seconds is not None and 55 <= seconds <= 61
    assert after(**{"retry-after": "soon"}) is None
    assert after() is None
    assert retry_after_seconds(ValueError("not an answer")) is None


@pytest.mark.parametrize(
    ("message", "body", "status", "quirk"),
    [
        ("Error code: 400", {"message": "tool_choice 'required' is not supported"}, 400,
         "no_required_tool_choice"),
        ("Error code: 500", {"message": ""}, 500, "no_required_tool_choice"),
        ("Error code: 400", {"message": "temperature is not supported"}, 400, "no_temperature"),
        ("Error code: 422", "Unsupported parameter: 'max_tokens'", 422, "max_completion_tokens"),
        ("Error code: 400", {"message": "messages: too long"}, 400, None),
        ("Error code: 401", {"message": "temperature"}, 401, None),
    ],
)  # fmt: skip
def test_a_rejected_request_names_the_quirk_it_points_to(
    message: str, body: object, status: int, quirk: str | None
) -> None:
    error = EndpointError(message, status=status, body=body)
    assert quirk_in(error, SENT, set()) == quirk


def test_a_named_tool_choice_and_known_quirks_are_told_apart() -> None:
    error = EndpointError("Error code: 400", status=400, body={"message": "bad tool_choice"})
    named = {**SENT, "tool_choice": {"type": "function", "function": {"name": "x"}}}
    assert quirk_in(error, named, set()) == "no_named_tool_choice"
    assert quirk_in(error, SENT, {"no_required_tool_choice"}) is None
    assert quirk_in(error, {**SENT, "tool_choice": "auto"}, set()) is None


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (b"{}", "ok"),
        (EndpointError("", status=429), "rate_limited"),
        (EndpointError("", status=401), "unusable"),
        (EndpointError("", status=403), "unusable"),
        (EndpointError("", status=404), "unusable"),
        (EndpointError("cannot connect"), "connection"),
        (EndpointError("the request timed out", timed_out=True), "failed"),
        (EndpointError("", status=500), "failed"),
        (ValueError("a bug"), "failed"),
    ],
)
def test_what_an_outcome_says_about_the_whole_endpoint(reply: object, kind: str) -> None:
    assert signal_kind(reply) == kind


def test_a_failure_is_described_on_one_short_line() -> None:
    long = EndpointError("Error code: 500 -\n" + "word " * 200, status=500)
    line = describe(long)
    assert line.startswith("HTTP 500: Error code: 500 - word") and "\n" not in line
    assert len(line) <= len("HTTP 500: ") + 300
    assert describe(EndpointError("cannot connect to the endpoint (refused)")) == (
        "cannot connect to the endpoint (refused)"
    )
    assert describe(ValueError("bad")) == "ValueError: bad"


@pytest.mark.parametrize(
    ("origin", "told"),
    [
        ("env OPENAI_API_KEY", "HTTP 401 (check the key in OPENAI_API_KEY): Error code: 401"),
        ("env MY_KEY", "HTTP 401 (check the key in MY_KEY): Error code: 401"),
        ("api_key", "HTTP 401 (check the api_key given): Error code: 401"),
        ("default", "HTTP 401 (no key was sent: set OPENAI_API_KEY): Error code: 401"),
        (None, "HTTP 401: Error code: 401"),
    ],
)
def test_a_refused_key_is_told_with_where_it_came_from(origin: str | None, told: str) -> None:
    refused = EndpointError("Error code: 401", status=401)
    assert describe(refused, origin) == told
    assert describe(EndpointError("Error code: 403", status=403), origin) == (
        "HTTP 403: Error code: 403"
    )

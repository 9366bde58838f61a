"""Ask an OpenAI-compatible judge for a verdict through tool calls. The only network module."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import random
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, Literal

import openai

from rubriclib.errors import JudgeConfigError
from rubriclib.protocol import (
    JudgeVerdict,
    Mode,
    corrective_turn,
    read_reply,
    reply_text,
    request_body,
    text_intent,
    usage_of,
)
from rubriclib.render import render
from rubriclib.result import GradeResult, judge_details, make_result
from rubriclib.rubric import Rubric

DEFAULT_MODEL = "gpt-4o-mini"
RETRYABLE_STATUS = {408, 409, 429}
logger = logging.getLogger("rubriclib")


@dataclass(frozen=True)
class _Send:
    """Step: POST this Chat Completions body, waiting at most `timeout` seconds; the driver
    sends back the reply's bytes or the exception."""

    body: dict[str, Any]
    timeout: float


@dataclass(frozen=True)
class _Wait:
    """Step: wait before the next try."""

    seconds: float


class Judge:
    """A judge model behind any OpenAI-compatible Chat Completions endpoint."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        timeout: float = 120.0,
        max_retries: int = 2,
        *,
        max_tokens: int | None = 1024,
        total_timeout: float | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        max_retry_after: float = 30.0,
    ) -> None:
        self.model = model or os.environ.get("RUBRICLIB_MODEL") or DEFAULT_MODEL
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key and self.base_url is None:
            raise JudgeConfigError(
                "no API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a server that needs none"
            )
        self._api_key = key or "not-needed"
        self.temperature = temperature
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.total_timeout = total_timeout or timeout * (max_retries + 2) + backoff_max
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.quirks: set[str] = set()
        """Server quirks learned so far: `no_required_tool_choice`, `no_named_tool_choice`,
        `no_temperature`, `max_completion_tokens`. Kept for every later request of this Judge."""
        self._client: openai.OpenAI | None = None
        self._async_clients: dict[int, openai.AsyncOpenAI] = {}

    def __repr__(self) -> str:
        return f"Judge(model={self.model!r}, base_url={self.base_url!r})"

    def grade(
        self,
        rubric: Rubric,
        output: str,
        input: str | None = None,  # noqa: A002
        context: str | None = None,
        reference: str | None = None,
    ) -> GradeResult:
        """Judge `output` against `rubric`; failures come back as verdict `error`."""
        steps = self._judgment(rubric, render(rubric, output, input, context, reference))
        reply: Any = None
        while True:
            try:
                step = steps.send(reply)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            if isinstance(step, _Wait):
                time.sleep(step.seconds)
                reply = None
                continue
            try:
                reply = self._sync_client().post(
                    "/chat/completions",
                    body=step.body,
                    cast_to=bytes,
                    options={"timeout": step.timeout},
                )
            except Exception as error:  # every failure becomes data for the judgment
                reply = error

    async def agrade(
        self,
        rubric: Rubric,
        output: str,
        input: str | None = None,  # noqa: A002
        context: str | None = None,
        reference: str | None = None,
    ) -> GradeResult:
        """The async form of `grade`."""
        steps = self._judgment(rubric, render(rubric, output, input, context, reference))
        reply: Any = None
        while True:
            try:
                step = steps.send(reply)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            if isinstance(step, _Wait):
                await asyncio.sleep(step.seconds)
                reply = None
                continue
            try:
                reply = await self._async_client().post(
                    "/chat/completions",
                    body=step.body,
                    cast_to=bytes,
                    options={"timeout": step.timeout},
                )
            except Exception as error:
                reply = error

    def _judgment(
        self, rubric: Rubric, messages: list[dict[str, Any]]
    ) -> Generator[_Send | _Wait, Any, GradeResult]:
        """Every step of one judgment: requests, waits, quirk fallbacks, one corrective turn."""
        started = time.monotonic()
        attempts = retries = 0
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        answered_mode: Mode | None = None
        unanswered: Any = None  # the reply that was not a verdict, once it has been corrected
        correction: str | None = None
        intent: str | None = None

        def finish(
            verdict: Literal["pass", "fail", "error"], reason: str, raw: int | None = None
        ) -> GradeResult:
            latency_ms = round((time.monotonic() - started) * 1000)
            details = judge_details(
                self.model, answered_mode, attempts, latency_ms, dict(usage), correction
            )
            return make_result(rubric, details, verdict, self._redact(reason), raw)

        while True:
            remaining = started + self.total_timeout - time.monotonic()
            if remaining <= 0:
                return finish(
                    "error", f"no verdict within the overall limit of {self.total_timeout:g}s"
                )
            attempts += 1
            mode = self._mode(rubric, correcting=correction is not None)
            sent = messages
            if correction is not None:
                sent = messages + corrective_turn(unanswered, rubric, mode)
            body = request_body(rubric, sent, mode, self.model, self._sampling())
            reply = yield _Send(body, min(self.timeout, remaining))
            if isinstance(reply, BaseException):
                quirk = self._quirk_in(reply, body)
                if quirk:
                    logger.info("judge endpoint quirk %s: retrying with the fallback", quirk)
                    self.quirks.add(quirk)
                    continue
                if _is_retryable(reply) and retries < self.max_retries:
                    retries += 1
                    delay = min(self._delay(retries, reply), max(remaining - 0.01, 0))
                    cause = self._redact(_describe(reply))
                    logger.info(
                        "judge request failed (%s); retry %d in %.2fs", cause, retries, delay
                    )
                    yield _Wait(delay)
                    continue
                return finish(
                    "error", f"judge request failed after {attempts} attempt(s): {_describe(reply)}"
                )
            answered_mode = answered_mode or mode
            parsed = _parse_json(reply)
            _add_usage(usage, usage_of(parsed))
            outcome = read_reply(parsed, rubric, mode)
            if isinstance(outcome, JudgeVerdict):
                if intent is not None and outcome.verdict != intent:
                    return finish(
                        "error",
                        f"conflicting verdicts: the judge first wrote {intent} as text, then "
                        f"called {outcome.verdict}",
                    )
                return finish(outcome.verdict, outcome.reason, outcome.raw_score)
            if correction is not None:
                return finish("error", f"no valid verdict after a corrective turn: {outcome}")
            correction, unanswered = outcome, parsed
            intent = text_intent(reply_text(parsed), rubric)

    def _mode(self, rubric: Rubric, correcting: bool = False) -> Mode:
        """How to force the verdict call on this endpoint: the first mode it has not refused.
        A corrective turn forces the one verdict tool by name wherever that is honoured."""
        required_ok = rubric.scale == "pass-fail" and "no_required_tool_choice" not in self.quirks
        named_ok = "no_named_tool_choice" not in self.quirks
        if named_ok and (correcting or not required_ok):
            return "named"
        return "required" if required_ok else "auto"

    def _sampling(self) -> dict[str, Any]:
        """Temperature and the token limit, shaped by the quirks learned so far."""
        sampling: dict[str, Any] = {}
        if self.temperature is not None and "no_temperature" not in self.quirks:
            sampling["temperature"] = self.temperature
        if self.max_tokens is not None:
            key = (
                "max_completion_tokens" if "max_completion_tokens" in self.quirks else "max_tokens"
            )
            sampling[key] = self.max_tokens
        return sampling

    def _quirk_in(self, error: BaseException, sent: dict[str, Any]) -> str | None:
        """The not-yet-known quirk an endpoint's rejection of `sent` points to, if any."""
        if not isinstance(error, openai.APIStatusError) or error.status_code not in (400, 422, 500):
            return None
        text = f"{error.message} {json.dumps(error.body, default=str)}".lower()
        body_message = error.body.get("message") if isinstance(error.body, dict) else error.body
        # llama-cpp-python fails an assertion on tool_choice="required": HTTP 500, empty message.
        silent_crash = error.status_code == 500 and not str(body_message or "").strip()
        choice = sent["tool_choice"]
        choice_quirk = (
            "no_named_tool_choice" if isinstance(choice, dict) else "no_required_tool_choice"
        )
        candidates = [
            (choice_quirk, choice != "auto" and ("tool_choice" in text or silent_crash)),
            ("no_temperature", "temperature" in text and "temperature" in sent),
            ("max_completion_tokens", "max_tokens" in text and "max_tokens" in sent),
        ]
        return next((quirk for quirk, hit in candidates if hit and quirk not in self.quirks), None)

    def _delay(self, retry: int, error: BaseException) -> float:
        """Exponential backoff with jitter, or the server's Retry-After (capped)."""
        retry_after = _retry_after_seconds(error)
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.backoff_max, self.backoff_base * 2.0 ** (retry - 1))
        return ceiling * random.uniform(0.5, 1.0)

    def _redact(self, text: str) -> str:
        key = self._api_key
        return text.replace(key, "[redacted]") if len(key) >= 4 else text

    def _sync_client(self) -> openai.OpenAI:
        if self._client is None:
            self._client = openai.OpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0
            )
        return self._client

    def _async_client(self) -> openai.AsyncOpenAI:
        # An async client's connections belong to one event loop; keep one client per loop.
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._async_clients:
            self._async_clients = {
                loop_id: openai.AsyncOpenAI(
                    api_key=self._api_key, base_url=self.base_url, max_retries=0
                )
            }
        return self._async_clients[loop_id]


def _parse_json(raw: Any) -> Any:
    """The reply body as JSON, or None when it is not JSON (any shape may arrive)."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return None


def _add_usage(total: dict[str, int], more: dict[str, int]) -> None:
    for key in total:
        total[key] += more[key]


def _is_retryable(error: BaseException) -> bool:
    if isinstance(error, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code in RETRYABLE_STATUS or error.status_code >= 500
    return False


def _retry_after_seconds(error: BaseException) -> float | None:
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


def _describe(error: BaseException) -> str:
    if isinstance(error, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(error, openai.APIConnectionError):
        return f"cannot connect to the endpoint ({error.__cause__ or error})"
    if isinstance(error, openai.APIStatusError):
        return f"HTTP {error.status_code}: {' '.join(str(error.message).split())[:300]}"
    return f"{type(error).__name__}: {error}"

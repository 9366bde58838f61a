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
from rubriclib.render import SCORE_TOOL, render
from rubriclib.result import GradeResult, judge_details, make_result
from rubriclib.rubric import Rubric

DEFAULT_MODEL = "gpt-4o-mini"
RETRYABLE_STATUS = {408, 409, 429}
logger = logging.getLogger("rubriclib")


@dataclass(frozen=True)
class _Send:
    """Step: send one Chat Completions request with these arguments."""

    arguments: dict[str, Any]


@dataclass(frozen=True)
class _Wait:
    """Step: wait before the next try."""

    seconds: float


@dataclass(frozen=True)
class _Verdict:
    verdict: Literal["pass", "fail"]
    reason: str
    raw_score: int | None = None


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
        """Server quirks learned so far: `tool_choice_auto`, `no_named_tool_choice`,
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
                reply = self._sync_client().chat.completions.create(**step.arguments)
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
                reply = await self._async_client().chat.completions.create(**step.arguments)
            except Exception as error:
                reply = error

    def _judgment(
        self, rubric: Rubric, messages: list[dict[str, Any]]
    ) -> Generator[_Send | _Wait, Any, GradeResult]:
        """Every step of one judgment: requests, waits, quirk fallbacks, one corrective turn."""
        started = time.monotonic()
        attempts = retries = 0
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        corrected = False

        def finish(
            verdict: Literal["pass", "fail", "error"], reason: str, raw: int | None = None
        ) -> GradeResult:
            latency_ms = round((time.monotonic() - started) * 1000)
            details = judge_details(self.model, attempts, latency_ms, dict(usage))
            return make_result(rubric, details, verdict, self._redact(reason), raw)

        while True:
            remaining = started + self.total_timeout - time.monotonic()
            if remaining <= 0:
                return finish(
                    "error", f"no verdict within the overall limit of {self.total_timeout:g}s"
                )
            attempts += 1
            sent = self._request(rubric, messages, min(self.timeout, remaining))
            reply = yield _Send(sent)
            if isinstance(reply, BaseException):
                quirk = self._quirk_in(reply, sent)
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
            try:  # the SDK does not validate responses: any shape may arrive
                _add_usage(usage, reply)
                outcome = _read_verdict(reply, rubric)
            except Exception as error:
                outcome = f"unreadable response ({type(error).__name__})"
            if isinstance(outcome, _Verdict):
                return finish(outcome.verdict, outcome.reason, outcome.raw_score)
            if corrected:
                return finish("error", f"no valid verdict after a corrective turn: {outcome}")
            corrected = True
            messages = messages + _corrective_turn(_reply_text(reply), outcome, rubric)

    def _request(
        self, rubric: Rubric, messages: list[dict[str, Any]], timeout: float
    ) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "tools": _tools(rubric),
            "tool_choice": self._tool_choice(rubric),
            "timeout": timeout,
        }
        if self.temperature is not None and "no_temperature" not in self.quirks:
            arguments["temperature"] = self.temperature
        if self.max_tokens is not None:
            key = (
                "max_completion_tokens" if "max_completion_tokens" in self.quirks else "max_tokens"
            )
            arguments[key] = self.max_tokens
        return arguments

    def _tool_choice(self, rubric: Rubric) -> str | dict[str, Any]:
        """Force a tool call: by name when there is one tool, else "required"; "auto" where
        the endpoint has refused those."""
        if rubric.scale == "1-5":
            named = {"type": "function", "function": {"name": SCORE_TOOL}}
            return "auto" if "no_named_tool_choice" in self.quirks else named
        return "auto" if "tool_choice_auto" in self.quirks else "required"

    def _quirk_in(self, error: BaseException, sent: dict[str, Any]) -> str | None:
        """The not-yet-known quirk an endpoint's rejection of `sent` points to, if any."""
        if not isinstance(error, openai.APIStatusError) or error.status_code not in (400, 422, 500):
            return None
        text = f"{error.message} {json.dumps(error.body, default=str)}".lower()
        body_message = error.body.get("message") if isinstance(error.body, dict) else error.body
        # llama-cpp-python fails an assertion on tool_choice="required": HTTP 500, empty message.
        silent_crash = error.status_code == 500 and not str(body_message or "").strip()
        choice = sent["tool_choice"]
        choice_quirk = "no_named_tool_choice" if isinstance(choice, dict) else "tool_choice_auto"
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


def _tools(rubric: Rubric) -> list[dict[str, Any]]:
    reason = {"type": "string", "description": "One or two sentences: why, naming any failure."}
    if rubric.scale == "1-5":
        score = {
            "type": "integer",
            "minimum": 1,
            "maximum": 5,
            "description": "The rubric score, 1 to 5.",
        }
        return [_tool(SCORE_TOOL, "Give the rubric's score.", {"score": score, "reason": reason})]
    pass_tool, fail_tool = rubric.tool_names
    return [
        _tool(pass_tool, "The response meets the rubric.", {"reason": reason}),
        _tool(fail_tool, "The response does not meet the rubric.", {"reason": reason}),
    ]


def _tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
            },
        },
    }


def _read_verdict(reply: Any, rubric: Rubric) -> _Verdict | str:
    """The verdict in a completion, or what is wrong with it."""
    if not reply.choices:
        return "the response had no choices"
    message = reply.choices[0].message
    calls = message.tool_calls or []
    expected = [SCORE_TOOL] if rubric.scale == "1-5" else list(rubric.tool_names)
    if not calls:
        text = " ".join((message.content or "").split())[:200]
        return f"the judge answered without a verdict tool call (text: {text!r})"
    names = [call.function.name for call in calls]
    if len(calls) > 1:
        return (
            f"the judge made {len(calls)} tool calls ({', '.join(names)}); exactly one is allowed"
        )
    name = names[0]
    if name not in expected:
        return f"the judge called an unknown tool {name!r}"
    try:
        arguments = json.loads(calls[0].function.arguments or "")
    except (json.JSONDecodeError, TypeError):
        return f"the arguments of {name} are not JSON"
    if not isinstance(arguments, dict):
        return f"the arguments of {name} are not a JSON object"
    reason = arguments.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        return f"{name} was called without a 'reason' string"
    if name == SCORE_TOOL:
        score = arguments.get("score")
        if isinstance(score, bool) or not isinstance(score, int):
            return f"{name} was called with a score that is not an integer: {score!r}"
        if not 1 <= score <= 5:
            return f"{name} was called with score {score}, outside 1 to 5"
        return _Verdict("pass", reason.strip(), score)  # make_result applies the threshold
    return _Verdict("pass" if name == expected[0] else "fail", reason.strip())


def _reply_text(reply: Any) -> str | None:
    """The assistant's text in a completion, if it has any."""
    try:
        text = reply.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        return None
    return text if isinstance(text, str) and text.strip() else None


def _corrective_turn(text: str | None, problem: str, rubric: Rubric) -> list[dict[str, Any]]:
    if rubric.scale == "1-5":
        tools = f"`{SCORE_TOOL}`"
    else:
        tools = " or ".join(f"`{name}`" for name in rubric.tool_names)
    turn: list[dict[str, Any]] = [{"role": "assistant", "content": text}] if text else []
    turn.append(
        {
            "role": "user",
            "content": f"That reply was not a valid verdict: {problem}. Call exactly one tool, "
            f"{tools}, once now, with a short reason.",
        }
    )
    return turn


def _add_usage(usage: dict[str, int], reply: Any) -> None:
    counted = getattr(reply, "usage", None)
    for key in usage:
        usage[key] += int(getattr(counted, key, 0) or 0)


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

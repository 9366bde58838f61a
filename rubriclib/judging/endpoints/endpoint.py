"""Where a Judge's requests go and what it learned there: the endpoint, its model and key,
the retry limits, and the quirks the endpoint showed (kept for every later request, and
across runs when capabilities are remembered)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from rubriclib.judging.cache import VerdictCache
from rubriclib.judging.endpoints.failures import (
    SignalKind,
    backoff_delay,
    describe,
    is_retryable,
    quirk_in,
    redact,
    signal_kind,
)

logger = logging.getLogger("rubriclib")


@dataclass(frozen=True)
class Limits:
    """How long a request and a judgment may take, and how failures are retried."""

    timeout: float
    """Seconds each request may take."""
    max_retries: int
    """Times a retryable failure is sent again."""
    total_timeout: float
    """Seconds the whole judgment may take."""
    backoff_base: float
    backoff_max: float
    max_retry_after: float = 30.0

    @classmethod
    def of(
        cls,
        timeout: float,
        max_retries: int,
        total_timeout: float | None,
        backoff_base: float,
        backoff_max: float,
        max_retry_after: float = 30.0,
    ) -> Limits:
        """Limits whose overall limit, when None, leaves room for every try and the longest
        wait: `timeout * (max_retries + 2) + backoff_max`."""
        total = total_timeout or timeout * (max_retries + 2) + backoff_max
        return cls(timeout, max_retries, total, backoff_base, backoff_max, max_retry_after)


@dataclass(frozen=True)
class Retry:
    """How a failed request is tried again: at once with the fallback of the `quirk` just
    learned, or (no quirk) as one more retry after `delay` seconds."""

    delay: float = 0.0
    quirk: str | None = None


@dataclass
class Endpoint:
    """One endpoint and model as a Judge (or a target) uses them: the limits of its requests,
    the key they carry (hidden from every text that leaves), and the quirks it has shown."""

    url: str
    """scheme://host[:port]/path: no credentials, no query string."""
    model: str
    api_key: str
    limits: Limits
    capabilities: VerdictCache | None = None
    """Where quirks are remembered across runs; None when they are not."""
    key_origin: str = "api_key"
    """Where the key came from (`config.judge_key`: `env NAME`, `api_key`, `default` for none
    sent): what a refused key's error names."""
    quirks: set[str] = field(default_factory=set)
    """`no_required_tool_choice`, `no_named_tool_choice`, `no_temperature`,
    `max_completion_tokens`, `no_logprobs`: learned so far, kept for every later request."""

    def __post_init__(self) -> None:
        if self.capabilities is not None:
            self.quirks |= self.capabilities.known_quirks(self.url, self.model)

    def copied(self, limits: Limits | None = None) -> Endpoint:
        """A copy with quirks of its own (and `limits`, if given), remembering to the same place."""
        copy = replace(self, limits=limits or self.limits, quirks=set(self.quirks))
        return copy

    def hidden(self, text: str) -> str:
        """`text` with the key hidden."""
        return redact(text, self.api_key)

    def told(self, failure: BaseException) -> str:
        """A failed request in one line (`failures.describe`), the key hidden; a refused key
        named by where it came from."""
        return self.hidden(describe(failure, self.key_origin))

    def learn(self, quirk: str) -> None:
        """Keep `quirk` for later requests, and remember it across runs when capabilities are
        kept."""
        self.quirks.add(quirk)
        if self.capabilities is not None:
            self.capabilities.remember_quirk(self.url, self.model, quirk)

    def learn_no_logprobs(self) -> None:
        """The endpoint answered a probability question without logprobs: say so once, and
        remember it with its other quirks (later requests do not ask for them)."""
        if "no_logprobs" in self.quirks:
            return
        logger.warning(
            "%s returned no logprobs for %s: probability answers fall back to the word the "
            "judge wrote (p 1 or 0)",
            self.url,
            self.model,
        )
        self.learn("no_logprobs")

    @property
    def pace_key(self) -> Hashable:
        """The endpoint and a digest of the key: which requests of a run share one Pacer
        (`Grader.pace_key`), whoever sends them (a judge, a target)."""
        return (self.url, hashlib.sha256(self.api_key.encode()).hexdigest())

    def next_try(self, failure: BaseException, sent: dict[str, Any], retries: int) -> Retry | None:
        """How the request `sent` is tried again after `failure`, `retries` retries spent:
        with the fallback of a quirk the refusal points to (learned here), or after the backoff
        when the failure is retryable and retries are left; None when it is final."""
        if quirk := quirk_in(failure, sent, self.quirks):
            logger.info("%s quirk %s: retrying with the fallback", self.url, quirk)
            self.learn(quirk)
            return Retry(quirk=quirk)
        if is_retryable(failure) and retries < self.limits.max_retries:
            return Retry(self.delay(retries + 1, failure))
        return None

    def delay(self, retry: int, error: BaseException) -> float:
        """Seconds before retry number `retry` after `error`."""
        limits = self.limits
        return backoff_delay(
            retry, error, limits.backoff_base, limits.backoff_max, limits.max_retry_after
        )

    def signal(self, reply: Any) -> tuple[SignalKind, Any]:
        """What a request's outcome says about the endpoint, for the engine's pacer: the kind
        (see `failures.signal_kind`) with the seconds to pause for `rate_limited`, or the
        hidden cause for `unusable` and `connection`."""
        kind = signal_kind(reply)
        if kind == "rate_limited":
            return kind, self.delay(1, reply)
        if kind in ("unusable", "connection"):
            return kind, self.told(reply)
        return kind, None

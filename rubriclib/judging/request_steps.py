"""A request that is not a judgment (a target's), as steps: sent as a judgment's requests
are, through the transport and the run's pacer by the same drivers (`steps`), a refused
setting sent again with its quirk's fallback and a retryable failure after the endpoint's
backoff (`Endpoint.next_try`), within the endpoint's overall limit."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator
from typing import Any

from rubriclib.judging.endpoints.endpoint import Endpoint
from rubriclib.judging.endpoints.failures import EndpointError, EndpointUnusable
from rubriclib.judging.steps import Send, Wait

logger = logging.getLogger("rubriclib")

RequestSteps = Generator[Send | Wait, Any, Any]
"""A plain request's steps; they end with the reply's bytes or the last failure (an
`EndpointError`, or `EndpointUnusable` when the run had stopped sending to the endpoint)."""


def request_steps(
    endpoint: Endpoint,
    body_for: Callable[[set[str]], dict[str, Any]],
    custom_id: str,
    sender: str,
) -> RequestSteps:
    """Every step of one request to `endpoint`, whose body `body_for` shapes by the quirks
    learned so far; `sender` names who sends it in the log (`target`)."""
    limits = endpoint.limits
    started = time.monotonic()
    retries = 0
    while (remaining := started + limits.total_timeout - time.monotonic()) > 0:
        body = body_for(endpoint.quirks)
        reply = yield Send(body, min(limits.timeout, remaining), custom_id)
        if not isinstance(reply, BaseException) or isinstance(reply, EndpointUnusable):
            return reply
        retry = endpoint.next_try(reply, body, retries)
        if retry is None:
            return reply
        if retry.quirk is None:
            retries += 1
            delay = min(retry.delay, max(remaining - 0.01, 0))
            cause = endpoint.told(reply)
            logger.info("%s request failed (%s); retry %d in %.2fs", sender, cause, retries, delay)
            yield Wait(delay)
    overall = f"{limits.total_timeout:g}s"
    return EndpointError(f"no answer within the overall limit of {overall}", timed_out=True)

"""A target: the chat model whose outputs an eval judges. It writes each row's output from the
row's input before the graders judge it (`target:` in an eval file), its requests sent the way a
judgment's are: through a `Transport`, waiting on the run's pacer for its endpoint and key,
with the same retries and fallbacks (`request_steps`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from rubriclib.config import checked_base_url, credential
from rubriclib.errors import JudgeConfigError
from rubriclib.item import Item, NoOutput
from rubriclib.judging.asking.request import sampling
from rubriclib.judging.cache import cache_key
from rubriclib.judging.endpoints.endpoint import Endpoint, Limits
from rubriclib.judging.endpoints.failures import EndpointUnusable
from rubriclib.judging.endpoints.transport import Transport, chosen_transport, display_url
from rubriclib.judging.request_steps import request_steps
from rubriclib.judging.steps import adrive

if TYPE_CHECKING:
    from collections.abc import Hashable

    from rubriclib.judging.endpoints.pacer import Pacing

MAX_RETRIES = 2
"""Times a target's retryable failure (connection error, timeout, HTTP 408, 409, 429, 5xx) is
sent again, with a Judge's default backoff."""


@dataclass(frozen=True)
class TargetSettings:
    """Which model writes the outputs, and how it is asked."""

    model: str
    base_url: str | None = None
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    api_key_env: str | None = None
    timeout: float = 120.0


class Target:
    """Generates outputs through any OpenAI-compatible Chat Completions endpoint. The key comes
    from the environment only: `api_key_env` names the variable, else OPENAI_API_KEY.
    `transport` is how its requests travel, as a Judge's: "auto" (aiohttp), "sdk" (the openai
    SDK's async client) or any `Transport`."""

    def __init__(
        self, settings: TargetSettings, *, transport: Literal["auto", "sdk"] | Transport = "auto"
    ) -> None:
        self.settings = settings
        variable = settings.api_key_env or "OPENAI_API_KEY"
        key = credential(variable)
        base_url = checked_base_url(settings.base_url, "target base_url")
        if not key and base_url is None:
            raise JudgeConfigError(f"no API key for the target: set {variable}")
        limits = Limits.of(settings.timeout, MAX_RETRIES, None, 0.5, 8.0)
        origin = f"env {variable}" if key else "default"
        key = key or "not-needed"
        self._at = Endpoint(display_url(base_url), settings.model, key, limits, key_origin=origin)
        self.transport = chosen_transport(transport, base_url, key)

    @property
    def pace_key(self) -> Hashable:
        """Its endpoint and a digest of its key: a judge there with the same key shares its
        pacer in a run (`Grader.pace_key`)."""
        return self._at.pace_key

    async def generate(self, item: Item, *, pacing: Pacing | None = None) -> str:
        """The target's answer to the item's input, its request waiting on the run's pacer for
        the target's endpoint and key (`pacing`'s) when a run is given; NoOutput saying why
        when there is none."""
        pacer = pacing.pacer(self.pace_key) if pacing is not None else None
        custom_id = cache_key(self._at.url, self._body(item, set()), trial=1)
        steps = request_steps(self._at, partial(self._body, item), custom_id, "target")
        reply = await adrive(steps, self.transport, pacer, self._at.signal)
        if isinstance(reply, EndpointUnusable):
            raise NoOutput(f"the target was not asked: {reply}")
        if isinstance(reply, BaseException):
            raise NoOutput(self._at.told(reply))
        try:
            text = json.loads(reply)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            text = None
        if not isinstance(text, str):
            raise NoOutput("the target's reply held no text")
        return text

    def _body(self, item: Item, quirks: set[str]) -> dict[str, Any]:
        """The request for the item's input, its sampling shaped by the learned `quirks`."""
        messages = (
            [{"role": "system", "content": self.settings.system}] if self.settings.system else []
        )
        messages.append({"role": "user", "content": item.input or ""})
        shaped = sampling(self.settings.temperature, self.settings.max_tokens, quirks)
        return {"model": self.settings.model, "messages": messages, **shaped}

    async def aclose(self) -> None:
        """Close the transport's connections of the running event loop."""
        await self.transport.aclose()

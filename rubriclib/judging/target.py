"""A target: the chat model whose outputs an eval judges. It writes each row's output from the
row's input before the graders judge it (`target:` in an eval file)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rubriclib.config import checked_base_url, credential
from rubriclib.errors import JudgeConfigError
from rubriclib.item import Item, NoOutput


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
    from the environment only: `api_key_env` names the variable, else OPENAI_API_KEY."""

    def __init__(self, settings: TargetSettings) -> None:
        self.settings = settings
        variable = settings.api_key_env or "OPENAI_API_KEY"
        key = credential(variable)
        base_url = checked_base_url(settings.base_url, "target base_url")
        if not key and base_url is None:
            raise JudgeConfigError(f"no API key for the target: set {variable}")
        self._key = key or "not-needed"
        self._key_origin = f"env {variable}" if key else "default"
        self._url = base_url
        import openai  # only a run that generates outputs needs the SDK

        self._client = openai.AsyncOpenAI(api_key=self._key, base_url=base_url, max_retries=2)

    async def generate(self, item: Item) -> str:
        """The target's answer to the item's input; NoOutput saying why when there is none."""
        messages = (
            [{"role": "system", "content": self.settings.system}] if self.settings.system else []
        )
        messages.append({"role": "user", "content": item.input or ""})
        body: dict[str, Any] = {"model": self.settings.model, "messages": messages}
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        if self.settings.max_tokens is not None:
            body["max_tokens"] = self.settings.max_tokens
        try:
            raw = await self._client.post(
                "/chat/completions",
                body=body,
                cast_to=bytes,
                options={"timeout": self.settings.timeout},
            )
        except Exception as error:  # every failure becomes the row's reason
            from rubriclib.judging.endpoints.failures import describe, from_sdk, redact
            from rubriclib.judging.endpoints.transport import display_url

            failure = from_sdk(error, display_url(self._url))
            raise NoOutput(redact(describe(failure, self._key_origin), self._key)) from None
        try:
            text = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            text = None
        if not isinstance(text, str):
            raise NoOutput("the target's reply held no text")
        return text

    async def aclose(self) -> None:
        await self._client.close()

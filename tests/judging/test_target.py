"""A target, the chat model whose outputs an eval judges, against the scripted server: what it
sends (through a judge's transport, retries and fallbacks), the text it returns, and every
failure as the row's reason with the key never shown."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion, error_reply

from rubriclib.errors import JudgeConfigError
from rubriclib.item import Item, NoOutput
from rubriclib.judging.judge import Judge
from rubriclib.judging.target import Target, TargetSettings


def generate(target: Target, item: Item) -> str:
    async def once() -> str:
        try:
            return await target.generate(item)
        finally:
            await target.aclose()

    return asyncio.run(once())


def test_the_target_is_asked_the_rows_input_with_its_settings(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    judge_server.script(Reply(body=completion(content="Paris.")))
    settings = TargetSettings(
        "writer", judge_server.url, system="Answer briefly.", temperature=0.2, max_tokens=64
    )
    assert generate(Target(settings), Item(input="Capital of France?", output="")) == "Paris."
    [sent] = judge_server.requests
    assert sent == {
        "model": "writer",
        "messages": [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": "Capital of France?"},
        ],
        "temperature": 0.2,
        "max_tokens": 64,
    }
    assert judge_server.headers[0]["authorization"] == f"Bearer {SECRET_KEY}"


def test_unset_settings_are_not_sent(judge_server: JudgeServer) -> None:
    judge_server.script(Reply(body=completion(content="hi")))
    generate(Target(TargetSettings("writer", judge_server.url)), Item(input="hello", output=""))
    assert judge_server.requests == [
        {"model": "writer", "messages": [{"role": "user", "content": "hello"}]}
    ]


def test_the_key_comes_from_the_variable_named(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("WRITER_KEY", "sk-writer-key-000")
    judge_server.script(Reply(body=completion(content="hi")))
    settings = TargetSettings("writer", judge_server.url, api_key_env="WRITER_KEY")
    generate(Target(settings), Item(input="hello", output=""))
    assert judge_server.headers[0]["authorization"] == "Bearer sk-writer-key-000"


def test_no_key_and_no_endpoint_is_refused_naming_the_variable() -> None:
    with pytest.raises(JudgeConfigError, match="no API key for the target: set WRITER_KEY"):
        Target(TargetSettings("writer", api_key_env="WRITER_KEY"))


def test_a_failed_request_is_no_output_with_the_key_redacted(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    judge_server.responder = lambda body: error_reply(400, f"bad model, key {SECRET_KEY}")
    with pytest.raises(NoOutput) as failed:
        generate(Target(TargetSettings("writer", judge_server.url)), Item(input="q", output=""))
    assert str(failed.value).startswith("HTTP 400") and "bad model" in str(failed.value)
    assert SECRET_KEY not in str(failed.value)


@pytest.mark.parametrize(
    "body",
    [completion(content=None), {"choices": []}, {"choices": [{"message": {"content": 3}}]}],
)
def test_a_reply_without_text_is_no_output(judge_server: JudgeServer, body: object) -> None:
    judge_server.script(Reply(body=body))
    with pytest.raises(NoOutput, match="the target's reply held no text"):
        generate(Target(TargetSettings("writer", judge_server.url)), Item(input="q", output=""))


def test_a_refused_key_is_named_by_its_variable_never_shown(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WRITER_KEY", SECRET_KEY)
    judge_server.responder = lambda body: error_reply(401, f"invalid key {SECRET_KEY}")
    settings = TargetSettings("writer", judge_server.url, api_key_env="WRITER_KEY")
    with pytest.raises(NoOutput) as failed:
        generate(Target(settings), Item(input="q", output=""))
    assert str(failed.value).startswith("HTTP 401 (check the key in WRITER_KEY): ")
    assert SECRET_KEY not in str(failed.value) and len(judge_server.requests) == 1


def test_retryable_failures_are_sent_again_then_told(judge_server: JudgeServer) -> None:
    judge_server.script(
        error_reply(429, "slow down", {"retry-after": "0"}),
        error_reply(503, "busy", {"retry-after": "0"}),
        Reply(body=completion(content="at last")),
    )
    target = Target(TargetSettings("writer", judge_server.url))
    assert generate(target, Item(input="q", output="")) == "at last"
    judge_server.script(*[error_reply(500, "down", {"retry-after": "0"})] * 3)
    with pytest.raises(NoOutput, match=r"^HTTP 500: Error code: 500 - down$"):
        generate(target, Item(input="q", output=""))
    assert len(judge_server.requests) == 6  # each asked at most three times


def test_a_refused_setting_is_sent_again_with_its_fallback(judge_server: JudgeServer) -> None:
    judge_server.script(
        error_reply(400, "Unsupported parameter: 'max_tokens'; use 'max_completion_tokens'"),
        Reply(body=completion(content="fine")),
    )
    settings = TargetSettings("reasoner", judge_server.url, max_tokens=64)
    assert generate(Target(settings), Item(input="q", output="")) == "fine"
    first, second = judge_server.requests
    assert first["max_tokens"] == 64 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 64 and "max_tokens" not in second


def test_a_target_shares_the_pace_of_a_judge_with_its_endpoint_and_key(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("WRITER_KEY", "sk-writer-key-000")
    judge = Judge(base_url=judge_server.url)
    assert Target(TargetSettings("writer", judge_server.url)).pace_key == judge.pace_key
    other_key = TargetSettings("writer", judge_server.url, api_key_env="WRITER_KEY")
    assert Target(other_key).pace_key != judge.pace_key


def test_a_target_sends_through_an_injected_transport() -> None:
    class Recording:
        def __init__(self) -> None:
            self.sent: list[dict[str, Any]] = []

        async def post(self, body: dict[str, Any], *, timeout: float, custom_id: str) -> bytes:
            self.sent.append(body)
            return json.dumps(completion(content="injected")).encode()

        async def aclose(self) -> None:
            pass

    transport = Recording()
    target = Target(TargetSettings("writer", "http://127.0.0.1:9/v1"), transport=transport)
    assert generate(target, Item(input="q", output="")) == "injected"
    assert transport.sent == [{"model": "writer", "messages": [{"role": "user", "content": "q"}]}]


def test_a_target_never_imports_the_openai_sdk(judge_server: JudgeServer) -> None:
    judge_server.script(Reply(body=completion(content="hi")))
    probe = (
        "import asyncio, sys\n"
        "from rubriclib.item import Item\n"
        "from rubriclib.judging.target import Target, TargetSettings\n"
        f"target = Target(TargetSettings('writer', {judge_server.url!r}))\n"
        "async def once():\n"
        "    try:\n"
        "        return await target.generate(Item(input='q', output=''))\n"
        "    finally:\n"
        "        await target.aclose()\n"
        "print(asyncio.run(once()), 'openai' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "hi False" and run.stderr == ""

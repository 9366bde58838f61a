"""A target, the chat model whose outputs an eval judges, against the scripted server: what it
sends, the text it returns, and every failure as the row's reason with the key never shown."""

from __future__ import annotations

import asyncio

import pytest
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion, error_reply

from rubriclib.errors import JudgeConfigError
from rubriclib.item import Item, NoOutput
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

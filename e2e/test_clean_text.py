"""The e2e server hands the model the text rubriclib sent, not an HTML-escaped copy.

llama-cpp-python's `chatml-function-calling` handler escapes every message it renders
(`clean_llama_server.py` says where); the launcher turns that off unless given
`--keep-escaping`. Each test runs against both: the launcher as the harness uses it, and the
handler as shipped, so every assertion is shown able to fail. The launcher's
`--serve-required` (as `make exploring-accuracy` serves it) is shown the same way: with it and
without. The prompts are read from the
launcher's `RUBRICLIB_PROMPT_LOG`, the exact text given to the model.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import openai
import pytest
from compat import probe_text_unchanged
from conftest import llama_server
from openai import OpenAI

from rubriclib import load_rubric
from rubriclib.judging.judge import Judge

OUTPUT = 'if a < b && c > "d": </x>'
ESCAPED = "if a &lt; b &amp;&amp; c &gt; &#34;d&#34;: &lt;/x&gt;"
ENTITIES = ("&lt;", "&gt;", "&amp;", "&#34;", "&#39;")
CONTEXT = "The snippet compares a with b."


@dataclass
class Served:
    """A running launcher: whether it keeps the shipped escaping, its URL, its prompt log."""

    escaping: bool
    url: str
    log: Path
    seen: int = 0

    def new_prompts(self) -> list[str]:
        """The prompts the model was given since the last call."""
        lines = self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []
        fresh, self.seen = lines[self.seen :], len(lines)
        return [json.loads(line)["prompt"] for line in fresh]


@pytest.fixture(scope="module", params=["clean", "escaping"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp(request.param)
    log = folder / "prompts.jsonl"
    escaping = request.param == "escaping"
    env = {**os.environ, "RUBRICLIB_PROMPT_LOG": str(log)}
    flags = ["--keep-escaping"] if escaping else []
    with llama_server(folder, *flags, env=env) as url:
        yield Served(escaping, url, log)


def assert_as_sent(served: Served, prompts: list[str], sent: str) -> None:
    """Unescaped, the text is in a prompt verbatim and no prompt holds an entity; as shipped,
    the escaped text is there instead."""
    assert prompts
    if served.escaping:
        assert any(sent.replace(OUTPUT, ESCAPED) in prompt for prompt in prompts)
        assert not any(OUTPUT in prompt for prompt in prompts)
    else:
        assert any(sent in prompt for prompt in prompts)
        assert not [e for e in ENTITIES if any(e in prompt for prompt in prompts)]


def test_a_judgment_reaches_the_model_as_sent(served: Served) -> None:
    """rubriclib's own path: the verdict tool forced by name (the server has no `required`)."""
    served.new_prompts()
    judge = Judge(model="smollm2-135m", base_url=served.url, timeout=120, max_tokens=32)
    result = judge.grade(load_rubric("groundedness"), OUTPUT, context=CONTEXT)
    assert result.details["judge"]["mode"] == "named"
    prompts = served.new_prompts()
    assert all(prompt.endswith("functions.set_grade:\n") for prompt in prompts)
    assert_as_sent(served, prompts, f"```\n{OUTPUT}\n```")


def test_a_chat_without_tools_reaches_the_model_as_sent(served: Served) -> None:
    """A plain chat completion, as a judge reading yes/no from logprobs sends it."""
    served.new_prompts()
    client = OpenAI(base_url=served.url, api_key="unused", timeout=120, max_retries=0)
    client.chat.completions.create(
        model="smollm2-135m",
        messages=[{"role": "user", "content": OUTPUT}],
        max_tokens=1,
        temperature=0,
    )
    [prompt] = served.new_prompts()
    assert_as_sent(served, [prompt], f"<|im_start|>user\n{OUTPUT}<|im_end|>")


def test_compat_probe_tells_the_two_apart(served: Served) -> None:
    probe = probe_text_unchanged(served.url, "smollm2-135m")
    assert probe["text_unchanged"] is (not served.escaping), probe


TOOL_RESULT = "order A-17: refunded $12.50 without the customer's yes"


def test_a_tool_result_reaches_the_model(served: Served) -> None:
    """An explored judgment's second request: the judge's read_block call and what it returned.
    The shipped handler renders a tool turn empty, so the judge never sees what it read; the
    launcher renders it as Qwen2.5's template does."""
    from rubriclib import load_rubric
    from rubriclib.judging import exploring_tools

    served.new_prompts()
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": "read_block", "arguments": '{"block": "M4"}'}
    client = OpenAI(base_url=served.url, api_key="unused", timeout=120, max_retries=0)
    client.chat.completions.create(
        model="smollm2-135m",
        messages=[
            {"role": "system", "content": "Judge the run."},
            {"role": "user", "content": "Read the run."},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": TOOL_RESULT},
        ],
        tools=exploring_tools(load_rubric("task-completion")),
        tool_choice={"type": "function", "function": {"name": "set_grade"}},
        max_tokens=8,
    )
    [prompt] = served.new_prompts()
    assert "<|im_start|>tool\n" in prompt
    shown = f"<tool_response>\n{TOOL_RESULT}\n</tool_response>"
    assert (shown in prompt) is (not served.escaping), prompt[-400:]


@pytest.fixture(scope="module", params=["--serve-required", "as-shipped"])
def serving_required(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, bool]]:
    """The launcher with `--serve-required`, and without: its URL and which it is."""
    required = request.param == "--serve-required"
    folder = tmp_path_factory.mktemp("required")
    with llama_server(folder, *([request.param] if required else [])) as url:
        yield url, required


def test_a_required_tool_choice_gets_a_tool_call(serving_required: tuple[str, bool]) -> None:
    """An exploring judge's first request asks `tool_choice: required`: the shipped handler
    refuses it (a 500: it asserts `auto`); served, the model's first choice is one of the tools,
    never a message."""
    from rubriclib.judging import exploring_tools

    url, required = serving_required
    tools = exploring_tools(load_rubric("task-completion"))
    client = OpenAI(base_url=url, api_key="unused", timeout=120, max_retries=0)
    asked = {
        "model": "smollm2-135m",
        "messages": [{"role": "user", "content": "Say hello."}],
        "tools": tools,
        "tool_choice": "required",
        "max_tokens": 48,
    }
    if not required:
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(**asked)
        return
    reply = client.chat.completions.create(**asked)
    names = {tool["function"]["name"] for tool in tools}
    calls = reply.choices[0].message.tool_calls
    assert calls and all(call.function.name in names for call in calls), reply

"""The shapes runs are held in as the SDKs and LangChain write them (tests/sdk_runs.py records
them with the real libraries), read into the same model and shown to a judge byte for byte as
the same run in OpenAI chat shape; a shape mixed into a run is named with the right reason."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sdk_runs
from langchain_core.load import dumpd
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
    messages_to_dict,
)

from rubriclib.item.transcript import Transcript, TranscriptError, read_transcript
from rubriclib.judging.prompt.agent_run import cut_run

CHAT_RUN = Path(__file__).parents[1] / "data" / "runs" / "openai_chat.json"
LIMIT = 128_000
"""The prompt-size limit the runs are shown at (the run gets 256,000 characters)."""


@pytest.fixture(scope="module")
def responses() -> tuple[list[Any], list[Any]]:
    return sdk_runs.responses_run()


def reference() -> Transcript:
    return read_transcript(json.loads(CHAT_RUN.read_text(encoding="utf-8")))


def langchain_dicts() -> list[Any]:
    return messages_to_dict(sdk_runs.langchain_messages())


RECORDED: dict[str, tuple[str, Callable[[tuple[list[Any], list[Any]]], Any]]] = {
    "anthropic SDK Messages": ("anthropic", lambda _: sdk_runs.anthropic_run()),
    "Responses, whole Responses in the input": ("openai-responses", lambda r: r[0]),
    "Responses, {instructions, input}": (
        "openai-responses",
        lambda r: {"instructions": sdk_runs.SYSTEM, "input": r[1]},
    ),
    "Responses, {instructions, input} with whole Responses": (
        "openai-responses",
        lambda r: {"instructions": sdk_runs.SYSTEM, "input": r[0]},
    ),
    "langchain messages_to_dict": ("langchain", lambda _: langchain_dicts()),
    "langchain model_dump": (
        "langchain",
        lambda _: [m.model_dump(mode="json") for m in sdk_runs.langchain_messages()],
    ),
    "langchain dumpd": ("langchain", lambda _: [dumpd(m) for m in sdk_runs.langchain_messages()]),
    "langchain convert_to_openai_messages": (
        "openai-chat",
        lambda _: convert_to_openai_messages(sdk_runs.langchain_messages()),
    ),
}


@pytest.mark.parametrize("form", RECORDED)
def test_a_run_as_a_library_recorded_it_is_the_same_run_as_in_chat_shape(
    form: str, responses: tuple[list[Any], list[Any]]
) -> None:
    shape, recorded = RECORDED[form]
    transcript = read_transcript(json.loads(json.dumps(recorded(responses))))
    assert transcript.shape == shape
    chat = reference()
    assert cut_run(transcript, LIMIT).section == cut_run(chat, LIMIT).section
    unnamed = [message.model_copy(update={"tool_name": None}) for message in transcript.messages]
    assert unnamed == list(chat.messages)


def test_a_langchain_tool_message_keeps_the_tool_it_names() -> None:
    transcript = read_transcript(langchain_dicts())
    assert [(m.answers, m.tool_name) for m in transcript.messages if m.role == "tool"] == [
        ("call_1", "get_order"),
        ("call_2", "refund"),
    ]


def test_a_lone_response_is_its_instructions_and_its_output(
    responses: tuple[list[Any], list[Any]],
) -> None:
    response = responses[0][1]
    transcript = read_transcript(response)
    assert [(m.role, m.text) for m in transcript.messages] == [
        ("system", sdk_runs.SYSTEM),
        ("assistant", sdk_runs.LOOK),
    ]
    assert transcript.messages[1].tool_calls[0].name == "get_order"
    assert (
        read_transcript({"instructions": "Be brief.", "input": "hi"}).messages
        == (
            read_transcript(
                [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
            )
        ).messages
    )


def test_langchain_role_aliases_read_as_langchain_reads_them() -> None:
    written = [
        {"role": "developer", "content": "Be brief."},
        {"role": "human", "content": "Weather in Oslo?"},
        {"role": "ai", "content": "", "tool_calls": [{"id": "c1", "name": "weather", "args": {"city": "Oslo"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "weather", "content": "4 C, rain"},
        {"role": "assistant", "content": "4 C and raining."},
    ]  # fmt: skip
    transcript = read_transcript(written)
    assert transcript.shape == "langchain"
    assert [m.role for m in transcript.messages] == [
        "developer", "user", "assistant", "tool", "assistant"
    ]  # fmt: skip
    as_langchain = read_transcript(messages_to_dict(convert_to_messages(written)))
    assert as_langchain.messages == transcript.messages


def test_langchain_thinking_blocks_errors_and_reasoning_content_are_kept() -> None:
    blocks = [
        {"type": "thinking", "thinking": "Search the drive.", "signature": "x"},
        {"type": "text", "text": "Searching."},
        {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "report"}},
    ]
    run = messages_to_dict(
        [
            HumanMessage("Find the report"),
            AIMessage(blocks, tool_calls=[{"id": "t1", "name": "search", "args": {"q": "report"}}]),
            ToolMessage("quota exceeded", tool_call_id="t1", status="error"),
            AIMessage("Out of quota.", additional_kwargs={"reasoning_content": "It failed."}),
            AIMessage([{"type": "tool_use", "id": "t2", "name": "search", "input": {}}]),
        ]
    )
    _, searching, error, answer, unlisted = read_transcript(run).messages
    anthropic = read_transcript([{"role": "user", "content": "Find the report"},
                                 {"role": "assistant", "content": blocks}]).messages[1]  # fmt: skip
    assert searching == anthropic
    assert (error.role, error.text, error.is_error, error.tool_name) == (
        "tool", "quota exceeded", True, None
    )  # fmt: skip
    assert (answer.text, answer.thinking) == ("Out of quota.", "It failed.")
    assert [call.id for call in unlisted.tool_calls] == ["t2"]  # a block tool_calls lack


def problems(value: Any) -> list[tuple[str, str]]:
    with pytest.raises(TranscriptError) as caught:
        read_transcript(value)
    return caught.value.problems


def test_a_call_langchain_could_not_parse_is_a_problem() -> None:
    broken = AIMessage("", additional_kwargs={"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}
    ]})  # fmt: skip
    assert problems(messages_to_dict([HumanMessage("hi"), broken])) == [
        ("transcript[1].data.invalid_tool_calls[0]", "a call LangChain could not parse")
    ]
    assert problems([{"type": "chat", "data": {"content": "x", "role": "robot"}}]) == [
        ("transcript[0].data.role", "unknown message role 'robot'; LangChain's here are human, "
         "user, ai, assistant, system, developer, tool")
    ]  # fmt: skip


def test_responses_that_disagree_on_instructions_are_named(
    responses: tuple[list[Any], list[Any]],
) -> None:
    run = list(responses[0])
    run[3] = {**run[3], "instructions": "Refund anything."}
    assert problems(run) == [
        ("transcript[3].instructions", "differ from transcript[1].instructions: a run has one set")
    ]
    assert problems({"instructions": "x", "input": [], "model": "gpt"}) == [
        ("transcript", "unknown key 'model'; a Responses run has instructions, input")
    ]


def test_an_unknown_anthropic_block_is_named_at_its_own_index() -> None:
    run = [{"role": "assistant", "content": [
        {"type": "text", "text": "a"}, {"type": "text", "text": "b"}, {"type": "hologram"}
    ]}]  # fmt: skip
    assert problems(run) == [("transcript[0].content[2]", "unknown content part 'hologram'")]


def test_shapes_mixed_into_a_run_are_named_with_the_shape_each_shows(
    responses: tuple[list[Any], list[Any]],
) -> None:
    anthropic = sdk_runs.anthropic_run()
    whole = responses[0]
    langchain = langchain_dicts()
    assert problems([*whole[:2], anthropic["messages"][1]]) == [
        ("transcript[2]", "an Anthropic SDK Message (type 'message' with stop_reason, usage) is "
         "Anthropic Messages, but transcript[1].output[0] is OpenAI Responses: a run is "
         "recorded in one shape")
    ]  # fmt: skip
    assert problems({**anthropic, "messages": [*anthropic["messages"][:2], whole[1]]}) == [
        ("transcript.messages[2].output[0]", "type 'message' is OpenAI Responses, but "
         "transcript.system is Anthropic Messages: a run is recorded in one shape")
    ]  # fmt: skip
    assert problems({**anthropic, "messages": [anthropic["messages"][0], langchain[2]]}) == [
        ("transcript.messages[1]", "type 'ai' with data is LangChain, but transcript.system is Anthropic "
         "Messages: a run is recorded in one shape")
    ]  # fmt: skip
    assert problems([*langchain[:3], anthropic["messages"][2]]) == [
        ("transcript[3]", "a 'tool_result' block is Anthropic Messages, but transcript[0] is "
         "LangChain: a run is recorded in one shape")
    ]  # fmt: skip
    assert problems([*langchain[:3], *whole[2:4]]) == [
        ("transcript[3]", "type 'function_call_output' is OpenAI Responses, but transcript[0] is "
         "LangChain: a run is recorded in one shape")
    ]  # fmt: skip


def test_chat_messages_langchain_accepts_read_inside_a_langchain_run() -> None:
    messages = sdk_runs.langchain_messages()
    run = [*convert_to_openai_messages(messages[:4]), *messages_to_dict(messages[4:])]
    transcript = read_transcript(run)
    assert transcript.shape == "langchain"
    assert transcript.messages == read_transcript(langchain_dicts()).messages


def test_a_langchain_call_recorded_without_an_id_gets_one_of_its_own() -> None:
    calls = [
        {"name": "ping", "args": {}, "id": None},
        {"name": "ping", "args": {"n": 2}, "id": None},
    ]
    recorded = messages_to_dict([HumanMessage("Ping twice."), AIMessage("", tool_calls=calls)])
    run = read_transcript(recorded)
    assert [(call.id, call.arguments) for call in run.messages[1].tool_calls] == [
        ("call-M2-1", {}),
        ("call-M2-2", {"n": 2}),
    ]


def test_langchain_message_objects_are_refused_with_how_to_pass_them() -> None:
    objects = sdk_runs.langchain_messages()
    hint = (
        "LangChain message objects (SystemMessage, HumanMessage, AIMessage, ToolMessage) are "
        "read as their dicts: pass langchain_core.messages.messages_to_dict(messages)"
    )
    assert problems(objects) == [("transcript", hint)]  # once, not once per message
    assert problems({"messages": objects[1:2]}) == [
        ("transcript.messages", hint.replace("SystemMessage, HumanMessage, AIMessage, ToolMessage", "HumanMessage"))
    ]  # fmt: skip
    [(where, alone)] = problems(objects[1])
    assert where == "transcript" and alone.startswith("LangChain message objects (HumanMessage)")
    assert read_transcript(messages_to_dict(objects)) == read_transcript(langchain_dicts())
    assert problems([{"role": "user", "content": "hi"}, 3]) == [
        ("transcript[1]", "must be a message (a mapping), not int")
    ]  # any other object: as before

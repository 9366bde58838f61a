"""Pydantic AI's messages as its own Agent writes them (tests/pydantic_ai_run.py, run under
`.integrations/pydantic-ai`, wrote the files in tests/data/runs/): read into the same model and
shown to a judge as the same run in OpenAI chat shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import integration_tool, run_tool, without_keys

from rubriclib.cli import main
from rubriclib.item.transcript import TranscriptError, read_transcript
from rubriclib.judging.prompt.agent_run import cut_run

TESTS = Path(__file__).parents[1]
RUNS = TESTS / "data" / "runs"
SCRIPT = TESTS / "pydantic_ai_run.py"
VOLATILE = {"timestamp", "request_timestamp", "duration", "run_id", "conversation_id"}
"""What differs at every run of the same agent: when it ran, and its run's ids."""


def recorded(name: str) -> Any:
    return json.loads((RUNS / f"{name}.json").read_text(encoding="utf-8"))


def test_a_pydantic_ai_run_is_the_same_run_as_in_chat_shape() -> None:
    transcript = read_transcript(recorded("pydantic_ai"))
    chat = read_transcript(recorded("openai_chat"))
    assert transcript.shape == "pydantic-ai"
    assert cut_run(transcript, 128_000).section == cut_run(chat, 128_000).section
    unnamed = [message.model_copy(update={"tool_name": None}) for message in transcript.messages]
    assert unnamed == list(chat.messages)
    assert [m.tool_name for m in transcript.messages if m.role == "tool"] == ["get_order", "refund"]


def test_render_shows_it_as_the_run_in_chat_shape() -> None:
    shown = [
        CliRunner().invoke(main, ["render", "task-completion", "--transcript", str(path)])
        for path in (RUNS / "pydantic_ai.json", RUNS / "openai_chat.json")
    ]
    assert [result.exit_code for result in shown] == [0, 0], shown[0].output
    assert "[M4] tool result for get_order (call_1, answers the call in M3)" in shown[0].stdout
    assert shown[0].stdout == shown[1].stdout


def test_instructions_thinking_retries_and_media_are_kept() -> None:
    transcript = read_transcript(recorded("pydantic_ai_retries"))
    repeated = [message.get("instructions") for message in recorded("pydantic_ai_retries")]
    assert repeated.count("Be brief.") == 4
    shown = [
        (m.role, m.text, m.thinking, [c.id for c in m.tool_calls], m.answers, m.is_error)
        for m in transcript.messages
    ]
    assert shown == [
        ("system", "Be brief.", "", [], None, False),  # given at every request, shown once
        ("user", "What is order A-17?\n(image not shown)", "", [], None, False),
        ("assistant", "", "The order id needs checking first.", ["call_1"], None, False),
        ("tool", "No such order: write its id without the dash.", "", [], "call_1", True),
        ("assistant", "", "", ["call_2"], None, False),
        ("tool", '{"order_id": "A17", "paid": 12.5}', "", [], "call_2", False),
        ("assistant", "ok", "", [], None, False),
        ("user", "Say what the order is.", "", [], None, False),  # the output validator's retry
        ("assistant", "Order A17 is a mug for $12.50.", "", [], None, False),
    ]
    assert transcript.messages[2].tool_calls[0].arguments == {"order_id": "A-17"}  # args as text


def test_parts_not_read_and_mixed_shapes_are_named() -> None:
    run = recorded("pydantic_ai_retries")
    run[1]["parts"][0]["part_kind"] = "compaction"
    with pytest.raises(TranscriptError) as unread:
        read_transcript(run)
    assert [where for where, _ in unread.value.problems] == ["transcript[1].parts[0]"]
    assert unread.value.problems[0][1].startswith("part_kind 'compaction' is not read (read: ")
    mixed = [
        *recorded("pydantic_ai")[:2],
        {"role": "tool", "tool_call_id": "call_1", "content": "x"},
    ]
    with pytest.raises(TranscriptError) as refused:
        read_transcript(mixed)
    assert refused.value.problems == [
        (
            "transcript[2]",
            "role 'tool' is OpenAI chat, but transcript[0] is Pydantic AI: a run is recorded in "
            "one shape",
        )
    ]


def test_the_files_are_what_pydantic_ai_writes(tmp_path: Path) -> None:
    """Pydantic AI's own code, run again: each file is what it writes, but for when it ran."""
    python = integration_tool("pydantic-ai", "bin", "python")
    run_tool([str(python), str(SCRIPT), str(tmp_path)], tmp_path)
    for name in ("pydantic_ai", "pydantic_ai_retries"):
        written = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert without_keys(written, VOLATILE) == without_keys(recorded(name), VOLATILE), name
        assert read_transcript(written) == read_transcript(recorded(name))

"""Docent's AgentRun as its own models write it (tests/docent_run.py, run under
`.integrations/docent`, wrote the files in tests/data/runs/): one run of several transcripts,
each block named as Docent's own prompt names it (`T1B3`), shown like the run in chat shape."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import integration_tool, run_tool

from rubriclib.cli import main
from rubriclib.item import Item, Transcript, TranscriptError, read_transcript
from rubriclib.judging import run_blocks

TESTS = Path(__file__).parents[1]
RUNS = TESTS / "data" / "runs"
SCRIPT = TESTS / "docent_run.py"
NAMES = ("docent_run.json", "docent_run.txt", "docent_grouped.json", "docent_grouped_order.json")
DOCENT_BLOCK = re.compile(r"<\|(T\d+B\d+); role: (\w+)\|>\n(.*?)\n</\|\1; role: \2\|>", re.DOTALL)
"""A block as Docent's LLMContext shows it to a model: its id, its role, its content."""


def recorded(name: str) -> Any:
    return json.loads((RUNS / name).read_text(encoding="utf-8"))


def test_each_block_is_named_as_docent_names_it() -> None:
    """Docent's own prompt of the run (docent_run.txt): every block id it shows is the same
    message here, with the same role and text (Docent shows reasoning and calls in tags)."""
    transcript = read_transcript(recorded("docent_run.json"))
    shown = DOCENT_BLOCK.findall((RUNS / "docent_run.txt").read_text(encoding="utf-8"))
    assert [block for block, _, _ in shown] == list(transcript.block_ids)
    for block, role, content in shown:
        message = transcript.messages[transcript.block_ids.index(block)]
        said = re.sub(r"<(reasoning|tool call)>\n.*?\n</\1>\n?", "", content, flags=re.DOTALL)
        assert (message.role, said.strip() in message.text) == (role, True), block


def test_an_agent_run_reads_into_one_run_of_parts() -> None:
    transcript = read_transcript(recorded("docent_run.json"))
    assert transcript.shape == "docent"
    assert [part.start for part in transcript.parts] == [0, 5]
    assert transcript.parts[0].heading == (
        'triage; Reads the ticket and looks up the order; metadata {"agent": "triage", '
        '"model": "gpt-4.1-mini"}'
    )
    shown = [
        (m.role, m.thinking, [c.id for c in m.tool_calls], m.answers, m.tool_name, m.is_error)
        for m in transcript.messages
    ]
    assert shown[2:4] == [
        ("assistant", "A refund: check the order first.", ["call_1"], None, None, False),
        ("tool", "", [], "call_1", "get_order", False),
    ]
    assert shown[7:9] == [
        ("assistant", "", ["call_1"], None, None, False),
        ("tool", "", [], "call_1", "refund", True),
    ]
    assert (
        transcript.messages[8].text == "(error) Refunds over $10 need the customer's confirmation."
    )
    # each transcript numbers its first call call_1: a result answers its own transcript's
    calls = transcript.pairing.calls
    assert [calls[3], calls[8]] == [(2, shown_call(transcript, 2)), (7, shown_call(transcript, 7))]
    assert transcript.messages[7].tool_calls[0].arguments == {"order_id": "A-17", "amount": 12.5}


def shown_call(transcript: Transcript, index: int) -> Any:
    return transcript.messages[index].tool_calls[0]


def test_render_shows_each_transcript_headed_and_its_blocks_as_in_chat_shape() -> None:
    transcript = read_transcript(recorded("docent_run.json"))
    text, _ = run_blocks(transcript, 100_000)
    headings = [line for line in text.split("\n") if line.startswith("== ")]
    assert headings == [
        '== Transcript T0: triage; Reads the ticket and looks up the order; metadata {"agent": '
        '"triage", "model": "gpt-4.1-mini"} (5 blocks) ==',
        '== Transcript T1: refunds; metadata {"agent": "refunds"} (9 blocks) ==',
    ]
    for number, (start, end) in enumerate(transcript.bounds):
        alone = Transcript(messages=transcript.messages[start:end], shape="openai-chat")
        chat, _ = run_blocks(alone, 100_000)
        as_docent = re.sub(r"\bM(\d+)\b", lambda m, n=number: f"T{n}B{int(m[1]) - 1}", chat)
        assert f"{headings[number]}\n\n{as_docent}" in text
    assert "[T1B3] tool error for refund (call_1, answers the call in T1B2)" in text


def test_the_order_is_docent_s_and_the_output_is_the_last_transcript_s_answer() -> None:
    """Transcripts are numbered as Docent numbers them (groups depth first, siblings by time,
    the undated last); the candidate output is the last transcript's last assistant text."""
    grouped = read_transcript(recorded("docent_grouped.json"))
    names = [part.heading for part in grouped.parts]
    assert (
        names
        == recorded("docent_grouped_order.json")
        != [t["name"] for t in recorded("docent_grouped.json")["transcripts"]]
    )
    assert grouped.final_answer == "summary done."
    item = Item(transcript=recorded("docent_run.json"))  # as a dataset row gives it
    assert item.output == "Done: $12.50 is on its way back to your card."
    rendered = CliRunner().invoke(
        main, ["render", "task-completion", "--transcript", str(RUNS / "docent_run.json")]
    )
    assert "The agent's final answer: block T1B8, the run's last block." in rendered.stdout


def test_a_run_written_as_a_transcript_reads_back_with_its_parts() -> None:
    transcript = read_transcript(recorded("docent_run.json"))
    assert read_transcript(transcript.model_dump(mode="json")) == transcript
    plain = read_transcript([{"role": "user", "content": "hi"}])
    assert "parts" not in plain.model_dump()  # a run of one is written as before


def broken(change: Any) -> list[tuple[str, str]]:
    run = recorded("docent_run.json")
    change(run)
    with pytest.raises(TranscriptError) as refused:
        read_transcript(run)
    return refused.value.problems


def test_a_dump_that_is_not_valid_is_refused_naming_the_field() -> None:
    assert broken(lambda run: run.pop("transcripts")) == [
        ("transcript.transcripts", "missing: an AgentRun has a list of them")
    ]
    assert broken(lambda run: run.update(transcripts=[])) == [
        ("transcript.transcripts", "an AgentRun has at least one transcript")
    ]
    assert broken(lambda run: run["transcripts"][1]["messages"][4].pop("role")) == [
        (
            "transcript.transcripts[1].messages[4].role",
            "no role; roles here are system, user, assistant, tool",
        )
    ]

    def lost_group(run: Any) -> None:
        run["transcripts"][0]["created_at"] = "yesterday"
        run["transcripts"][1]["transcript_group_id"] = "group-gone"
        run["transcript_groups"] = [{"id": "group-gone", "parent_transcript_group_id": "nowhere"}]

    assert broken(lost_group) == [
        (
            "transcript.transcripts[0].created_at",
            "must be a time as ISO 8601 text, not 'yesterday'",
        ),
        (
            "transcript.transcripts[1].transcript_group_id",
            "group 'group-gone' does not lead to the run (a group's parent is missing, or the "
            "groups' parents loop)",
        ),
    ]
    run = recorded("docent_run.json")
    run["transcripts"][1]["messages"][3]["tool_call_id"] = "call_2"  # answers a later call
    with pytest.raises(TranscriptError) as refused:
        read_transcript(run)
    assert refused.value.problems == [
        (
            "transcript.transcripts[1].messages[3]",
            "answers call 'call_2', which is not earlier in the run",
        )
    ]


def test_a_broken_dump_is_refused_with_file_line_and_field(tmp_path: Path) -> None:
    run = recorded("docent_run.json")
    del run["transcripts"][1]["messages"][4]["role"]
    path = tmp_path / "agent_run.json"
    text = json.dumps(run, indent=2)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index("Shall I refund")].count("\n") - 1  # the message's `{`
    result = CliRunner().invoke(main, ["render", "task-completion", "--transcript", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {path}:{line}: transcript.transcripts[1].messages[4].role: no role; "
        "roles here are system, user, assistant, tool"
    ]


def test_the_files_are_what_docent_writes(tmp_path: Path) -> None:
    """Docent's own code, run again: each file is what it writes."""
    python = integration_tool("docent", "bin", "python")
    run_tool([str(python), str(SCRIPT), str(tmp_path)], tmp_path)
    for name in NAMES:
        assert (tmp_path / name).read_text() == (RUNS / name).read_text(), name

"""letta-evals rows that record the agent's messages: letta's message objects read into one run
(its turns for the extractors, the canonical Transcript for rubrics that judge the run), broken
runs refused by file, line and `messages[N]`, and `rubriclib eval` judging what each grader's
extractor takes. That the extractors take what letta-evals' own take is proven against
letta-evals' code in tests/integrations/test_letta_extractors.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer
from letta_messages import FIRST_TURN, RUN, RUNS, SECOND_TURN, call, message

from rubriclib.cli import main
from rubriclib.errors import EvalError
from rubriclib.evals.formats import load_eval
from rubriclib.evals.letta.extractors import Extractor
from rubriclib.evals.letta.runs import read_run
from rubriclib.item.transcript import Message, ToolCall, TranscriptError

TYPES = (
    "system_message, user_message, reasoning_message, hidden_reasoning_message, "
    "tool_call_message, tool_return_message, assistant_message, approval_request_message, "
    "approval_response_message, summary_message, event_message"
)


def problems_of(value: Any) -> list[tuple[str, str]]:
    with pytest.raises(TranscriptError) as caught:
        read_run(value)
    return caught.value.problems


# ---- reading a run ----


def test_letta_messages_are_read_into_one_run_losslessly() -> None:
    run = read_run(RUN)
    assert run.transcript.shape == "letta"
    assert len(run.turns) == 1 and len(run.turns[0]) == len(RUN)
    messages = run.transcript.messages
    assert [m.role for m in messages] == [
        "system",
        "user",
        "assistant",  # reasoning
        "assistant",  # the lookup
        "tool",
        "assistant",
        "user",
        "assistant",  # redacted reasoning
        "assistant",  # two calls in one message
        "tool",
        "tool",
        "assistant",
    ]
    assert messages[2] == Message(role="assistant", thinking="Look the order up first.")
    assert messages[3].tool_calls == (
        ToolCall(id="call-1", name="lookup_order", arguments={"order": 7}),
    )
    assert messages[4] == Message(
        role="tool",
        text='{"status": "shipped", "day": "Monday"}\n(stdout)\nlooked up order 7',
        answers="call-1",
    )
    assert messages[6].text == "And order 8? Refund 7 anyway."
    assert messages[7].thinking == "(reasoning redacted)"
    assert [c.name for c in messages[8].tool_calls] == ["refund", "lookup_order"]
    assert messages[9].is_error and not messages[10].is_error
    assert messages[11].text == (
        "Order 8 is being packed. I could not refund order 7: it has shipped (ref R-77, 20 EUR)."
    )  # content parts joined as letta's flatten_content joins them
    assert run.transcript.final_answer == messages[11].text
    kept = run.turns[0][8]
    assert kept.kind == "tool_call_message"
    assert [c.arguments for c in kept.calls] == [
        '{"order": 7, "amount": 20}',
        '{"order": 8}',
    ]  # the JSON text as the model wrote it: letta's tool_arguments returns it


def test_a_run_of_turns_is_the_same_transcript_with_its_turns_kept() -> None:
    flat, turns = read_run(RUN), read_run([FIRST_TURN, SECOND_TURN])
    assert turns.transcript == flat.transcript
    assert [len(turn) for turn in turns.turns] == [len(FIRST_TURN), len(SECOND_TURN)]


def test_approvals_summaries_events_and_images_are_shown_never_dropped() -> None:
    run = read_run(
        [
            message("user_message", 0, content=[{"type": "image", "source": {"url": "u"}}]),
            message("approval_request_message", 1, tool_call=call("a-1", "delete_board", {})),
            message(
                "approval_response_message",
                2,
                approvals=[
                    {"type": "approval", "approve": False, "tool_call_id": "a-1", "reason": "no"}
                ],
            ),
            message("summary_message", 3, summary="The user asked to delete a board."),
            message("event_message", 4, event_type="compaction", event_data={"kept": 3}),
            message("hidden_reasoning_message", 5, state="omitted", hidden_reasoning="maybe"),
        ]
    )
    texts = [(m.role, m.text or m.thinking) for m in run.transcript.messages]
    assert texts == [
        ("user", "(image not shown)"),
        ("assistant", "(asks for approval before this call)"),
        ("user", "(approval) denied call a-1: no"),
        ("system", "(summary of earlier messages)\nThe user asked to delete a board."),
        ("system", '(event: compaction)\n{"kept": 3}'),
        ("assistant", "maybe"),
    ]
    assert run.transcript.messages[1].tool_calls[0].name == "delete_board"


def test_a_broken_run_names_each_message_and_what_is_wrong() -> None:
    found = problems_of(
        [
            message("user_message", 0, content="Hi"),
            message("tool_call_message", 1, tool_call=call("c-1", "lookup", "{order: 7")),
            message(
                "tool_return_message", 2, tool_call_id="c-9", tool_return="x", status="success"
            ),
            message("assistant_mesage", 3, content="typo"),
            {"content": "no type"},
            message("assistant_message", 5, content=[{"type": "image"}]),
            message(
                "tool_call_message",
                6,
                tool_call=call("c-2", "a", {}),
                tool_calls=[call("c-3", "b", {})],
            ),
            message("tool_call_message", 7, tool_calls={"name": "x"}),
            message("reasoning_message", 8),
            "text",
        ]
    )
    assert found == [
        (
            "messages[1].tool_call.arguments",
            "is not JSON (Expecting property name enclosed in double quotes at character 1)",
        ),
        (
            "messages[3].message_type",
            f"unknown message_type 'assistant_mesage'; letta's are {TYPES}",
        ),
        ("messages[4].message_type", f"no message_type; letta's are {TYPES}"),
        ("messages[5].content[0]", "unknown content part; here: text parts ({type: text, text})"),
        (
            "messages[6].tool_call",
            "call 'c-2' is none of tool_calls: letta reads tool_calls (tool_call is the "
            "deprecated copy of one of them)",
        ),
        ("messages[7].tool_calls", "must be a list of tool calls, not dict"),
        ("messages[8].reasoning", "is required (a reasoning_message)"),
        ("messages[9]", "must be a message (a mapping), not str"),
        ("messages[2]", "returns call 'c-9', which is not earlier in the run"),
    ]


def test_a_run_is_a_list_of_messages_or_of_turns_never_both() -> None:
    assert problems_of([]) == [
        ("messages", "must be a non-empty list of letta messages (a run), not an empty list")
    ]
    assert problems_of([[], []]) == [("messages", "holds no message: a run has at least one")]
    assert problems_of([FIRST_TURN, RUN[0]])[0] == (
        "messages[1]",
        "must be a turn (a list of messages), not dict: a run is a list of messages, or a list "
        "of turns, not both",
    )
    assert problems_of([RUN[0], FIRST_TURN])[0][0] == "messages[1]"


def test_an_extractor_letta_would_refuse_or_cannot_run_here_says_why() -> None:
    assert (
        Extractor("last_asistant")
        .problems()[0][1]
        .startswith(
            "unknown extractor 'last_asistant'; letta-evals' are last_assistant, first_assistant"
        )
    )
    assert Extractor("pattern", {"group": 1}).problems() == [
        ("extractor_config.pattern", "is required: extractor pattern reads it")
    ]
    assert (
        Extractor("pattern", {"pattern": "(unclosed"})
        .problems()[0][1]
        .startswith("is not a regular expression: missing ), unterminated subpattern")
    )
    assert Extractor("tool_output").problems()[0][0] == "extractor_config.tool_name"
    assert Extractor("mine.py:first_line").problems() == []
    assert "live Letta agent" in str(
        Extractor("memory_block", {"block_label": "human"}).why_not_run()
    )
    assert "is Python letta loads" in str(Extractor("mine.py:first_line").why_not_run())
    assert Extractor("after_marker", {"marker": "x"}).why_not_run() is None


# ---- `rubriclib eval` on a suite whose rows record messages ----

SUITE = """\
name: recorded-runs
dataset: runs.jsonl
target: {kind: letta_code, model_handles: [openai/gpt-4.1-mini]}
graders:
  answer:
    kind: model_judge
    prompt: "Q: {input}\\nA: {submission}\\n"
    model: judge
  lookup:
    kind: model_judge
    prompt: "Looked up with: {submission}\\n"
    model: judge
    extractor: tool_arguments
    extractor_config: {tool_name: lookup_order}
reward: {kind: metric, metric_key: answer}
"""
RUN_RUBRIC = """\
---
name: looked-up-first
version: 1.0.0
scale: pass-fail
description: Whether the agent looked the order up before answering about it.
requires: [transcript]
---
Pass when the agent called lookup_order before saying where an order is. verdict:pass
"""


def verdict(text: str) -> list[dict[str, Any]]:
    """RUN with its final answer carrying a keyword the scripted judge answers by."""
    last = message("assistant_message", 11, content=f"It shipped. {text}")
    return [*RUN[:-1], last]


def eval_cli(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["eval", *arguments])


def users(server: JudgeServer) -> list[str]:
    return [request["messages"][1]["content"] for request in server.requests]


@pytest.fixture
def suite(write_file: Callable[..., Path]) -> Callable[..., Path]:
    def write(rows: list[dict[str, Any]], *changes: tuple[str, str]) -> Path:
        write_file("runs.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
        text = SUITE
        for old, new in changes:
            text = text.replace(old, new)
        return write_file("suite.yaml", text)

    return write


def test_each_grader_judges_what_its_extractor_takes_from_the_recorded_messages(
    suite: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    rows = [
        {
            "id": "good",
            "input": "Where is order 7?",
            "messages": verdict("verdict:pass"),
            "team": "a",
        },
        {"id": "turns", "input": "And order 8?", "messages": [FIRST_TURN, SECOND_TURN]},
    ]
    out = tmp_path / "results.jsonl"
    result = eval_cli(str(suite(rows)), "--no-cache", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(users(endpoint)) == [
        'Looked up with: {"order": 7}\n',
        'Looked up with: {"order": 7}\n',
        "Q: And order 8?\nA: Order 8 is being packed. I could not refund order 7: it has "
        "shipped (ref R-77, 20 EUR).\n",
        "Q: Where is order 7?\nA: It shipped. verdict:pass\n",
    ]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["row"]: line["metadata"] for line in lines} == {"good": {"team": "a"}, "turns": {}}
    assert all("transcript" not in line["result"]["details"] for line in lines)


def test_a_rubric_that_requires_a_transcript_is_given_the_whole_run(
    suite: Callable[..., Path],
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    tmp_path: Path,
) -> None:
    shim = CliRunner().invoke(main, ["integrations", "letta", "--dir", str(tmp_path)])
    assert shim.exit_code == 0, shim.output
    write_file("looked-up.md", RUN_RUBRIC)
    path = suite(
        [{"id": "run", "input": "Where is order 7?", "messages": RUN}],
        (
            "reward:",
            "  process:\n    kind: tool\n    function: rubriclib_grader.py:./looked-up.md\n"
            "    model: judge\n    extractor: after_marker\n    extractor_config: {marker: x}\n"
            "reward:",
        ),
    )
    ev = load_eval(path)
    assert ev.skipped[-1] == (
        "graders.process.extractor: after_marker: not run, rubric looked-up-first requires the "
        "whole run (requires: [transcript]) and is given a row's recorded messages"
    )
    result = eval_cli(str(path), "--no-cache", "--format", "json")
    [whole] = [user for user in users(endpoint) if "called lookup_order before" in user]
    assert "## Agent run" in whole
    assert '[M4] assistant\ntool call lookup_order (call-1): {"order": 7}' in whole
    assert "[M5] tool result for lookup_order (call-1, answers the call in M4)" in whole
    assert "[M10] tool error for refund (call-2, answers the call in M9)" in whole
    assert "The agent's final answer: block M12, the run's last block." in whole
    report = json.loads(result.output)
    [process] = [grader for grader in report["graders"] if grader["name"] == "process"]
    assert process["pass"] == 1, report


def test_a_broken_run_is_refused_with_file_line_and_message_before_any_request(
    suite: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    broken = [
        message("user_message", 0, content="Refund order 7."),
        message("tool_call_message", 1, tool_call=call("c-1", "refund", "{'order': 7}")),
        message("tool_return_message", 2, tool_call_id="c-0", tool_return="done", status="success"),
        message("assistant_reply", 3, content="Done."),
    ]
    rows = [
        {"id": "fine", "input": "Where is order 7?", "messages": RUN},
        {"id": "broken", "input": "Refund order 7.", "messages": broken},
    ]
    path = suite(rows)
    data = tmp_path / "runs.jsonl"
    for arguments in ([str(path), "--dry-run"], [str(path)]):
        result = eval_cli(*arguments)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines() == [
            f"rubriclib: error: {data}:2: messages[1].tool_call.arguments: is not JSON "
            "(Expecting property name enclosed in double quotes at character 1)",
            f"rubriclib: error: {data}:2: messages[3].message_type: unknown message_type "
            f"'assistant_reply'; letta's are {TYPES}",
            f"rubriclib: error: {data}:2: messages[2]: returns call 'c-0', which is not earlier "
            "in the run",
        ]
    assert endpoint.requests == []


def test_what_an_extractor_cannot_do_on_recorded_messages_is_refused_before_any_request(
    suite: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    rows = [
        {"id": "run", "input": "Where is order 7?", "messages": RUN},
        {"id": "both", "input": "q", "messages": RUN, "submission": "It shipped."},
        {"id": "neither", "input": "q"},
    ]
    memory = (
        "    extractor_config: {tool_name: lookup_order}\n",
        "    extractor_config: {tool_name: lookup_order}\n  memory:\n    kind: model_judge\n"
        "    prompt: '{submission}'\n    model: judge\n    extractor: memory_block\n"
        "    extractor_config: {block_label: human}\n  grouped:\n    kind: model_judge\n"
        "    prompt: '{submission}'\n    model: judge\n    extractor: pattern\n"
        "    extractor_config: {pattern: Order, group: 3}\n",
    )
    path = suite(rows, memory)
    result = eval_cli(str(path), "--dry-run")
    assert result.exit_code == 2, result.output
    data = tmp_path / "runs.jsonl"
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {data}:1: messages: grader memory: extractor memory_block reads a "
        "memory block of the live Letta agent (its agent_state), which recorded messages do not "
        "hold; record what it would take as the submission",
        f"rubriclib: error: {data}:1: messages: grader grouped: extractor pattern: IndexError: "
        "no such group",
        f"rubriclib: error: {data}:2: submission: given with messages: each grader's extractor "
        "takes the submission from the messages, as letta-evals does; give one of them",
        f"rubriclib: error: {data}:3: submission: is required: the agent's recorded answer, or "
        "its recorded messages (rubriclib runs no letta agent)",
    ]
    assert endpoint.requests == []


def test_an_extractor_config_letta_would_fail_on_stops_the_suite(
    suite: Callable[..., Path],
) -> None:
    path = suite([], ("extractor: tool_arguments\n", "extractor: pattern\n"))
    with pytest.raises(EvalError) as caught:
        load_eval(path)
    assert [(p.field, p.message) for p in caught.value.problems] == [
        ("graders.lookup.extractor_config.pattern", "is required: extractor pattern reads it")
    ]
    path = suite([], ("tool_arguments\n", "tool_argument\n"))
    with pytest.raises(EvalError) as caught:
        load_eval(path)
    assert caught.value.problems[0].message.startswith("unknown extractor 'tool_argument'")


def test_an_extractor_that_finds_nothing_is_an_error_named_by_the_dry_run_and_never_sent(
    suite: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    rows = [
        {"id": "no-answer", "input": "Cancel my plan.", "messages": RUNS["no-answer"]},
        {
            "id": "per-turn",
            "input": ["Where is order 7?", "And 8?"],
            "ground_truth": ["shipped", "packing"],
            "messages": RUN,
        },
    ]
    path = suite(rows)
    data = tmp_path / "runs.jsonl"
    planned = eval_cli(str(path), "--dry-run")
    assert planned.exit_code == 0, planned.output
    assert (
        f"  {data}:1: answer: extractor last_assistant finds nothing in the recorded messages "
        "('Empty submission - extractor found no content')"
    ) in planned.output
    assert (
        f"  {data}:2: answer: turn 1: the recorded messages have no turn 1 (letta-evals: "
        "'Empty trajectory - agent produced no messages'); record messages as one list per turn"
    ) in planned.output
    out = tmp_path / "results.jsonl"
    result = eval_cli(str(path), "--no-cache", "--out", str(out))
    assert result.exit_code == 3, result.output  # undecided: errors, never a pass or a fail
    verdicts = {
        (line["row"], line["grader"]): line["result"]["verdict"]
        for line in map(json.loads, out.read_text().splitlines())
    }
    assert verdicts == {
        ("no-answer", "answer"): "error",
        ("no-answer", "lookup"): "fail",  # tool_arguments finds no call: letta's "{}" is judged
        ("per-turn", "answer"): "error",
        ("per-turn", "lookup"): "error",
    }
    assert users(endpoint) == ["Looked up with: {}\n"]


def test_a_csv_row_holds_its_messages_as_json_text(
    suite: Callable[..., Path], write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = suite([], ("runs.jsonl", "runs.csv"))
    cell = json.dumps(verdict("verdict:pass")).replace('"', '""')
    write_file("runs.csv", f'id,input,messages\nr1,Where is order 7?,"{cell}"\n')
    result = eval_cli(str(path), "--no-cache")
    assert result.exit_code == 0, result.output
    assert "Q: Where is order 7?\nA: It shipped. verdict:pass\n" in users(endpoint)

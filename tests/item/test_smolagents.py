"""smolagents' memory as its own agents write it (tests/smolagents_run.py, run under
`.integrations/smolagents`, wrote the files in tests/data/runs/), in both forms a user saves:
`write_memory_to_messages()` and `memory.get_full_steps()`. Read into the same model and shown
to a judge as the same run in OpenAI chat shape."""

from __future__ import annotations

import json
from collections.abc import Callable
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
SCRIPT = TESTS / "smolagents_run.py"
NAMES = [
    f"smolagents{run}_{form}" for run in ("", "_errors", "_code") for form in ("messages", "steps")
]
VOLATILE = {"start_time", "end_time", "duration"}
"""What differs at every run of the same agent: when each step ran."""


def recorded(name: str) -> Any:
    return json.loads((RUNS / f"{name}.json").read_text(encoding="utf-8"))


def shown(name: str) -> list[tuple[str, str, list[str], str | None, bool]]:
    return [
        (m.role, m.text, [f"{c.name} {c.id}" for c in m.tool_calls], m.answers, m.is_error)
        for m in read_transcript(recorded(name)).messages
    ]


@pytest.mark.parametrize("form", ["messages", "steps"])
def test_a_smolagents_run_is_the_same_run_as_in_chat_shape(form: str) -> None:
    """Its framing (`New task:`, `Calling tools:`, `Observation:`) is read as what it marks,
    arguments written as Python dicts are the call's, and each final_answer call that ended a
    task is the assistant's answer."""
    transcript = read_transcript(recorded(f"smolagents_{form}"))
    chat = read_transcript(recorded("openai_chat"))
    assert transcript.shape == "smolagents"
    assert transcript.messages == chat.messages
    assert cut_run(transcript, 128_000).section == cut_run(chat, 128_000).section
    assert transcript.messages[2].tool_calls[0].arguments == {"order_id": "A-17"}


def test_render_shows_it_as_the_run_in_chat_shape() -> None:
    shown = [
        CliRunner().invoke(main, ["render", "task-completion", "--transcript", str(path)])
        for path in (
            RUNS / "smolagents_messages.json",
            RUNS / "smolagents_steps.json",
            RUNS / "openai_chat.json",
        )
    ]
    assert [result.exit_code for result in shown] == [0, 0, 0], shown[0].output
    assert "[M4] tool result for get_order (call_1, answers the call in M3)" in shown[0].stdout
    assert shown[0].stdout == shown[1].stdout == shown[2].stdout


def test_errors_several_calls_and_a_refused_answer() -> None:
    """A tool that failed: the steps hold its call, the messages only its error. One
    observation for two calls answers neither; the error of an answer a check refused answers
    no call; the retry smolagents asks for after each error is left out."""
    failed = "Error executing tool 'find_order' with arguments {'order_id': 'A-17'}: ValueError: No such order: write its id without the dash.\nPlease try again or use another tool"
    rest = [
        ("assistant", "", ["find_order call_2", "get_customer call_3"], None, False),
        (
            "tool",
            '{"order_id": "A17", "item": "mug", "paid": 12.5}\n{"name": "Ada", "orders": 3}',
            [],
            None,
            False,
        ),
        ("assistant", "", ["final_answer call_4"], None, False),
        ("tool", "ok", [], "call_4", False),
        ("tool", "Check says_what failed with error: ", [], None, True),
        ("assistant", "Order A17 is Ada's mug, $12.50.", [], None, False),
    ]
    start = [
        (
            "system",
            "You are Acme's support agent. Confirm with the user before any refund.",
            [],
            None,
            False,
        ),
        ("user", "What is order A-17, and whose?", [], None, False),
    ]
    assert shown("smolagents_errors_steps") == [
        *start,
        ("assistant", "The order id needs checking first.", ["find_order call_1"], None, False),
        ("tool", failed, [], "call_1", True),
        *rest,
    ]
    assert shown("smolagents_errors_messages") == [
        *start,
        ("assistant", "The order id needs checking first.", [], None, False),
        ("tool", failed, [], None, True),
        *rest,
    ]
    result = CliRunner().invoke(
        main,
        [
            "render",
            "task-completion",
            "--transcript",
            str(RUNS / "smolagents_errors_messages.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "[M4] tool error\nError executing tool 'find_order'" in result.stdout
    assert "[M9] tool error\nCheck says_what failed" in result.stdout


def test_a_code_agent_run_keeps_its_plan_its_code_and_its_answer() -> None:
    """A CodeAgent's step calls python_interpreter with its code (a string); the output of the
    code that called final_answer is the run's answer."""
    for form in ("messages", "steps"):
        transcript = read_transcript(recorded(f"smolagents_code_{form}"))
        roles = [(m.role, [c.name for c in m.tool_calls], m.answers) for m in transcript.messages]
        assert roles == [
            ("system", [], None),
            ("user", [], None),
            ("assistant", [], None),  # the plan
            ("user", [], None),  # "Now proceed and carry out this plan."
            ("assistant", ["python_interpreter"], None),
            ("tool", [], "call_2"),
            ("assistant", ["python_interpreter"], None),
            ("tool", [], "call_3"),
            ("assistant", [], None),
        ], form
        assert transcript.messages[2].text.endswith(
            "1. Look the order up.\n2. Answer with what it is.\n```"
        )
        assert (
            transcript.messages[4].tool_calls[0].arguments
            == 'order = get_order(order_id="A-17")\nprint(order)'
        )
        assert transcript.final_answer == "Order A-17 is a mug for $12.50."
    assert read_transcript(recorded("smolagents_code_messages")) == read_transcript(
        recorded("smolagents_code_steps")
    )


def broken(name: str, change: Callable[[list[Any]], None]) -> list[tuple[str, str]]:
    run = recorded(name)
    change(run)
    with pytest.raises(TranscriptError) as refused:
        read_transcript(run)
    return refused.value.problems


def set_text(at: int, text: str) -> Callable[[list[Any]], None]:
    def change(run: list[Any]) -> None:
        run[at]["content"][0]["text"] = text

    return change


def test_broken_memories_are_refused_naming_the_field() -> None:
    assert broken("smolagents_messages", set_text(3, "Calling tools:\n[{'id': 'call_1',")) == [
        (
            "transcript[3].content",
            "its calls are not readable after 'Calling tools:\\n' ('{' was never closed (<unknown>, line 1))",
        )
    ]
    assert broken("smolagents_messages", set_text(3, "Calling tools:\n[{'id': 'x'}]")) == [
        ("transcript[3].content (call 1)", "a tool call needs a function with a name")
    ]
    assert broken("smolagents_messages", set_text(4, "Result: 12")) == [
        (
            "transcript[4].content",
            "must be an 'Observation:\\n' or an 'Error:\\n', as smolagents writes a tool-response",
        )
    ]
    assert broken("smolagents_messages", lambda run: run[2].update(role="robot")) == [
        (
            "transcript[2].role",
            "unknown role 'robot'; roles here are system, user, assistant, tool-call, tool-response",
        )
    ]

    def bad_step(run: list[Any]) -> None:
        run[1]["error"] = "boom"
        run[1]["tool_calls"][0]["function"] = None
        run[2] = {"step": 1, "observations": "x"}

    assert broken("smolagents_steps", bad_step) == [
        ("transcript[1].tool_calls[0].function", "a tool call needs a function with a name"),
        ("transcript[1].error", "must be an error as smolagents writes it: {type, message}"),
        (
            "transcript[2]",
            "must be a smolagents memory step: TaskStep (task, task_images); ActionStep "
            "(model_output_message, step_number); PlanningStep (model_output_message, plan)",
        ),
    ]
    assert broken(
        "smolagents_steps", lambda run: run.append(recorded("smolagents_messages")[3])
    ) == [
        (
            "transcript[6]",
            "role 'tool-call' is a message of write_memory_to_messages(), but transcript[0] is "
            "a step of get_full_steps(): a run is saved in one form",
        )
    ]
    chat = {"role": "tool", "tool_call_id": "call_1", "content": "x"}
    assert broken("smolagents_messages", lambda run: run.insert(4, chat)) == [
        (
            "transcript[4]",
            "role 'tool' is OpenAI chat, but transcript[0] is smolagents: a run is recorded in one shape",
        )
    ]


def test_a_broken_memory_file_is_refused_with_file_line_and_field(tmp_path: Path) -> None:
    run = recorded("smolagents_messages")
    run[3]["content"][0]["text"] = "Calling tools:\n{'id': 'call_1'}"
    path = tmp_path / "memory.json"
    text = json.dumps(run, indent=2)
    path.write_text(text, encoding="utf-8")
    line = text[: text.index("Calling tools:")].count("\n") + 1
    result = CliRunner().invoke(main, ["render", "task-completion", "--transcript", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {path}:{line - 5}: transcript[3].content: must be 'Calling tools:\\n' "
        "and a list of calls, as smolagents writes a tool-call"
    ]


def test_the_files_are_what_smolagents_writes(tmp_path: Path) -> None:
    """smolagents' own code, run again: each file is what it writes, but for when it ran."""
    python = integration_tool("smolagents", "bin", "python")
    run_tool([str(python), str(SCRIPT), str(tmp_path)], tmp_path)
    for name in NAMES:
        written = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
        assert without_keys(written, VOLATILE) == without_keys(recorded(name), VOLATILE), name
        assert read_transcript(written) == read_transcript(recorded(name))

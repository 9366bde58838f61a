"""OpenTelemetry GenAI traces as runs, on exports the real instrumentation wrote: the OpenAI
instrumentation (openai-v2) tracing an `openai` client against the scripted server
(tests/otel_export.py), in every form it records messages and both JSON encodings."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer, Reply, completion

from rubriclib.cli import main
from rubriclib.evals.datasets import Dataset
from rubriclib.item.transcript import TranscriptError, read_traces, read_transcript
from rubriclib.item.transcript.opentelemetry import traces
from rubriclib.judging.prompt.agent_run import cut_run

TESTS = Path(__file__).parents[1]
Export = Callable[..., Path]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Export]:
    """`export(form, encoding, name, side_call=False, one_run=False)`: the path of a real
    export (written once per module), its chat messages beside it."""
    folder = tmp_path_factory.mktemp("otel")
    written: dict[tuple[Any, ...], Path] = {}

    def write(
        form: str, encoding: str, name: str, side_call: bool = False, one_run: bool = False
    ) -> Path:
        key = (form, encoding, name, side_call, one_run)
        if key not in written:
            path = folder / f"{form}-{encoding}-{int(side_call)}{int(one_run)}-{name}"
            command = [sys.executable, str(TESTS / "otel_export.py"), form, encoding, str(path)]
            env = {"PATH": os.environ["PATH"]}  # no OTEL_* setting of the machine's leaks in
            flags = ["side-call"] * side_call + ["one-run"] * one_run
            subprocess.run(command + flags, check=True, env=env, timeout=120)
            written[key] = path
        return written[key]

    yield write


def documents(path: Path) -> list[tuple[str, Any]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return [("", json.loads(text))]
    return [(f"line {n}: ", json.loads(line)) for n, line in enumerate(text.splitlines(), 1)]


def chats(path: Path) -> dict[str, Any]:
    return json.loads(path.with_suffix(".chat.json").read_text(encoding="utf-8"))


FORMS = [(form, encoding) for form in ("events", "span", "details") for encoding in ("protobuf", "file")]  # fmt: skip


@pytest.mark.parametrize(("form", "encoding"), FORMS)
def test_each_trace_renders_byte_identical_to_the_run_in_chat_shape(
    export: Export, form: str, encoding: str
) -> None:
    path = export(form, encoding, "traces.jsonl")
    runs, problems = traces(documents(path))
    expected = chats(path)
    assert problems == [] and [run.problems for run in runs] == [[], []]
    assert {run.trace_id for run in runs} == set(expected)  # hex ids, whatever the encoding
    for run in runs:
        assert run.transcript is not None and run.transcript.shape == "opentelemetry"
        chat = read_transcript(expected[run.trace_id])
        assert run.transcript.messages == chat.messages
        assert cut_run(run.transcript, 2000).section == cut_run(chat, 2000).section
        assert run.metadata == {"model": "scripted", "service": "support-agent"}
    refund = next(
        run.transcript for run in runs if run.transcript and len(run.transcript.messages) > 2
    )
    roles = [message.role for message in refund.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    # the old events drop an assistant's text beside its tool calls in later requests: the
    # text is taken from the call that answered it
    assert refund.messages[2].text == "Let me look that up."
    assert [m.tool_calls[0].id for m in refund.messages if m.tool_calls] == ["call_0", "call_0"]
    assert refund.final_answer == "Refunded $12.50 to your card."


def test_an_export_file_is_a_dataset_of_a_row_per_trace(export: Export) -> None:
    path = export("span", "protobuf", "traces.json")
    assert json.loads(path.read_text())["resourceSpans"]  # one export, as written
    rows = list(Dataset(path=path).rows())
    expected = chats(path)
    assert [row.id for row in rows] == list(expected)
    first, second = rows[0].item, rows[1].item
    assert (first.input, first.output) == (
        "Please refund order A-17, the mug arrived broken.",
        "Refunded $12.50 to your card.",
    )
    assert (second.input, second.output) == ("What is 2 + 2?", "4")
    assert first.metadata == {"model": "scripted", "service": "support-agent"}
    assert first.transcript == read_traces(json.loads(path.read_text()))[0][1]
    assert rows[0].where == f"{path}: trace {rows[0].id}"


def test_a_file_exporters_batches_of_spans_and_events_are_one_dataset(export: Export) -> None:
    path = export("events", "file", "traces.jsonl")
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {key for line in lines for key in line} == {"resourceSpans", "resourceLogs"}
    assert len(lines) > 4  # a line per batch: a trace's spans and events sit on many lines
    rows = list(Dataset(path=path).rows())
    assert [row.item.output for row in rows] == ["Refunded $12.50 to your card.", "4"]
    assert Dataset(path=path).check() == ([], 2)


def test_a_trace_holding_another_conversation_names_the_call_that_differs(
    export: Export,
) -> None:
    path = export("events", "file", "side.jsonl", side_call=True)
    problems, rows = Dataset(path=path).check()
    assert rows == 2 and len(problems) == 1  # the other trace is a good row
    problem = problems[0]
    assert problem.source.startswith(f"{path}: trace ")
    assert problem.field == "line 1: resourceLogs[0].scopeLogs[0].logRecords[0].body"
    assert problem.message.startswith("is not message 1 of the run that the trace's last model")


def test_content_capture_off_says_how_to_turn_it_on(export: Export) -> None:
    path = export("off", "file", "traces.jsonl")
    problems, rows = Dataset(path=path).check()
    assert rows == 2 and len(problems) == 2  # one per trace, at its first call
    assert all("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in p.message for p in problems)
    assert all(p.field.endswith(".spans[0]") for p in problems)


def test_events_recorded_without_content_say_how_to_turn_it_on(export: Export) -> None:
    # the default conventions with capture off still write the events: roles, call ids and
    # tool names, no content and no arguments
    path = export("events-off", "file", "traces.jsonl")
    problems, rows = Dataset(path=path).check()
    assert rows == 2 and len(problems) == 2  # one per trace, at its first event
    assert all(p.message.endswith("_CONTENT=true)") for p in problems)
    assert all(p.field.endswith(".logRecords[0]") for p in problems)


def first_chat_span(export_: dict[str, Any]) -> dict[str, Any]:
    spans = export_["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return next(span for span in spans if span["name"].startswith("chat"))


def attribute(span: dict[str, Any], key: str) -> dict[str, Any]:
    return next(pair["value"] for pair in span["attributes"] if pair["key"] == key)


def broken(path: Path, change: Callable[[dict[str, Any]], None]) -> list[tuple[str, str]]:
    data = json.loads(path.read_text())
    change(data)
    with pytest.raises(TranscriptError) as error:
        read_traces(data)
    return error.value.problems


def test_a_broken_export_names_the_span_attribute_and_message(export: Export) -> None:
    path = export("span", "protobuf", "traces.json")
    at = "resourceSpans[0].scopeSpans[0].spans[0]"

    def cut(data: dict[str, Any]) -> None:
        value = attribute(first_chat_span(data), "gen_ai.input.messages")
        value["stringValue"] = value["stringValue"][:-9]

    assert broken(path, cut) == [
        (
            f"{at}.attributes[gen_ai.input.messages]",
            "is not JSON (a list of messages written as JSON text)",
        )  # fmt: skip
    ]

    def unknown_part(data: dict[str, Any]) -> None:
        value = attribute(first_chat_span(data), "gen_ai.input.messages")
        messages = json.loads(value["stringValue"])
        messages[1]["parts"].append({"type": "hologram"})
        value["stringValue"] = json.dumps(messages)

    ((where, why),) = broken(path, unknown_part)
    assert where == f"{at}.attributes[gen_ai.input.messages][1].parts[1]"
    assert why.startswith("unknown part 'hologram'; parts are text, reasoning, tool_call")

    def bad_id(data: dict[str, Any]) -> None:
        first_chat_span(data)["traceId"] = "not-an-id"

    assert (f"{at}.traceId", "must be 16 bytes as hex (or base64), not 'not-an-id'") in broken(
        path, bad_id
    )


def test_what_is_not_an_export_says_so() -> None:
    with pytest.raises(TranscriptError) as error:
        read_traces({"spans": []})
    assert error.value.problems == [("export", "an OTLP JSON export has resourceSpans or resourceLogs")]  # fmt: skip


def test_an_export_without_model_calls_is_no_dataset(export: Export, tmp_path: Path) -> None:
    data = json.loads(export("span", "protobuf", "traces.json").read_text())
    for scope in data["resourceSpans"][0]["scopeSpans"]:
        scope["spans"] = [span for span in scope["spans"] if not span["name"].startswith("chat")]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(data))
    problems, _ = Dataset(path=path).check()
    assert [(p.field, p.message.split(" (")[0]) for p in problems] == [
        ("dataset", "holds no model call")
    ]


def test_the_docs_export_and_judge_examples_run_as_written(
    endpoint: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import snippet

    settings = [line.removeprefix("$ export ") for line in snippet("otel-env").splitlines()]
    env = dict(setting.split("=", 1) for setting in settings)
    env |= {"PATH": os.environ["PATH"], "OPENAI_BASE_URL": endpoint.url, "OPENAI_API_KEY": "k"}
    endpoint.script(Reply(body=completion(content="Order A-17 shipped on Monday.")))
    (tmp_path / "export.py").write_text(snippet("otel-export"))
    subprocess.run([sys.executable, "export.py"], cwd=tmp_path, env=env, check=True, timeout=120)
    assert endpoint.requests[0]["messages"] == [{"role": "user", "content": "Where is order A-17?"}]

    monkeypatch.chdir(tmp_path)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(snippet("otel-judge"), {})  # noqa: S102 - the docs' own example, run as written
    (trace_id, verdict) = printed.getvalue().split()
    assert len(trace_id) == 32 and verdict in ("pass", "fail")  # the keyword judge decides
    judged = endpoint.requests[-1]["messages"][1]["content"]
    assert "[M1] user\nWhere is order A-17?" in judged
    assert "[M2] assistant\nOrder A-17 shipped on Monday." in judged


def test_transcript_reads_an_export_of_one_trace_and_refuses_one_of_several(
    export: Export, tmp_path: Path
) -> None:
    one = export("span", "protobuf", "one.json", one_run=True)
    (trace_id, messages), *others = chats(one).items()
    assert others == [] and len(json.loads(one.read_text())["resourceSpans"]) == 1
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(messages), encoding="utf-8")
    shown = [
        CliRunner().invoke(main, ["render", "task-completion", "--transcript", str(path)])
        for path in (one, chat)
    ]
    assert [result.exit_code for result in shown] == [0, 0], shown[0].output
    assert "[M4] tool result for get_order" in shown[0].stdout
    assert shown[0].stdout == shown[1].stdout  # the trace is shown as the run it recorded
    assert read_transcript(json.loads(one.read_text())).shape == "opentelemetry"

    several = export("span", "protobuf", "traces.json")
    refused = CliRunner().invoke(main, ["render", "task-completion", "--transcript", str(several)])
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert refused.stderr.splitlines() == [
        f"rubriclib: error: {several}:1: transcript: is an OpenTelemetry export of 2 traces, "
        "and a run is one trace: give the export as an eval's dataset (a row per trace), or "
        "read its runs with read_traces"
    ]
    calls = json.loads(several.read_text())
    for scope in calls["resourceSpans"][0]["scopeSpans"]:
        scope["spans"] = [span for span in scope["spans"] if not span["name"].startswith("chat")]
    with pytest.raises(TranscriptError) as none:
        read_transcript(calls)
    assert none.value.problems == [
        ("transcript", "is an OpenTelemetry export with no model call: it records no run to judge")
    ]

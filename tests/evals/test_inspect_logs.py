"""inspect_ai logs as eval datasets, on logs the real, pinned inspect_ai wrote (its own venv,
`make integrations`) with its mockllm model scripted as a support agent that uses tools: both
formats (`.eval`, a Zstandard zip; `.json`), more than one epoch, a sample that errored, and a
log inspect wrote without samples."""

from __future__ import annotations

import json
import shutil
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import integration_tool, run_tool
from judge_server import JudgeServer

from rubriclib.cli import main
from rubriclib.errors import EvalError
from rubriclib.evals.datasets import Dataset, Row
from rubriclib.item.transcript import Message, ToolCall

AGENT_RUBRIC = Path(__file__).parent.parent / "data" / "agent-run.md"

# Run with the inspect venv's python: argv[1] the folder to write the logs in; prints each
# log's path by name, as JSON.
WRITE_LOGS = """\
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (ChatCompletionChoice, ChatMessageAssistant, ChatMessageSystem,
    ChatMessageUser, ContentImage, ContentReasoning, ContentText, ModelOutput, ModelUsage,
    get_model)
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, system_message, use_tools
from inspect_ai.tool import ToolCall, ToolError, tool

@tool
def lookup_order():
    async def execute(order_id: str) -> str:
        '''Look up an order.

        Args:
            order_id: The order's id.
        '''
        return json.dumps({"order_id": order_id, "status": "delivered late", "total": 12.5})
    return execute

@tool
def refund():
    async def execute(order_id: str, amount: float) -> str:
        '''Refund part of an order.

        Args:
            order_id: The order's id.
            amount: How much to refund.
        '''
        if amount > 10:
            raise ToolError(f"refunds over 10.00 need approval; asked {amount:.2f}")
        return f"refunded {amount:.2f} on {order_id}"
    return execute

def reply(messages, tools, tool_choice, config):
    '''The scripted agent: looks the order up, thinks, refunds too much, retries, answers.'''
    user = next(message.text for message in messages if message.role == "user")
    if "explode" in user:
        raise RuntimeError("the model fell over")
    order = "A-17" if "A-17" in user else "A-18"
    step = sum(message.role == "assistant" for message in messages)
    if step == 0:
        output = ModelOutput.for_tool_call("mockllm/model", "lookup_order", {"order_id": order},
                                           tool_call_id="call-look", content="")
    elif step == 1:
        message = ChatMessageAssistant(
            content=[ContentReasoning(reasoning="Late: refund the 12.50 in full."),
                     ContentText(text="Refunding.")],
            tool_calls=[ToolCall(id="call-refund", function="refund",
                                 arguments={"order_id": order, "amount": 12.5})],
            model="mockllm/model", source="generate")
        output = ModelOutput(model="mockllm/model",
                             choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])
    elif step == 2:
        output = ModelOutput.for_tool_call(
            "mockllm/model", "refund", {"order_id": order, "amount": 10},
            tool_call_id="call-refund-2", content="Over the limit: refunding 10.00.")
    else:
        verdict = "verdict:pass" if order == "A-17" else "verdict:fail"
        output = ModelOutput.from_content("mockllm/model", f"Refunded 10.00 on {order}. {verdict}")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken
    return output

photo = ChatMessageUser(content=[ContentText(text="Refund A-17: the cup came broken."),
                                 ContentImage(image="data:image/png;base64,iVBORw0KGgo=")])
task = Task(dataset=[
    Sample(id="refund", input="Refund order A-17, it came late.", target="Refunded 10.00",
           metadata={"customer": "ann", "tier": 2}),
    Sample(id=7, input=[ChatMessageSystem(content="Be brief."), ChatMessageUser(content="Refund A-18.")],
           target=["Refunded", "10.00"]),
    Sample(id="boom", input="explode, please"),
    Sample(id="photo", input=[photo], metadata={"context": ["Refunds up to 10.00 need no approval."]}),
], solver=[system_message("You are a support agent."), use_tools(lookup_order(), refund()),
           generate()], scorer=includes(), name="support")
model = get_model("mockllm/model", custom_outputs=reply)
runs = {
    "eval": {"log_format": "eval"},
    "json": {"log_format": "json"},
    "epochs": {"log_format": "eval", "epochs": 2},
    "no-samples-eval": {"log_format": "eval", "log_samples": False},
    "no-samples-json": {"log_format": "json", "log_samples": False},
}
logs = {}
for name, options in runs.items():
    [log] = eval(task, model=model, log_dir=f"{sys.argv[1]}/{name}", display="none",
                 fail_on_error=False, **options)
    logs[name] = log.location
print(json.dumps(logs))
"""


@dataclass
class Logs:
    paths: dict[str, Path]
    """Each log inspect wrote, by run name."""

    def rows(self, name: str) -> dict[str, Row]:
        return {row.id: row for row in Dataset(self.paths[name]).rows()}

    def json_sample(self, sample_id: Any) -> dict[str, Any]:
        """A sample as the `.json` log holds it."""
        samples = json.loads(self.paths["json"].read_text())["samples"]
        [sample] = [sample for sample in samples if sample["id"] == sample_id]
        return sample


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Logs:
    """The logs, written once by the real inspect_ai."""
    python = integration_tool("inspect", "bin", "python")
    work = tmp_path_factory.mktemp("inspect-logs")
    (work / "write_logs.py").write_text(WRITE_LOGS)
    done = run_tool([str(python), "write_logs.py", str(work / "logs")], work)
    paths = json.loads(done.stdout.strip().splitlines()[-1])
    return Logs({name: Path(path) for name, path in paths.items()})


def test_both_formats_are_read_into_the_same_rows(logs: Logs) -> None:
    assert logs.paths["eval"].suffix == ".eval"
    with zipfile.ZipFile(logs.paths["eval"]) as archive:  # what makes the reading non-trivial
        assert {info.compress_type for info in archive.infolist()} == {93}  # Zstandard
    rows, from_json = logs.rows("eval"), logs.rows("json")
    assert list(rows) == list(from_json) == ["7", "boom", "photo", "refund"]
    assert [row.item for row in rows.values()] == [row.item for row in from_json.values()]
    assert rows["refund"].where == f"{logs.paths['eval']}: samples/refund_epoch_1.json"
    assert from_json["refund"].where == f"{logs.paths['json']}: samples[3]"


def test_a_sample_is_a_row_of_its_run_input_target_completion_and_metadata(logs: Logs) -> None:
    item = logs.rows("eval")["refund"].item
    sample = logs.json_sample("refund")
    assert item.input == "Refund order A-17, it came late."
    assert item.reference == "Refunded 10.00"
    assert item.output == sample["output"]["completion"] == "Refunded 10.00 on A-17. verdict:pass"
    assert item.metadata == {
        "customer": "ann",
        "tier": 2,
        "inspect": {"epoch": 1, "scores": {"includes": "C"}},
    }
    run = item.transcript
    assert run is not None and run.shape == "inspect"
    assert len(run.messages) == len(sample["messages"]) == 9
    assert run.messages[4] == Message(
        role="assistant",
        text="Refunding.",
        thinking="Late: refund the 12.50 in full.",
        tool_calls=(
            ToolCall(
                id="call-refund", name="refund", arguments={"order_id": "A-17", "amount": 12.5}
            ),
        ),
    )
    assert run.messages[5] == Message(
        role="tool",
        text="(error) refunds over 10.00 need approval; asked 12.50",
        answers="call-refund",
        tool_name="refund",
        is_error=True,
    )
    calls = [call.name for message in run.messages for call in message.tool_calls]
    results = [message.tool_name for message in run.messages if message.role == "tool"]
    assert calls == results == ["lookup_order", "refund", "refund"]
    assert run.final_answer == item.output


def test_chat_input_a_list_target_an_integer_id_and_context_from_metadata(logs: Logs) -> None:
    rows = logs.rows("json")
    assert rows["7"].item.input == "system: Be brief.\nuser: Refund A-18."
    assert rows["7"].item.reference == "Refunded\n10.00"
    assert rows["7"].item.output == "Refunded 10.00 on A-18. verdict:fail"
    photo = rows["photo"].item
    # inspect keeps the image once in the sample's attachments; the row reads it from there
    assert "attachment://" in json.dumps(logs.json_sample("photo")["input"])
    assert photo.input == "user: Refund A-17: the cup came broken.\n(image not shown)"
    assert photo.context == "[1] Refunds up to 10.00 need no approval."
    assert "context" not in photo.metadata


def test_a_sample_that_errored_is_a_row_with_its_error_and_no_output(logs: Logs) -> None:
    item = logs.rows("eval")["boom"].item
    assert item.output == ""
    assert item.metadata == {
        "inspect": {"epoch": 1, "error": "RuntimeError('the model fell over')"}
    }
    assert item.transcript is not None
    assert [message.role for message in item.transcript.messages] == ["system", "user"]


def test_rows_of_a_log_of_several_epochs_carry_the_epoch(logs: Logs) -> None:
    rows = logs.rows("epochs")
    assert list(rows) == [
        f"{id_}_epoch_{epoch}" for epoch in (1, 2) for id_ in (7, "boom", "photo", "refund")
    ]
    assert rows["refund_epoch_2"].item.metadata["inspect"]["epoch"] == 2


@pytest.mark.parametrize("name", ["no-samples-eval", "no-samples-json"])
def test_a_log_without_samples_says_so(logs: Logs, name: str) -> None:
    with pytest.raises(EvalError) as raised:
        list(Dataset(logs.paths[name]).rows())
    assert str(raised.value) == (
        f"{logs.paths[name]}: samples: the log has none (status 'success'): inspect writes a log "
        "without samples when a run stops before any finishes or runs with --no-log-samples"
    )


def test_a_corrupt_log_is_a_problem_naming_the_file_or_the_sample(
    logs: Logs, tmp_path: Path
) -> None:
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(logs.paths["eval"].read_bytes()[:2000])
    with pytest.raises(EvalError, match=r"truncated\.eval: dataset: is not an inspect \.eval log"):
        list(Dataset(truncated).rows())
    damaged = tmp_path / "damaged.eval"
    data = bytearray(logs.paths["eval"].read_bytes())
    with zipfile.ZipFile(logs.paths["eval"]) as archive:
        info = archive.getinfo("samples/photo_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + 40 : start + 80] = bytes(40)  # zeros over the compressed sample
    damaged.write_bytes(bytes(data))
    problems, rows = Dataset(damaged).check()
    assert rows == 4  # the other samples are still read
    [problem] = problems
    assert (problem.source, problem.field) == (f"{damaged}: samples/photo_epoch_1.json", "sample")
    assert problem.message.startswith("cannot be read: ")


@pytest.mark.skipif(sys.version_info >= (3, 14), reason="Python reads Zstandard zips itself")
def test_without_zstandard_an_eval_log_says_what_to_install(
    logs: Logs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(EvalError, match=r"pip install 'rubriclib\[inspect-logs\]'"):
        list(Dataset(logs.paths["eval"]).rows())


def _broken_log(logs: Logs, tmp_path: Path) -> Path:
    """The real `.json` log with one sample broken: a role inspect has not, a tool result whose
    call is gone, metadata that is no mapping."""
    log = json.loads(logs.paths["json"].read_text())
    messages = log["samples"][3]["messages"]
    messages[1]["role"] = "robot"
    messages[3]["tool_call_id"] = "call-gone"
    log["samples"][3]["metadata"] = ["not", "a", "mapping"]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(log))
    return path


def test_a_sample_whose_run_cannot_be_read_names_the_sample_and_the_message(
    logs: Logs, tmp_path: Path
) -> None:
    path = _broken_log(logs, tmp_path)
    problems, rows = Dataset(path).check()
    assert rows == 4
    assert [(p.source, p.field, p.message) for p in problems] == [
        (
            f"{path}: samples[3]",
            "messages[1].role",
            "unknown role 'robot'; roles are system, user, assistant, tool",
        ),
        (
            f"{path}: samples[3]",
            "messages[3]",
            "answers call 'call-gone', which is not earlier in the run",
        ),
        (f"{path}: samples[3]", "metadata", "must be a mapping"),
    ]


def _eval_file(write_file: Callable[..., Path], log: Path) -> Path:
    """An eval file whose dataset is a copy of `log` beside it, judged by the agent-run rubric."""
    path = write_file(
        "eval.yaml",
        f"name: support-runs\ndataset: run{log.suffix}\ngraders: [{{name: run, rubric: agent-run}}]\n",
    )
    shutil.copy(log, path.parent / f"run{log.suffix}")
    return path


def test_rubriclib_eval_judges_an_inspect_log(
    logs: Logs,
    library: Path,
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    tmp_path: Path,
) -> None:
    (library / "agent-run.md").write_text(AGENT_RUBRIC.read_text())
    path = _eval_file(write_file, logs.paths["eval"])
    plan = CliRunner().invoke(main, ["eval", str(path), "--dry-run"])
    assert plan.exit_code == 0, plan.output
    assert "4 row(s) x 1 grader(s) = 4 judgment(s)" in plan.output
    assert endpoint.requests == []
    out = tmp_path / "results.jsonl"
    result = CliRunner().invoke(main, ["eval", str(path), "--out", str(out)])
    lines = {line["row"]: line for line in map(json.loads, out.read_text().splitlines())}
    verdicts = {row: line["verdict"] for row, line in lines.items()}
    assert verdicts == {"7": "fail", "boom": "fail", "photo": "pass", "refund": "pass"}
    assert result.exit_code == 0, result.output
    assert lines["refund"]["metadata"]["inspect"]["scores"] == {"includes": "C"}
    [user] = [
        request["messages"][1]["content"]
        for request in endpoint.requests
        if "Refund order A-17, it came late." in request["messages"][1]["content"]
    ]
    assert 'tool call lookup_order (call-look): {"order_id": "A-17"}' in user
    assert "tool error for refund (call-refund, " in user
    assert "(error) refunds over 10.00 need approval; asked 12.50" in user
    assert '"status": "delivered late"' in user


def test_a_broken_inspect_log_stops_the_eval_before_any_request(
    logs: Logs,
    library: Path,
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    tmp_path: Path,
) -> None:
    (library / "agent-run.md").write_text(AGENT_RUBRIC.read_text())
    path = _eval_file(write_file, _broken_log(logs, tmp_path))
    result = CliRunner().invoke(main, ["eval", str(path)])
    assert result.exit_code == 2 and endpoint.requests == []
    assert "samples[3]: messages[1].role: unknown role 'robot'" in result.stderr
    assert "Traceback" not in result.output

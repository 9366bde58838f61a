"""rubric_scorer under the real, pinned inspect_ai (its own venv, `make integrations`): one
subprocess runs every eval against the scripted judge; the tests read inspect's JSON logs."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    KEYWORD_RUBRIC,
    SCORE_RUBRIC,
    SECRET_KEY,
    integration_tool,
    keyword_responder,
    run_tool,
    snippet,
)
from judge_server import JudgeServer, Reply, error_reply, tool_reply

from rubriclib.errors import RubricError
from rubriclib.integrations.inspect import rubric_scorer
from rubriclib.item.transcript import Message, ToolCall, Transcript
from rubriclib.judging.judge import Judge
from rubriclib.judging.prompt.agent_run import cut_run
from rubriclib.rubrics.registry import load_rubric

DOCS_TASK = snippet("inspect")
AGENT_RUBRIC = Path(__file__).parent.parent / "data" / "agent-run.md"
"""A pass-fail rubric that `requires: [transcript]` (the keyword judge answers it)."""
"""The docs' task file, run here as written."""

# Run with the inspect venv's python: argv[1] the log folder, argv[2] the docs' task file.
RUN_EVALS = """\
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (ChatCompletionChoice, ChatMessageAssistant, ChatMessageSystem,
    ChatMessageTool, ChatMessageUser, ContentReasoning, ContentText, ModelOutput, ModelUsage, get_model)
from inspect_ai.solver import generate, solver, system_message, use_tools
from inspect_ai.tool import ToolCall, ToolError, tool
from rubriclib import Judge
from rubriclib.integrations.inspect import rubric_scorer

OUTPUTS = {
    "Q-pass": "verdict:pass", "Q-ok": "verdict:pass, ok", "Q-fail": "verdict:fail", "Q-text": "verdict:text",
    "Q-500": "verdict:500", "Q-five": "score:5", "Q-two": "score:2",
    "When did Apollo 11 land on the Moon?": "On 20 July 1969. verdict:pass",
}

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
    async def execute(order_id: str, amount: float, reason: str) -> str:
        '''Refund part of an order.

        Args:
            order_id: The order's id.
            amount: How much to refund.
            reason: Why.
        '''
        if amount > 10:
            raise ToolError(f"refunds over 10.00 need approval; asked {amount:.2f}")
        return f"refunded {amount:.2f} on {order_id}"
    return execute

def agent_turn(step):
    '''The scripted agent: a call, two calls at once after thinking (one fails), a retry, done.'''
    if step == 0:
        return ModelOutput.for_tool_call("mockllm/model", "lookup_order", {"order_id": "A-17"},
                                         tool_call_id="call-look", content="")
    if step == 1:
        message = ChatMessageAssistant(
            content=[ContentReasoning(reasoning="Late delivery: refund the 12.50 in full."),
                     ContentText(text="I'll refund it and check the other order.")],
            tool_calls=[
                ToolCall(id="call-refund", function="refund",
                         arguments={"order_id": "A-17", "amount": 12.5, "reason": "arrived late"}),
                ToolCall(id="call-look-2", function="lookup_order", arguments={"order_id": "B-2"}),
            ], model="mockllm/model", source="generate")
        return ModelOutput(model="mockllm/model",
                           choices=[ChatCompletionChoice(message=message, stop_reason="tool_calls")])
    if step == 2:
        return ModelOutput.for_tool_call(
            "mockllm/model", "refund", {"order_id": "A-17", "amount": 10, "reason": "arrived late"},
            tool_call_id="call-refund-2", content="Over the limit: refunding 10.00 instead.")
    return ModelOutput.from_content("mockllm/model", "Refunded 10.00 on A-17. verdict:pass")

def reply(messages, tools, tool_choice, config):
    user = next(message.text for message in messages if message.role == "user")
    if user.startswith("Agent:"):
        output = agent_turn(sum(message.role == "assistant" for message in messages))
    else:
        output = ModelOutput.from_content("mockllm/model", OUTPUTS[messages[-1].text])
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken
    return output

@solver
def orphan_result():
    '''Adds a tool result whose call is not in the run (as a solver trimming history might).'''
    async def solve(state, generate):
        state.messages.append(ChatMessageTool(content="delivered", tool_call_id="call-gone",
                                              function="lookup_order"))
        return state
    return solve

logs, model = sys.argv[1], get_model("mockllm/model", custom_outputs=reply)
no_retries = Judge(max_retries=0, timeout=5)
chat = [ChatMessageSystem(content="Be brief."), ChatMessageUser(content="Q-fail")]
runs = {
    "keywords": (Task(dataset=[
        Sample(id="pass", input="Q-pass", target="T-pass", metadata={"context": "C-pass"}),
        Sample(id="fail", input=chat, target=["T-1", "T-2"], metadata={"context": ["C-a", "C-b"]}),
    ], solver=generate(), scorer=rubric_scorer("keywords@^2")), {}),
    "tolerated": (Task(dataset=[Sample(id=i, input=f"Q-{i}") for i in ("ok", "text", "500")],
        solver=generate(), scorer=rubric_scorer("keywords", judge=no_retries)),
        {"fail_on_error": False}),
    "stopped": (Task(dataset=[Sample(id="500", input="Q-500")], solver=generate(),
        scorer=rubric_scorer("keywords", judge=no_retries)), {}),
    "scored": (Task(dataset=[Sample(id="five", input="Q-five"), Sample(id="two", input="Q-two")],
        solver=generate(), scorer=rubric_scorer("scored")), {}),
    "readme": (sys.argv[2], {}),
    "agent": (Task(dataset=[Sample(id="refund", input="Agent: refund order A-17, it came late.")],
        solver=[system_message("You are a support agent."), use_tools(lookup_order(), refund()),
                generate()],
        scorer=rubric_scorer("agent-run", judge=no_retries)), {}),
    "orphan": (Task(dataset=[Sample(id="orphan", input="Q-pass")],
        solver=[generate(), orphan_result()], scorer=rubric_scorer("agent-run", judge=no_retries)),
        {"fail_on_error": False}),
}
locations = {}
for name, (task, options) in runs.items():
    [log] = eval(task, model=model, log_dir=f"{logs}/{name}", log_format="json",
                 display="none", **options)
    locations[name] = log.location
print(json.dumps(locations))
"""


def _keyword_or_score(body: dict[str, Any]) -> Reply:
    """The keyword judge, plus `verdict:500` (an HTTP 500) and `score:N` (a 1-5 score)."""
    user = body["messages"][1]["content"]
    if "verdict:500" in user:
        return error_reply(500, "the judge is down")
    for score in range(1, 6):
        if f"score:{score}" in user:
            return tool_reply("set_grade_score", {"reason": f"scripted {score}", "score": score})
    return keyword_responder()(body)


@dataclass
class Run:
    logs: dict[str, dict[str, Any]]
    """Each eval's JSON log, by run name."""
    work: Path
    """The run's folder: scripts, library, logs and inspect's traces (XDG_DATA_HOME)."""
    requests: list[dict[str, Any]]
    """Every request body the judge received."""
    library: Path

    def samples(self, name: str) -> dict[str, dict[str, Any]]:
        return {sample["id"]: sample for sample in self.logs[name]["samples"]}

    def users(self, text: str) -> list[str]:
        """The user messages of the judge requests that hold `text`."""
        users = [request["messages"][1]["content"] for request in self.requests]
        return [user for user in users if text in user]

    def judged(self, text: str) -> list[str]:
        """The user messages of the judge requests whose candidate output begins with `text`."""
        users = [request["messages"][1]["content"] for request in self.requests]
        return [user for user in users if f"## Candidate output [output]\n\n```\n{text}" in user]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Every eval, run once by the real inspect_ai against the scripted judge."""
    python = integration_tool("inspect", "bin", "python")
    work = tmp_path_factory.mktemp("inspect")
    library = work / "library"
    library.mkdir()
    (library / "keywords.md").write_text(KEYWORD_RUBRIC)
    (library / "scored.md").write_text(SCORE_RUBRIC)
    (library / "agent-run.md").write_text(AGENT_RUBRIC.read_text())
    (work / "run_evals.py").write_text(RUN_EVALS)
    (work / "grounded.py").write_text(DOCS_TASK)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RUBRICLIB_"))}
    with JudgeServer() as server:
        server.responder = _keyword_or_score
        env.update(
            OPENAI_BASE_URL=server.url,
            OPENAI_API_KEY=SECRET_KEY,
            RUBRICLIB_MODEL="judge-model",
            RUBRICLIB_PATH=str(library),
            RUBRICLIB_CACHE_DIR=str(work / "cache"),
            XDG_DATA_HOME=str(work / "xdg"),
        )
        done = run_tool([str(python), "run_evals.py", str(work / "logs"), "grounded.py"], work, env)
        # the scorer awaits agrade and never closes the judge: nothing may be left open
        assert "Unclosed" not in done.stdout + done.stderr, done.stderr[-4000:]
        locations = json.loads(done.stdout.strip().splitlines()[-1])
        logs = {name: json.loads(Path(path).read_text()) for name, path in locations.items()}
        yield Run(logs, work, server.requests, library)


def test_pass_fail_scores_carry_the_reason_and_rubric_identity(run: Run) -> None:
    log = run.logs["keywords"]
    assert log["status"] == "success"
    samples = run.samples("keywords")
    scores = {id_: sample["scores"]["rubric_scorer"] for id_, sample in samples.items()}
    assert {id_: score["value"] for id_, score in scores.items()} == {"pass": "C", "fail": "I"}
    assert scores["pass"]["explanation"] == "scripted set_grade_pass"
    assert scores["fail"]["explanation"] == "scripted set_grade_fail"
    assert scores["pass"]["answer"] == "verdict:pass"
    rubric = load_rubric(str(run.library / "keywords.md"))
    for score in scores.values():
        identity = score["metadata"]["rubric"]
        assert identity["name"] == "keywords"
        assert identity["version"] == "2.1.0"
        assert identity["digest"] == rubric.digest
        assert identity["scale"] == "pass-fail"
        assert score["metadata"]["judge"]["model"] == "judge-model"
    [result] = log["results"]["scores"]
    assert result["metrics"]["accuracy"]["value"] == 0.5
    assert result["params"]["rubric"] == "keywords@^2"


def test_the_judge_sees_input_target_and_context(run: Run) -> None:
    [passed] = run.judged("verdict:pass\n```")
    assert "## Task input [input]\n\n```\nQ-pass\n```" in passed
    assert "## Source context [context]\n\n```\nC-pass\n```" in passed
    assert "## Reference answer [reference]\n\n```\nT-pass\n```" in passed
    [failed] = run.judged("verdict:fail")
    assert "## Task input [input]\n\n```\nsystem: Be brief.\nuser: Q-fail\n```" in failed
    assert "## Agent run" not in passed + failed  # a rubric that does not require a run
    assert "## Source context [context]\n\n```\n[1] C-a\n\n[2] C-b\n```" in failed
    assert "## Reference answer [reference]\n\n```\nT-1\nT-2\n```" in failed


def test_a_judge_error_is_a_sample_error_never_a_score(run: Run) -> None:
    samples = run.samples("tolerated")
    assert samples["ok"]["scores"]["rubric_scorer"]["value"] == "C"
    for id_, cause in (("text", "no valid verdict"), ("500", "HTTP 500")):
        assert samples[id_]["error"] is not None
        assert "rubriclib keywords@2.1.0" in samples[id_]["error"]["message"]
        assert cause in samples[id_]["error"]["message"]
        assert "rubric_scorer" not in (samples[id_].get("scores") or {})
    [result] = run.logs["tolerated"]["results"]["scores"]
    assert result["scored_samples"] == 1  # the errors are in no metric
    # With inspect's default fail_on_error, a judge error stops the eval.
    stopped = run.logs["stopped"]
    assert stopped["status"] == "error"
    assert "HTTP 500" in stopped["error"]["message"]
    assert not stopped.get("results")


def test_a_one_to_five_rubric_scores_its_level_and_reports_the_mean(run: Run) -> None:
    samples = run.samples("scored")
    scores = {id_: sample["scores"]["rubric_scorer"] for id_, sample in samples.items()}
    assert {id_: score["value"] for id_, score in scores.items()} == {"five": 5, "two": 2}
    assert scores["five"]["metadata"]["verdict"] == "pass"
    assert scores["two"]["metadata"]["verdict"] == "fail"
    assert scores["two"]["metadata"]["raw_score"] == 2
    assert scores["two"]["metadata"]["rubric"]["scale"] == "1-5"
    [result] = run.logs["scored"]["results"]["scores"]
    assert result["metrics"]["mean"]["value"] == 3.5
    assert "accuracy" not in result["metrics"]


def test_the_docs_task_runs_as_written(run: Run) -> None:
    log = run.logs["readme"]
    assert log["status"] == "success"
    [sample] = log["samples"]
    score = sample["scores"]["rubric_scorer"]
    assert score["value"] == "C"
    assert score["metadata"]["rubric"]["name"] == "groundedness"
    assert score["metadata"]["rubric"]["source"] == "builtin:groundedness"
    [judged] = run.judged("On 20 July 1969.")
    assert "Apollo 11 landed on the Moon on 20 July 1969." in judged


def _text(content: str | list[dict[str, Any]]) -> str:
    """A logged message's content as text (its text parts)."""
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def test_a_transcript_rubric_is_given_the_run_with_every_tool_call_and_result(run: Run) -> None:
    log = run.logs["agent"]
    assert log["status"] == "success", log.get("error")
    [sample] = log["samples"]
    score = sample["scores"]["rubric_scorer"]
    assert score["value"] == "C"
    assert score["metadata"]["transcript"]["shape"] == "inspect"
    messages = sample["messages"]
    assert score["metadata"]["transcript"]["messages"] == len(messages) == 10
    [user] = run.users("Agent: refund order A-17")
    calls = [call for message in messages for call in message.get("tool_calls") or ()]
    results = [message for message in messages if message["role"] == "tool"]
    assert len(calls) == len(results) == 4  # the run inspect logged: 4 calls, 4 results
    made_in = {}
    for index, message in enumerate(messages):
        assert f"[M{index + 1}] " in user
        for call in message.get("tool_calls") or ():
            made_in[call["id"]] = index + 1
            arguments = json.dumps(call["arguments"], ensure_ascii=False)
            assert f"tool call {call['function']} ({call['id']}): {arguments}" in user
        if message["role"] == "tool":
            label = "tool error" if message.get("error") else "tool result"
            call_id = message["tool_call_id"]
            head = f"[M{index + 1}] {label} for {message['function']} ({call_id}, "
            assert f"{head}answers the call in M{made_in[call_id]})" in user
            assert _text(message["content"]) in user
            if message.get("error"):
                assert f"(error) {message['error']['message']}" in user
    assert (
        "tool error for refund (call-refund, answers the call in M5)\n(error) refunds over 10.00 "
        in user
    )
    assert '"status": "delivered late"' in user  # a result's text, as the tool returned it
    assert "(thinking)\nLate delivery: refund the 12.50 in full.\n(end of thinking)" in user
    assert (
        "## Candidate output [output]\n\nThe agent's final answer: block M10, the run's last block."
        in user
    )
    assert "## Task input [input]\n\n```\nAgent: refund order A-17, it came late.\n```" in user


def test_a_tool_result_without_its_call_is_a_sample_error_never_a_score(run: Run) -> None:
    [sample] = run.logs["orphan"]["samples"]
    assert "rubric_scorer" not in (sample.get("scores") or {})
    error = sample["error"]["message"]
    assert "rubriclib agent-run@1.0.0: not judged: the sample's run cannot be read" in error
    assert "state.messages[2]: answers call 'call-gone', which is not earlier in the run" in error
    assert not run.users("call-gone")  # refused before any request


# Run with the inspect venv's python: prints each run read by inspect_transcript, as JSON.
READ_MESSAGES = """\
import json
import logging
from inspect_ai.model import (ChatMessageAssistant, ChatMessageSystem, ChatMessageTool,
    ChatMessageUser, ContentAudio, ContentData, ContentDocument, ContentImage, ContentReasoning,
    ContentText, ContentToolUse, UrlCitation)
from inspect_ai.tool import ToolCall, ToolCallError
from rubriclib.integrations.inspect import inspect_transcript
from rubriclib.item.transcript import TranscriptError

search = ToolCall(id="c1", function="search", arguments={"q": "Ünïcode"})
broken = ToolCall(id="c2", function="search", arguments={},
                  parse_error="Error parsing the following tool call arguments: {q: ")
runs = {
    "whole": [
        ChatMessageSystem(content="Be careful."),
        ChatMessageUser(content=[ContentText(text="What is this?"),
                                 ContentImage(image="data:image/png;base64,iVBORw0KGgo="),
                                 ContentImage(image="https://example.com/cat.png"),
                                 ContentAudio(audio="data:audio/wav;base64,UklGRg==", format="wav"),
                                 ContentDocument(document="/tmp/terms.pdf")]),
        ChatMessageAssistant(content=[ContentReasoning(reasoning="Look it up."),
                                      ContentReasoning(reasoning="ZW5jcnlwdGVk", redacted=True,
                                                       summary="Planned a search."),
                                      ContentText(text="Searching.")],
                             tool_calls=[search, broken]),
        ChatMessageTool(content=[ContentText(text="a cat")], tool_call_id="c1", function="search"),
        ChatMessageTool(content="", tool_call_id="c2", function="search",
                        error=ToolCallError("parsing", "arguments are not JSON")),
        ChatMessageUser(content=[ContentImage(image="data:image/png;base64,AA==")],
                        tool_call_id=["c1"]),
        ChatMessageAssistant(content=[
            ContentToolUse(tool_type="web_search", id="ws1", name="web_search",
                           arguments='{"query": "cats"}', result="3 pages", context=None),
            ContentToolUse(tool_type="mcp_call", id="mcp1", name="fetch", context="docs-server",
                           arguments="not json", result="", error="server down"),
            ContentData(data={"opaque": 1}),
            ContentText(text="It is a cat.", citations=[
                UrlCitation(url="https://example.com/cats", cited_text="cats purr")]),
            ContentText(text="I won't say more.", refusal=True),
        ]),
    ],
    "orphan": [ChatMessageUser(content="Hi"),
               ChatMessageTool(content="x", tool_call_id="c9", function="search")],
    "misnamed": [ChatMessageAssistant(content="", tool_calls=[search]),
                 ChatMessageTool(content="x", tool_call_id="c1", function="lookup")],
    "no-call-id": [ChatMessageTool(content="x", function="search")],
    "empty": [],
}
class Kept(logging.Handler):
    def emit(self, record):
        read[name].setdefault("warnings", []).append(record.getMessage())


logging.getLogger("rubriclib").addHandler(Kept())
read = {}
for name, messages in runs.items():
    read[name] = {}
    try:
        read[name]["transcript"] = inspect_transcript(messages).model_dump(mode="json")
    except TranscriptError as error:
        read[name]["problems"] = [list(problem) for problem in error.problems]
print(json.dumps(read))
"""


@pytest.fixture(scope="module")
def read_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Hand-built inspect messages, read by `inspect_transcript` in inspect's own venv."""
    python = integration_tool("inspect", "bin", "python")
    script = tmp_path_factory.mktemp("inspect-read") / "read_messages.py"
    script.write_text(READ_MESSAGES)
    done = subprocess.run(
        [str(python), str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_reader_keeps_reasoning_media_tool_errors_and_provider_tools(
    read_runs: dict[str, Any],
) -> None:
    run = Transcript.model_validate(read_runs["whole"]["transcript"])
    assert run.shape == "inspect"
    search = ToolCall(id="c1", name="search", arguments={"q": "Ünïcode"})
    broken = ToolCall(id="c2", name="search", arguments={})
    web = ToolCall(id="ws1", name="web_search", arguments={"query": "cats"})
    mcp = ToolCall(id="mcp1", name="fetch", arguments="not json")
    assert run.messages == (
        Message(role="system", text="Be careful."),
        Message(
            role="user",
            text="What is this?\n(image not shown)\n(image not shown: https://example.com/cat.png)"
            "\n(audio not shown)\n(document terms.pdf not shown)",
        ),
        Message(
            role="assistant",
            text="Searching.\n(arguments of tool call c2 not parsed) Error parsing the following "
            "tool call arguments: {q: ",
            thinking="Look it up.\n(reasoning redacted)\n(summary) Planned a search.",
            tool_calls=(search, broken),
        ),
        Message(role="tool", text="a cat", answers="c1", tool_name="search"),
        Message(
            role="tool",
            text="(error: parsing) arguments are not JSON",
            answers="c2",
            tool_name="search",
            is_error=True,
        ),
        Message(role="user", text="(content for tool call c1)\n(image not shown)"),
        Message(
            role="assistant",
            text="(provider data not shown)\nIt is a cat.\n(cited: https://example.com/cats)"
            "\n(refusal) I won't say more.",
            tool_calls=(web, mcp),
        ),
        Message(role="tool", text="(run by the provider: web_search)\n3 pages", answers="ws1"),
        Message(
            role="tool",
            text="(run by the provider: mcp_call on docs-server)\n(error) server down",
            answers="mcp1",
            is_error=True,
        ),
    )
    assert (
        run.final_answer
        == "(provider data not shown)\nIt is a cat.\n(cited: https://example.com/cats)\n(refusal) I won't say more."
    )
    cut = cut_run(run, 50_000)
    section = cut.section
    assert cut.cuts == []  # nothing cut
    assert "[M5] tool error for search (c2, answers the call in M3)\n(error: parsing)" in section
    assert "[M9] tool error for fetch (mcp1, answers the call in M7)" in section
    assert "base64" not in section  # media are named, never pasted


def test_the_reader_refuses_a_broken_run_and_warns_of_a_misnamed_result(
    read_runs: dict[str, Any],
) -> None:
    problems = {name: read.get("problems") for name, read in read_runs.items()}
    assert problems["orphan"] == [
        ["state.messages[1]", "answers call 'c9', which is not earlier in the run"]
    ]
    assert problems["misnamed"] is None and read_runs["misnamed"]["warnings"] == [
        "state.messages[1]: names tool 'lookup', but call 'c1' it answers (in state.messages[0]) "
        "is to 'search'"
    ]
    assert problems["no-call-id"] == [
        ["state.messages[0].tool_call_id", "a tool message needs the id of its call"]
    ]
    assert problems["empty"] == [
        ["state.messages", "is empty: the sample has no messages (an agent run)"]
    ]


def test_the_api_key_is_in_no_log_or_trace(run: Run) -> None:
    assert len(list((run.work / "logs").rglob("*.json"))) == len(run.logs)
    for path in (path for path in run.work.rglob("*") if path.is_file()):
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        assert SECRET_KEY.encode() not in data, path


def test_a_bad_reference_fails_when_the_scorer_is_made() -> None:
    judge = Judge(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(RubricError, match="no-such-rubric"):
        rubric_scorer("no-such-rubric", judge=judge)


def test_without_inspect_ai_the_scorer_says_what_to_install() -> None:
    with pytest.raises(ImportError, match=r"pip install 'rubriclib\[inspect\]'"):
        rubric_scorer("groundedness", judge=Judge(base_url="http://127.0.0.1:9/v1"))


def test_import_rubriclib_loads_no_integration() -> None:
    code = "import rubriclib, sys; rubriclib.Judge; print(sorted(m for m in sys.modules if 'inspect_ai' in m or 'integrations' in m))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"

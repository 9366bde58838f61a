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
    readme_snippet,
)
from judge_server import JudgeServer, Reply, error_reply, tool_reply

from rubriclib.errors import RubricError
from rubriclib.integrations.inspect import rubric_scorer
from rubriclib.judging.judge import Judge
from rubriclib.rubrics.registry import load_rubric

README_TASK = readme_snippet("inspect")
"""The README's task file, run here as written."""

# Run with the inspect venv's python: argv[1] the log folder, argv[2] the README task file.
RUN_EVALS = """\
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate
from rubriclib import Judge
from rubriclib.integrations.inspect import rubric_scorer

OUTPUTS = {
    "Q-pass": "verdict:pass", "Q-ok": "verdict:pass, ok", "Q-fail": "verdict:fail", "Q-text": "verdict:text",
    "Q-500": "verdict:500", "Q-five": "score:5", "Q-two": "score:2",
    "When did Apollo 11 land on the Moon?": "On 20 July 1969. verdict:pass",
}

def reply(messages, tools, tool_choice, config):
    output = ModelOutput.from_content("mockllm/model", OUTPUTS[messages[-1].text])
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken
    return output

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

    def judged(self, text: str) -> list[str]:
        """The user messages of the judge requests whose candidate output begins with `text`."""
        users = [request["messages"][1]["content"] for request in self.requests]
        return [user for user in users if f"## Candidate output\n\n```\n{text}" in user]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Every eval, run once by the real inspect_ai against the scripted judge."""
    python = integration_tool("inspect", "bin", "python")
    work = tmp_path_factory.mktemp("inspect")
    library = work / "library"
    library.mkdir()
    (library / "keywords.md").write_text(KEYWORD_RUBRIC)
    (library / "scored.md").write_text(SCORE_RUBRIC)
    (work / "run_evals.py").write_text(RUN_EVALS)
    (work / "grounded.py").write_text(README_TASK)
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
        done = subprocess.run(
            [str(python), "run_evals.py", str(work / "logs"), "grounded.py"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-4000:]
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
    assert "## Task input\n\n```\nQ-pass\n```" in passed
    assert "## Source context\n\n```\nC-pass\n```" in passed
    assert "## Reference answer\n\n```\nT-pass\n```" in passed
    [failed] = run.judged("verdict:fail")
    assert "## Task input\n\n```\nsystem: Be brief.\nuser: Q-fail\n```" in failed
    assert "## Source context\n\n```\n[1] C-a\n\n[2] C-b\n```" in failed
    assert "## Reference answer\n\n```\nT-1\nT-2\n```" in failed


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


def test_the_readme_task_runs_as_written(run: Run) -> None:
    log = run.logs["readme"]
    assert log["status"] == "success"
    [sample] = log["samples"]
    score = sample["scores"]["rubric_scorer"]
    assert score["value"] == "C"
    assert score["metadata"]["rubric"]["name"] == "groundedness"
    assert score["metadata"]["rubric"]["source"] == "builtin:groundedness"
    [judged] = run.judged("On 20 July 1969.")
    assert "Apollo 11 landed on the Moon on 20 July 1969." in judged


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

"""The letta grader under the real, pinned letta-evals (its own venv, `make integrations`): one
subprocess loads each suite through letta-evals' Runner (its custom-grader loader) and runs
every sample through its grading, error detection and reward, the agent's run replaced by a
recorded answer; the tests read the SampleResults. Then the `rubriclib integrations letta`
command and the pieces in-process."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
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

from rubriclib.cli import main
from rubriclib.integrations import letta
from rubriclib.integrations.letta import rubric_grader, sample_fields, to_letta
from rubriclib.judging.judge import Judge
from rubriclib.judging.result import not_judged
from rubriclib.rubrics.registry import load_rubric

DOCS_SUITE = snippet("letta-suite")
DOCS_DATASET = snippet("letta-dataset")
"""The docs' suite and dataset, run as written."""

SUITES = {
    "cases": """\
name: cases
dataset: cases.jsonl
target: {kind: letta_code}
graders:
  keywords: {kind: tool, function: "rubriclib_grader.py:keywords@^2"}
  scored: {kind: tool, function: "rubriclib_grader.py:./library/scored.md"}
reward: {kind: metric, metric_key: keywords}
""",
    "strict": """\
name: strict
dataset: strict.jsonl
target: {kind: letta_code}
graders:
  strict: {kind: tool, function: "my_graders.py:no_retries"}
reward: {kind: metric, metric_key: strict}
""",
    "unknown": """\
name: unknown
dataset: strict.jsonl
target: {kind: letta_code}
graders:
  typo: {kind: tool, function: "rubriclib_grader.py:no-such-rubric"}
reward: {kind: metric, metric_key: typo}
""",
}
DATASETS = {
    "cases.jsonl": [
        {
            "id": "pass",
            "input": "Q-pass",
            "ground_truth": "T-pass",
            "rubric_vars": {"context": "C-pass"},
            "extra_vars": {"answer": "A-pass verdict:pass score:5"},
        },
        {
            "id": "fail",
            "input": ["Q-turn-1", "Q-turn-2"],
            "ground_truth": "T-fail",
            "rubric_vars": {"context": ["C-a", "C-b"], "tone": "for another grader"},
            "extra_vars": {"answer": ["A-first", "A-fail verdict:fail score:2"]},
        },
        {"id": "text", "input": "Q-text", "extra_vars": {"answer": "A-text verdict:text"}},
    ],
    "strict.jsonl": [{"id": "down", "input": "Q-down", "extra_vars": {"answer": "verdict:500"}}],
}
MY_GRADERS = """\
from rubriclib import Judge
from rubriclib.integrations.letta import rubric_grader

no_retries = rubric_grader("keywords", judge=Judge(max_retries=0))
"""

# Run with the letta venv's python, in the folder holding the suites; prints the results as JSON.
RUN_SUITES = """\
import datetime, json, sys
from pathlib import Path

import anyio, yaml
from letta_client.types.agents import AssistantMessage
from letta_evals.datasets.loader import load_dataset
from letta_evals.models import SuiteSpec, TargetTrace
from letta_evals.runner import Runner


def recorded(sample):
    # The agent's run: one assistant message per turn, the answer the sample records.
    answers = (sample.extra_vars or {}).get("answer", "On 20 July 1969. verdict:pass")
    answers = answers if isinstance(answers, list) else [answers]
    when = datetime.datetime(2026, 1, 1)
    return [[AssistantMessage(id=f"message-{n}", date=when, content=text)] for n, text in enumerate(answers)]


async def run(name):
    path = Path(f"{name}.yaml").absolute()
    suite = SuiteSpec.from_yaml(yaml.safe_load(path.read_text()), base_dir=path.parent, suite_path=path)
    try:
        runner = Runner(suite, max_concurrent=4, letta_base_url="http://127.0.0.1:9")
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"}

    async def trace(sample, model_handle, **options):
        return TargetTrace(trajectory=recorded(sample), agent_id="agent-1", model_handle="test/model")

    runner._get_or_run_target_trace = trace  # no Letta server: the recorded answer
    results = {}
    for sample in load_dataset(suite.dataset, base_dir=suite.base_dir):
        result = await runner.run_sample(sample)
        results[str(sample.id)] = result.model_dump(mode="json", exclude={"trajectory"})
    return results


async def main():
    return {name: await run(name) for name in sys.argv[1:]}


print(json.dumps(anyio.run(main)))
"""


def judge_by_keyword(body: dict[str, Any]) -> Reply:
    """The keyword judge; `verdict:500` is an HTTP 500, a 1-5 rubric gets `score:N`."""
    user = body["messages"][1]["content"]
    if "verdict:500" in user:
        return error_reply(500, "the judge is down")
    tools = [tool["function"]["name"] for tool in body.get("tools", [])]
    if "set_grade_score" in tools and "verdict:text" not in user:
        score = next((n for n in range(1, 6) if f"score:{n}" in user), 3)
        return tool_reply("set_grade_score", {"reason": f"scripted {score}", "score": score})
    return keyword_responder()(body)


@dataclass
class Run:
    results: dict[str, Any]
    """Each suite's SampleResults by sample id (or its `error` when it did not load)."""
    output: str
    """The subprocess's stdout and stderr."""
    work: Path
    requests: list[dict[str, Any]]
    library: Path

    def judged(self, text: str) -> list[str]:
        """The user messages of the judge requests holding `text`."""
        users = [request["messages"][1]["content"] for request in self.requests]
        return [user for user in users if text in user]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Every suite, run once through the real letta-evals against the scripted judge."""
    python = integration_tool("letta", "bin", "python")
    work = tmp_path_factory.mktemp("letta")
    library = work / "library"
    library.mkdir()
    (library / "keywords.md").write_text(KEYWORD_RUBRIC)
    (library / "scored.md").write_text(SCORE_RUBRIC)
    written = CliRunner().invoke(main, ["integrations", "letta", "--dir", str(work)])
    assert written.exit_code == 0, written.output
    (work / "readme.yaml").write_text(DOCS_SUITE)
    (work / "dataset.jsonl").write_text(DOCS_DATASET)
    for name, text in SUITES.items():
        (work / f"{name}.yaml").write_text(text)
    for name, rows in DATASETS.items():
        (work / name).write_text("".join(json.dumps(row) + "\n" for row in rows))
    (work / "my_graders.py").write_text(MY_GRADERS)
    (work / "run_suites.py").write_text(RUN_SUITES)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RUBRICLIB_"))}
    env = {k: v for k, v in env.items() if not k.startswith("LETTA_")}
    with JudgeServer() as server:
        server.responder = judge_by_keyword
        env.update(
            OPENAI_BASE_URL=server.url,
            OPENAI_API_KEY=SECRET_KEY,
            RUBRICLIB_MODEL="judge-model",
            RUBRICLIB_PATH=str(library),
            RUBRICLIB_CACHE_DIR=str(work / "verdicts"),
            HOME=str(work),
        )
        done = run_tool([str(python), "run_suites.py", "readme", *SUITES], work, env)
        # the grader awaits agrade and never closes the judge: nothing may be left open
        assert "Unclosed" not in done.stdout + done.stderr, done.stderr[-4000:]
        results = json.loads(done.stdout.strip().splitlines()[-1])
        yield Run(results, done.stdout + done.stderr, work, server.requests, library)


def test_pass_fail_scores_carry_the_reason_and_rubric_identity(run: Run) -> None:
    cases = run.results["cases"]
    passed, failed = cases["pass"]["grades"]["keywords"], cases["fail"]["grades"]["keywords"]
    assert (passed["score"], passed["rationale"]) == (1.0, "scripted set_grade_pass")
    assert (failed["score"], failed["rationale"]) == (0.0, "scripted set_grade_fail")
    rubric = load_rubric(str(run.library / "keywords.md"))
    for grade in (passed, failed):
        assert grade["metadata"]["rubric"] == rubric.identity
        assert grade["metadata"]["judge"]["model"] == "judge-model"
        assert "error" not in grade["metadata"]
    assert passed["metadata"]["verdict"] == "pass" and failed["metadata"]["verdict"] == "fail"
    assert cases["pass"]["error"] is None and cases["pass"]["reward"]["score"] == 1.0
    assert cases["fail"]["error"] is None and cases["fail"]["reward"]["score"] == 0.0
    assert cases["pass"]["submissions"]["keywords"] == "A-pass verdict:pass score:5"


def test_a_one_to_five_rubric_by_path_scores_its_level(run: Run) -> None:
    cases = run.results["cases"]
    five, two = cases["pass"]["grades"]["scored"], cases["fail"]["grades"]["scored"]
    assert (five["score"], five["metadata"]["raw_score"], five["metadata"]["verdict"]) == (
        1.0,
        5,
        "pass",
    )
    assert (two["score"], two["metadata"]["raw_score"], two["metadata"]["verdict"]) == (
        0.25,
        2,
        "fail",
    )
    assert two["metadata"]["rubric"]["source"] == f"file:{run.library / 'scored.md'}"


def test_input_ground_truth_and_rubric_vars_reach_the_judge(run: Run) -> None:
    passed, failed = run.judged("A-pass"), run.judged("A-fail")
    assert len(passed) == len(failed) == 2  # by keywords and by scored
    for user in passed:
        assert "## Task input [input]\n\n```\nQ-pass\n```" in user
        assert "## Source context [context]\n\n```\nC-pass\n```" in user
        assert "## Reference answer [reference]\n\n```\nT-pass\n```" in user
    assert all("A-first" not in user for user in failed)  # the last assistant message only
    for user in failed:
        assert "## Task input [input]\n\n```\nuser: Q-turn-1\nuser: Q-turn-2\n```" in user
        assert "## Source context [context]\n\n```\n[1] C-a\n\n[2] C-b\n```" in user
        assert "## Reference answer [reference]\n\n```\nT-fail\n```" in user
        assert "for another grader" not in user


def test_a_judge_error_is_a_grading_error_never_a_score(run: Run) -> None:
    text = run.results["cases"]["text"]
    down = run.results["strict"]["down"]
    for sample, grader, cause in (
        (text, "keywords", "no valid verdict after a corrective turn"),
        (text, "scored", "no valid verdict after a corrective turn"),
        (down, "strict", "judge request failed after 1 attempt(s): HTTP 500"),
    ):
        grade = sample["grades"][grader]
        assert grade["score"] == 0.0 and grade["metadata"]["verdict"] == "error"
        assert cause in grade["metadata"]["error"] and cause in grade["rationale"]
        assert grade["rationale"].startswith("Error during grading: rubriclib ")
        assert grade["metadata"]["rubric"]["name"] in ("keywords", "scored")
        assert sample["error"]["category"] == "grading"  # letta-evals' own verdict on it
        assert sample["reward"] is None
    assert len(run.judged("verdict:500")) == 1  # rubric_grader(..., judge=Judge(max_retries=0))


def test_a_bad_rubric_reference_stops_the_suite_with_one_clear_line(run: Run) -> None:
    error = run.results["unknown"]["error"]
    assert error.startswith(
        "RubricError: no-such-rubric: reference: no rubric named 'no-such-rubric'"
    )
    assert "\n" not in error


def test_letta_evals_run_names_the_bad_reference(run: Run) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RUBRICLIB_"))}
    env.update(OPENAI_BASE_URL="http://127.0.0.1:9/v1", HOME=str(run.work), COLUMNS="300")
    done = subprocess.run(
        [str(integration_tool("letta", "bin", "letta-evals")), "run", "unknown.yaml", "--quiet"],
        cwd=run.work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Error running suite: no-such-rubric: reference: no rubric named" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_the_docs_suite_runs_as_written(run: Run) -> None:
    [sample] = run.results["readme"].values()
    grade = sample["grades"]["grounded"]
    assert (grade["score"], grade["metadata"]["verdict"]) == (1.0, "pass")
    assert grade["metadata"]["rubric"]["source"] == "builtin:groundedness"
    assert sample["reward"]["score"] == 1.0 and sample["error"] is None
    [judged] = run.judged("## Candidate output [output]\n\n```\nOn 20 July 1969. verdict:pass")
    assert (
        "## Source context [context]\n\n```\nApollo 11 landed on the Moon on 20 July 1969.\n```"
        in judged
    )
    assert "## Reference answer [reference]\n\n```\n20 July 1969\n```" in judged


def test_the_api_key_is_in_no_output_or_file(run: Run) -> None:
    assert SECRET_KEY not in run.output
    for path in (path for path in run.work.rglob("*") if path.is_file()):
        assert SECRET_KEY.encode() not in path.read_bytes(), path


@dataclass
class FakeSample:
    """The fields of a letta Sample that the grader reads."""

    input: str | list[str]
    ground_truth: str | list[str] | None = None
    rubric_vars: dict[str, Any] | None = None


def test_sample_fields_and_results_in_process(library: Path) -> None:
    sample = FakeSample(["a", "b"], ["x", "y"], {"context": ["c1", "c2"], "other": 1})
    assert sample_fields(sample) == {
        "input": "user: a\nuser: b",
        "context": "[1] c1\n\n[2] c2",
        "reference": "x\ny",
    }
    with pytest.raises(ValueError, match="rubric_vars.context: must be text or a list of passages"):
        sample_fields(FakeSample("q", rubric_vars={"context": {"a": 1}}))
    error = to_letta(not_judged(load_rubric("keywords"), "m", "no context"))
    assert (
        error["score"] == 0.0
        and error["metadata"]["error"] == "rubriclib keywords@2.1.0: not judged: no context"
    )


def test_without_letta_evals_the_grader_says_what_to_install(library: Path) -> None:
    judge = Judge(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ImportError, match=r"pip install 'rubriclib\[letta\]'"):
        rubric_grader("keywords", judge=judge)
    with pytest.raises(TypeError, match="not both"):
        rubric_grader("keywords", judge=judge, model="m")


def test_the_shim_names_graders_by_rubric(library: Path, tmp_path: Path) -> None:
    shim = tmp_path / letta.SHIM_FILENAME
    shim.write_text(letta.SHIM_TEXT)
    namespace: dict[str, Any] = {"__file__": str(shim)}
    exec(compile(letta.SHIM_TEXT, str(shim), "exec"), namespace)
    getattr_ = namespace["__getattr__"]
    with pytest.raises(AttributeError):
        getattr_("__all__")  # dunders are never rubric references
    assert len(letta.SHIM_TEXT.splitlines()) < 20

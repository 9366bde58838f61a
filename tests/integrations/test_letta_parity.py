"""`rubriclib eval` on a letta-evals suite sends the prompt letta-evals itself sends. Each suite
is run twice against one scripted judge server: by the real, pinned letta-evals (its suite and
dataset loaders, `validate_rubric_vars`, its Runner grading each sample with its RubricGrader,
the agent's run replaced by the row's recorded submission), and by `rubriclib eval`. Every
prompt letta sends must be one rubriclib sends, verbatim; where letta refuses a suite or fails a
sample, rubriclib refuses the run with exit 2 before any request."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, integration_tool, run_tool
from judge_server import JudgeServer, Reply, completion, tool_reply

from rubriclib.cli import main

EXAMPLES = Path(__file__).parent.parent.parent / "examples"
PROMPT = (
    "Product: {product}\nQuestion: {input}\nAnswer: {submission}\nExpected: {ground_truth}\n"
    'Count: {count}\nReply as JSON like {{"score": 1}}.\n'
)
SUITE = """\
name: {name}
dataset: {dataset}
target: {{kind: letta_code, model_handles: [openai/gpt-4.1-mini]}}
graders:
  quality:
    kind: model_judge
    prompt: {prompt}
    model: judge-model
    system_prompt: You grade answers for a product team.
reward: {{kind: metric, metric_key: quality}}
"""
ROWS: list[dict[str, Any]] = [
    {
        "id": "plain",
        "input": "How many boards?",
        "ground_truth": "Three.",
        "rubric_vars": {"product": "Tally {board}", "count": 3},
        "submission": "Up to 3.",
    },
    {
        "id": "two-messages",
        "input": ["Hi", "How many boards?"],
        "ground_truth": "Three.",
        "rubric_vars": {"product": "Tallyboard", "count": 1.5},
        "submission": "Three boards.",
    },
    {
        "id": "per-turn",
        "input": ["First?", "Second?"],
        "ground_truth": ["One.", "Two."],
        "rubric_vars": {"product": "Tallyboard", "count": None},
        "submission": ["One it is.", "Two, I think."],
    },
    {
        "id": "inline-rubric",
        "input": "Where is billing?",
        "rubric": "Own rubric. Q: {input} A: {submission} Expected: [{ground_truth}]",
        "submission": "Admin > Billing.",
    },
    {
        "id": "rubric-file",
        "input": "Can I export?",
        "ground_truth": "Yes, as CSV.",
        "rubric_path": "rubrics/export.txt",
        "rubric_vars": {"product": "Tallyboard"},
        "submission": "Yes: CSV from Settings.",
    },
    {
        "id": "unicode",
        "input": 'Ünïcode "quoted" {input}',
        "ground_truth": "ok",
        "rubric_vars": {"product": ["a", {"b": True}], "count": "{count}"},
        "submission": "Fine ✅",
    },
]
EXPORT_RUBRIC = "{product} exports.\nQ: {input}\nA: {submission}\nExpected: {ground_truth}\n"
BAD: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "missing-variable": (PROMPT, [{**ROWS[0], "rubric_vars": {"product": "Tallyboard"}}]),
    "reserved-name": (
        PROMPT,
        [{**ROWS[0], "rubric_vars": {**ROWS[0]["rubric_vars"], "input": "x"}}],
    ),
    "own-rubric-missing-variable": (PROMPT, [{**ROWS[3], "rubric": "Tone: {tone} {submission}"}]),
    "json-braces": ('Reply as {"score": 1}: {submission}', [ROWS[0]]),
    "positional": ("{} {submission}", [{**ROWS[0]}]),
    "both-rubrics": (PROMPT, [{**ROWS[4], "rubric": "x {submission}"}]),
    "missing-rubric-file": (PROMPT, [{**ROWS[4], "rubric_path": "rubrics/none.txt"}]),
}

# Run with the letta venv's python in the folder holding the suites; prints the results as JSON.
RUN_LETTA = """\
import csv, datetime, json, sys
from pathlib import Path

import anyio, yaml
from letta_client.types.agents import AssistantMessage
from letta_evals.datasets.loader import load_dataset
from letta_evals.execution.grading import validate_rubric_vars
from letta_evals.models import SuiteSpec, TargetTrace
from letta_evals.runner import Runner


def submissions(dataset):
    # The recorded submission of each row, by sample id (letta's loader keeps no other key).
    if dataset.suffix == ".csv":
        rows = list(csv.DictReader(dataset.open()))
        parse = lambda text: json.loads(text) if text.strip().startswith("[") else text
        return {str(row["id"]): parse(row["submission"]) for row in rows}
    rows = [json.loads(line) for line in dataset.open()]
    return {str(row["id"]): row["submission"] for row in rows}


async def run(name):
    path = Path(f"{name}.yaml").absolute()
    try:
        suite = SuiteSpec.from_yaml(yaml.safe_load(path.read_text()), base_dir=path.parent, suite_path=path)
        samples = list(load_dataset(suite.dataset, base_dir=suite.base_dir))
        validate_rubric_vars(suite, samples)
        runner = Runner(suite, max_concurrent=1, letta_base_url="http://127.0.0.1:9")
    except Exception as error:
        return {"refused": f"{type(error).__name__}: {error}"}
    answers = submissions(Path(suite.dataset))
    when = datetime.datetime(2026, 1, 1)

    async def trace(sample, model_handle, **options):
        said = answers[str(sample.id)]
        turns = said if isinstance(said, list) else [said]
        trajectory = [[AssistantMessage(id=f"m{n}", date=when, content=text)] for n, text in enumerate(turns)]
        return TargetTrace(trajectory=trajectory, agent_id="agent-1", model_handle="test/model")

    runner._get_or_run_target_trace = trace  # no Letta server: the recorded submission
    results = {}
    for sample in samples:
        result = await runner.run_sample(sample)
        results[str(sample.id)] = result.model_dump(mode="json", exclude={"trajectory"})
    return results


async def main():
    return {name: await run(name) for name in sys.argv[1:]}


print(json.dumps(anyio.run(main)))
"""


def respond(body: dict[str, Any]) -> Reply:
    """letta's judge asks for JSON {score, rationale}; rubriclib's for a tool call."""
    if "tools" not in body:
        return Reply(body=completion(content=json.dumps({"score": 1.0, "rationale": "fine"})))
    return tool_reply("set_grade_pass", {"reason": "fine"})


def write_dataset(path: Path, rows: list[dict[str, Any]]) -> None:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        return
    import csv

    columns = ["id", "input", "ground_truth", "rubric_vars", "rubric", "rubric_path", "submission"]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        for row in rows:
            cells = {}
            for key, value in row.items():
                cells[key] = value if isinstance(value, str) else json.dumps(value)
            writer.writerow(cells)


@dataclass
class Runs:
    letta: dict[str, Any]
    """Each suite's letta-evals outcome: `refused`, or its SampleResults by sample id."""
    letta_requests: list[dict[str, Any]]
    """What letta-evals sent the judge; each suite's grader has a judge model of its own."""
    work: Path
    server: JudgeServer


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """Every suite through the real letta-evals, once, against the scripted judge."""
    python = integration_tool("letta", "bin", "python")
    work = tmp_path_factory.mktemp("parity")
    (work / "rubrics").mkdir()
    (work / "rubrics" / "export.txt").write_text(EXPORT_RUBRIC)
    suites = {"jsonl": ("rows.jsonl", PROMPT, ROWS), "csv": ("rows.csv", PROMPT, ROWS)}
    suites.update({name: (f"{name}.jsonl", *case) for name, case in BAD.items()})
    for name, (dataset, prompt, rows) in suites.items():
        write_dataset(work / dataset, rows)
        text = SUITE.format(name=name, dataset=dataset, prompt=json.dumps(prompt))
        (work / f"{name}.yaml").write_text(text.replace("judge-model", f"judge-{name}"))
    example = work / "example"
    example.mkdir()
    for file in (EXAMPLES / "letta").rglob("*"):
        if file.is_file():
            (example / file.relative_to(EXAMPLES / "letta")).parent.mkdir(exist_ok=True)
            (example / file.relative_to(EXAMPLES / "letta")).write_bytes(file.read_bytes())
    (work / "run_letta.py").write_text(RUN_LETTA)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RUBRICLIB_"))}
    env = {k: v for k, v in env.items() if not k.startswith("LETTA_")}
    with JudgeServer() as server:
        server.responder = respond
        env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY=SECRET_KEY, HOME=str(work))
        env.update(RUBRICLIB_MODEL="rubriclib-default")  # the example's rubriclib grader
        done = run_tool([str(python), "run_letta.py", *suites, "example/suite"], work, env)
        letta = json.loads(done.stdout.strip().splitlines()[-1])
        sent = list(server.requests)
        server.requests.clear()
        yield Runs(letta, sent, work, server)


def rubriclib_eval(
    runs: Runs, suite: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, list[dict[str, Any]]]:
    """`rubriclib eval SUITE.yaml` against the same server: its result and its requests."""
    monkeypatch.setenv("OPENAI_BASE_URL", runs.server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("RUBRICLIB_MODEL", "rubriclib-default")
    runs.server.requests.clear()
    result = CliRunner().invoke(main, ["eval", str(runs.work / f"{suite}.yaml"), "--no-cache"])
    return result, list(runs.server.requests)


def messages(requests: list[dict[str, Any]], model: str, role: str) -> list[str]:
    return sorted(
        message["content"]
        for request in requests
        if request["model"] == model
        for message in request["messages"]
        if message["role"] == role
    )


@pytest.mark.parametrize(
    ("suite", "model", "samples"),
    [("jsonl", "judge-jsonl", 6), ("csv", "judge-csv", 6), ("example/suite", "gpt-4o-mini", 7)],
)
def test_every_prompt_letta_sends_is_the_one_rubriclib_sends(
    runs: Runs, monkeypatch: pytest.MonkeyPatch, suite: str, model: str, samples: int
) -> None:
    outcome = runs.letta[suite]
    assert "refused" not in outcome, outcome  # letta-evals loads the suite and its rows
    assert len(outcome) == samples
    for sample in outcome.values():
        assert sample["error"] is None, sample["error"]
    theirs = messages(runs.letta_requests, model, "user")
    assert len(theirs) == samples + 1  # the per-turn row is graded turn by turn
    result, requests = rubriclib_eval(runs, suite, monkeypatch)
    assert result.exit_code == 0, result.output
    assert messages(requests, model, "user") == theirs
    [their_system] = set(messages(runs.letta_requests, model, "system"))
    assert all(
        ours.startswith(f"{their_system}\n\nJudge impartially")
        for ours in messages(requests, model, "system")
    )


def test_the_values_are_placed_as_letta_places_them(runs: Runs) -> None:
    sent = messages(runs.letta_requests, "judge-jsonl", "user")
    assert "Product: Tally {board}\nQuestion: How many boards?\nAnswer: Up to 3.\n" in sent[
        0
    ] + "".join(sent)
    joined = "\n".join(sent)
    assert "Question: ['Hi', 'How many boards?']" in joined  # str() of a list, as letta does
    assert "Count: None" in joined and "Count: 1.5" in joined
    assert 'Reply as JSON like {"score": 1}.' in joined
    assert "Own rubric. Q: Where is billing? A: Admin > Billing. Expected: []" in joined
    assert "Tallyboard exports.\nQ: Can I export?" in joined


@pytest.mark.parametrize("suite", sorted(BAD))
def test_where_letta_fails_rubriclib_refuses_before_any_request(
    runs: Runs, monkeypatch: pytest.MonkeyPatch, suite: str
) -> None:
    outcome = runs.letta[suite]
    refused = "refused" in outcome
    failed = not refused and any(sample["error"] is not None for sample in outcome.values())
    assert refused or failed, outcome
    result, requests = rubriclib_eval(runs, suite, monkeypatch)
    assert result.exit_code == 2, result.output
    assert requests == []
    assert "Traceback" not in result.output

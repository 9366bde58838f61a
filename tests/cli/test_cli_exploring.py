"""Exploring a long run from the command line: `--evidence` on judge and render, an eval
grader's `evidence:`, and the refusals before any request (batches, the json protocol)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer, tool_reply
from long_runs import NEEDLE, exploring_judge, long_run

from rubriclib.cli import main

RUBRIC = """\
---
name: support-run
version: 1.0.0
scale: pass-fail
description: A support agent's run.
requires: [transcript]
citations: required
---
Fail a run where money moved without the customer's approval.
"""


@pytest.fixture
def run_file(library: Path, write_file: Callable[..., Path]) -> Path:
    (library / "support-run.md").write_text(RUBRIC)
    return write_file("run.json", json.dumps(long_run()))


def test_judge_explores_a_long_run_and_prints_its_trail(
    run_file: Path, endpoint: JudgeServer
) -> None:
    endpoint.responder = exploring_judge()
    ran = CliRunner().invoke(
        main, ["judge", "support-run", "--transcript", str(run_file), "--json", "--no-cache"]
    )
    assert ran.exit_code == 1, ran.output  # fail: the refund in the middle of M33
    result = json.loads(ran.output)
    assert result["details"]["evidence"] == "explored"
    assert result["details"]["exploration"]["blocks_read"] == ["M33"]
    assert result["details"]["citations"][0]["status"] == "verified"
    assert len(endpoint.requests) == 3


def test_whole_from_the_command_line_cuts_the_run(run_file: Path, endpoint: JudgeServer) -> None:
    ran = CliRunner().invoke(
        main,
        ["judge", "support-run", "--transcript", str(run_file), "--json", "--evidence", "whole"],
    )
    result = json.loads(ran.output)
    assert result["details"]["evidence"] == "whole-cut"
    assert result["details"]["transcript"]["not_explored"] == "evidence is whole"
    assert NEEDLE not in json.dumps(endpoint.requests[0])


def test_render_shows_the_first_message_and_the_tools_of_an_explored_run(
    run_file: Path,
) -> None:
    explored = CliRunner().invoke(main, ["render", "support-run", "--transcript", str(run_file)])
    assert explored.exit_code == 0, explored.output
    assert "[M3] tool result for lookup_orders (c0, answers the call in M2), 20," in explored.output
    assert "(page 1 of 3, 62 blocks; list_blocks(page=2) lists the next)" in explored.output
    tools = json.loads(explored.output.split("=== tools ===\n", 1)[1])
    assert [tool["function"]["name"] for tool in tools] == [
        "set_grade",
        "list_blocks",
        "read_block",
        "search_run",
    ]
    whole = CliRunner().invoke(
        main, ["render", "support-run", "--transcript", str(run_file), "--evidence", "whole"]
    )
    assert "characters cut ...]" in whole.output and "=== tools ===" not in whole.output


def test_exploring_is_refused_before_any_request_where_it_cannot_apply(
    run_file: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    both = ["judge", "support-run", "--transcript", str(run_file), "--evidence", "explore"]
    json_protocol = CliRunner().invoke(main, [*both, "--protocol", "json"])
    assert json_protocol.exit_code == 2
    assert "evidence='explore' needs tools: the json protocol offers none" in json_protocol.output
    write_file("rows.jsonl", json.dumps({"id": "r1", "transcript": long_run()}) + "\n")
    eval_file = write_file(
        "eval.yaml",
        "name: runs\ndataset: rows.jsonl\n"
        "graders:\n  - {name: money, rubric: support-run, evidence: explore}\n",
    )
    prepare = ["batch", "prepare", str(eval_file), "--to", str(tmp_path / "requests.jsonl")]
    refused = CliRunner().invoke(main, prepare)
    assert refused.exit_code == 2
    assert "grader money: evidence explore (from its settings" in refused.output
    flagged = CliRunner().invoke(main, [*prepare[:3], "--evidence", "explore", *prepare[3:]])
    assert flagged.exit_code == 2 and "--evidence explore takes several" in flagged.output
    assert endpoint.requests == [] and not (tmp_path / "requests.jsonl").exists()


def test_the_docs_exploring_example_is_what_happens(
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from conftest import snippet

    sample = (Path(__file__).parents[1] / "data/runs/openai_chat.json").read_text()
    example = write_file("examples/agent-run/run.json", sample)  # as the page reads it
    monkeypatch.chdir(example.parents[2])
    found = '"status": "refunded"'
    endpoint.responder = exploring_judge("pass", cite=found, pattern=found)
    exec(snippet("agent-run-explore"), {})  # noqa: S102 - the docs' own example, run as written
    assert capsys.readouterr().out == snippet("agent-run-explore-output")
    first = endpoint.requests[0]
    assert "order B-1: a kettle" not in first["messages"][1]["content"]  # listed, not shown
    assert (
        "[M4] tool result for get_order (call_1, answers the call in M3), 8"
        in (first["messages"][1]["content"])
    )


def test_the_dry_run_names_the_rows_that_would_be_explored(
    run_file: Path, write_file: Callable[..., Path]
) -> None:
    short = long_run(blocks=2, characters=100)
    rows = [{"id": "long", "transcript": long_run()}, {"id": "short", "transcript": short}]
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    eval_file = write_file(
        "eval.yaml",
        "name: runs\ndataset: rows.jsonl\ngraders: [{name: money, rubric: support-run}]\n",
    )
    planned = CliRunner().invoke(main, ["eval", str(eval_file), "--dry-run", "--show-prompts"])
    assert planned.exit_code == 0, planned.output
    assert "1 judgment(s) whose judge would explore a run too long to show uncut" in planned.output
    assert "rows.jsonl:1: money: a run of 62 blocks, 60" in planned.output
    assert "[M3] tool result for lookup_orders" in planned.output  # the first message's list
    whole = CliRunner().invoke(main, ["eval", str(eval_file), "--dry-run", "--evidence", "whole"])
    assert "would explore" not in whole.output


PLANNED = re.compile(
    r"money: a run of 62 blocks, [\d,]+ characters: up to (\d+) requests, each about ([\d,]+) "
    r"to ([\d,]+) prompt tokens \(the first; then with its budget of ([\d,]+) characters read\)"
)


def long_run_eval(write_file: Callable[..., Path]) -> Path:
    """An eval of one row holding a run too long to show whole, at an 8,000-token limit."""
    write_file("rows.jsonl", json.dumps({"id": "long", "transcript": long_run()}) + "\n")
    return write_file(
        "eval.yaml",
        "name: runs\ndataset: rows.jsonl\njudge: {max_prompt_tokens: 8000}\n"
        "graders: [{name: money, rubric: support-run}]\n",
    )


def test_the_batch_estimate_counts_runs_cut_and_the_live_one_their_exploring(
    run_file: Path, write_file: Callable[..., Path]
) -> None:
    eval_file = long_run_eval(write_file)
    dry = ["eval", str(eval_file), "--dry-run", "--price-per-million", "1000"]
    live = CliRunner().invoke(main, dry)
    batch = CliRunner().invoke(main, [*dry, "--batch"])
    assert live.exit_code == batch.exit_code == 0, live.output + batch.output
    assert "would explore" in live.output and "would explore" not in batch.output  # cut
    found = PLANNED.search(live.output)
    assert found is not None
    requests, first, most = (int(n.replace(",", "")) for n in found.groups()[:3])
    for output in (live.output, batch.output):  # the same estimate, however it was asked for
        sent = re.search(r"batch: 1 request\(s\), about ([\d,]+) prompt tokens", output)
        assert sent is not None, output
        cut = int(sent.group(1).replace(",", ""))
        assert first < cut <= 8000  # the whole run, cut to the limit
        assert (
            f"live:  1 to {requests} request(s) and {first:,} to {requests * most:,} prompt "
            "tokens, sent at once (1 judgment(s) explore their run, which a batch shows whole, "
            "cut"
        ) in output
        cost = f"live about ${first / 1000:,.4f} to ${requests * most / 1000:,.4f}"
        assert cost in output and f"batch about ${cut / 2000:,.4f}" in output


@pytest.mark.parametrize(
    ("turns", "spent"), [((), "characters"), (("--exploring-turns", "3"), "turns")]
)
def test_the_dry_run_estimates_an_explored_judgment_by_the_budget_its_judge_spends(
    run_file: Path,
    write_file: Callable[..., Path],
    endpoint: JudgeServer,
    turns: tuple[str, ...],
    spent: str,
) -> None:
    eval_file = long_run_eval(write_file)
    planned = CliRunner().invoke(main, ["eval", str(eval_file), "--dry-run", *turns])
    assert planned.exit_code == 0, planned.output
    found = PLANNED.search(planned.output)
    assert found is not None, planned.output
    requests, first, most, characters = (int(n.replace(",", "")) for n in found.groups())
    assert most == first + characters // 4  # its first request, then its budget's worth
    assert (
        f"= 1 judgment(s) (up to {requests} requests), about {first:,} to {requests * most:,} "
        "prompt tokens (estimated: 4 characters a token; the most: every explored judgment's "
        "requests sent, each its budget's worth); 0 row(s) with problems"
    ) in planned.output
    # the judge reads on and on: it sends as many requests as planned, on the budget planned
    endpoint.responder = lambda body: tool_reply("read_block", {"block": "M3", "limit": 4000})
    ran = CliRunner().invoke(main, ["eval", str(eval_file), "--no-cache", *turns])
    assert ran.exit_code == 3, ran.output  # undecided: an error, and no gate
    # every request it may send, when the turns run out first; fewer when the characters do
    assert (
        len(endpoint.requests) == requests
        if spent == "turns"
        else len(endpoint.requests) < requests
    )
    told = endpoint.requests[-1]["messages"][-1]["content"]
    budget = {"characters": f"{characters:,} characters", "turns": "3 turns"}[spent]
    assert told.startswith(f"The exploring budget of {budget} is spent.")
    first_sent = endpoint.requests[0]
    sent = sum(len(m["content"]) for m in first_sent["messages"]) + len(
        json.dumps(first_sent["tools"])
    )
    assert abs(sent // 4 - first) <= first // 10  # the first request, as estimated


DOCENT_RUN = Path(__file__).parents[1] / "data" / "runs" / "docent_run.json"
CONFIRMATION = "Refunds over $10 need the customer's confirmation."


@pytest.mark.parametrize(
    ("cite_block", "cite", "status"),
    [(None, CONFIRMATION, "verified"), ("T1B7", '"status": "refunded"', "unverified")],
)
def test_an_explored_docent_run_is_read_and_cited_by_its_transcript_block_ids(
    library: Path, endpoint: JudgeServer, cite_block: str | None, cite: str, status: str
) -> None:
    """The judge finds the refused refund in the second transcript, reads that block (T1B3)
    and cites it: verified; a quote of a block it never read (T1B7) is not (the rubric asks
    for citations but does not require one, so the verdict stands)."""
    (library / "support-run.md").write_text(RUBRIC.replace("required", "optional"))
    endpoint.responder = exploring_judge(
        pattern="customer's confirmation", cite=cite, cite_block=cite_block
    )
    arguments = ["--transcript", str(DOCENT_RUN), "--evidence", "explore", "--json"]
    ran = CliRunner().invoke(main, ["judge", "support-run", *arguments, "--no-cache"])
    result = json.loads(ran.output)
    assert result["details"]["exploration"]["blocks_read"] == ["T1B3"]
    [citation] = result["details"]["citations"]
    assert (citation["block"], citation["status"]) == (cite_block or "T1B3", status)
    search = endpoint.requests[1]["messages"][-1]["content"]
    assert search.startswith("1 match(es):\n\n[T1B3] at 34: (error) Refunds over $10")
    listed = endpoint.requests[0]["messages"][1]["content"]
    assert "== Transcript T1: refunds; metadata" in listed
    assert (
        "[T1B3] tool error for refund (call_1, answers the call in T1B2), 58 characters" in listed
    )

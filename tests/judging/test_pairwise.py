"""Pairwise rubrics: two outputs for one input, judged in both orders, a disagreement a tie."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import PAIRWISE_TOOL as TOOL
from conftest import SECRET_KEY, VERSUS, prefers, responses
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply

import rubriclib
from rubriclib.cli import main
from rubriclib.errors import RubricError
from rubriclib.evals.datasets import Dataset
from rubriclib.judging.asking.reply import read_reply
from rubriclib.judging.asking.request import verdict_tools
from rubriclib.judging.judge import Judge
from rubriclib.judging.result import GradeResult
from rubriclib.measure.goldens import run_goldens
from rubriclib.reports.goldens import format_json, format_table
from rubriclib.rubrics.registry import load_goldens
from rubriclib.rubrics.rubric import Rubric, parse_rubric


def always(position: str) -> Callable[[dict[str, Any]], Reply]:
    """A position-biased judge: the same position wins whatever the responses say."""
    return lambda body: tool_reply(TOOL, {"reason": "first one reads better", "winner": position})


@pytest.fixture
def versus(write_file: Callable[..., Path]) -> Rubric:
    path = write_file("rubrics/versus.md", VERSUS)
    return parse_rubric(path, f"file:{path}", str(path))


@pytest.fixture
def pairwise_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "versus.md").write_text(VERSUS)
    monkeypatch.setenv("RUBRICLIB_PATH", str(folder))
    return folder


@pytest.fixture
def pairwise_endpoint(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    judge_server.responder = prefers("GOOD")
    return judge_server


def test_a_consistent_judge_lets_the_better_output_win(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.responder = prefers("GOOD")
    result = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert (result.verdict, result.passed, result.score) == ("pass", True, 1.0)
    pairwise = result.details["pairwise"]
    assert pairwise["winner"] == "output" and pairwise["position_flip"] is False
    assert [(o["order"], o["winner"]) for o in pairwise["orders"]] == [
        ("output-first", "A"),
        ("baseline-first", "B"),
    ]
    assert result.reason.startswith("the output wins in both orders: more correct")
    assert len(judge_server.requests) == 2
    assert result.details["judge"]["attempts"] == 2
    assert result.details["judge"]["usage"] == {"prompt_tokens": 22, "completion_tokens": 14}
    assert result.details["rubric"]["scale"] == "pairwise"


def test_attempts_are_per_order_and_a_retry_shows_only_when_there_was_one(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.responder = prefers("GOOD")
    plain = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert [o["attempts"] for o in plain.details["pairwise"]["orders"]] == [1, 1]
    assert plain.details["judge"]["attempts"] == 2, "requests actually sent"
    assert plain.details["judge"]["retries"] == 0, "two orders are not a retry"
    judge_server.script(error_reply(500, "busy"))  # the first request fails once
    retried = judge.grade(versus, "GOOD answer", input="q2", baseline="plain answer")
    orders = retried.details["pairwise"]["orders"]
    assert [(o["attempts"], o["retries"]) for o in orders] == [(2, 1), (1, 0)]
    assert (retried.details["judge"]["attempts"], retried.details["judge"]["retries"]) == (3, 1)


def test_the_baseline_winning_both_orders_is_a_loss(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.responder = prefers("GOOD")
    result = judge.grade(versus, "plain answer", input="q", baseline="GOOD answer")
    assert (result.verdict, result.score) == ("fail", 0.0)
    assert result.details["pairwise"]["winner"] == "baseline"


def test_a_position_biased_judge_gets_a_tie_never_a_win(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.responder = always("A")
    result = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert (result.verdict, result.passed, result.score) == ("fail", False, 0.5)
    pairwise = result.details["pairwise"]
    assert pairwise["winner"] == "tie" and pairwise["position_flip"] is True
    assert [o["winner"] for o in pairwise["orders"]] == ["A", "A"]
    assert result.reason.startswith("tie: the orders disagreed (output first: output; baseline")


def test_an_error_in_the_second_order_is_an_error(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.script(
        tool_reply(TOOL, {"reason": "A is right", "winner": "A"}),
        error_reply(400, "bad request"),
    )
    result = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert result.verdict == "error" and result.score is None and not result.passed
    assert result.reason.startswith("baseline-first order: judge request failed")
    assert result.details["pairwise"]["winner"] is None
    assert [o["winner"] for o in result.details["pairwise"]["orders"]] == ["A", None]


def test_an_error_in_the_first_order_skips_the_second(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.script(error_reply(400, "bad request"))
    judge_server.responder = prefers("GOOD")
    result = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert result.verdict == "error" and result.reason.startswith("output-first order: ")
    assert len(judge_server.requests) == 1


def test_rendering_shows_response_a_and_b_and_swaps_them(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.responder = prefers("GOOD")
    judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    first, second = (responses(body) for body in judge_server.requests)
    assert "GOOD answer" in first[0] and "plain answer" in first[1]
    assert "plain answer" in second[0] and "GOOD answer" in second[1]
    user = judge_server.requests[0]["messages"][1]["content"]
    assert "## Candidate output [output]" not in user
    assert (
        user.index("## Task input [input]")
        < user.index("## Response A [A]")
        < user.index("## Response B [B]")
    )
    assert "```\nGOOD answer\n```" in user
    system = judge_server.requests[0]["messages"][0]["content"]
    assert f"`{TOOL}`, reason first" in system
    body = judge_server.requests[0]
    assert body["tool_choice"] == {"type": "function", "function": {"name": TOOL}}
    parameters = body["tools"][0]["function"]["parameters"]
    assert list(parameters["properties"]) == ["reason", "citations", "winner"]
    assert parameters["required"] == ["reason", "winner"]  # citations are optional
    assert parameters["properties"]["winner"]["enum"] == ["A", "B", "tie"]
    assert parameters["properties"]["reason"]["minLength"] == 1


def test_render_fences_a_baseline_holding_backticks(versus: Rubric) -> None:
    messages = rubriclib.render(versus, "x", "q", baseline="```py\nhack\n```", swapped=True)
    assert "## Response A [A]\n\n````\n```py\nhack\n```\n````" in messages[1]["content"]


@pytest.mark.parametrize("mode", ["required", "named", "auto"])
def test_the_pairwise_protocol_costs_at_most_150_prompt_tokens_and_citations_at_most_300(
    mode: Any,
) -> None:
    for policy, limit in (("off", 150), ("optional", 300)):
        rubric = rubriclib.load_rubric("preference").model_copy(update={"citations": policy})
        system = rubriclib.render(rubric, "x", "q", baseline="y")[0]["content"]
        tools = json.dumps(verdict_tools(rubric, mode))
        assert (len(system) + len(tools)) / 4 <= limit


def test_the_reply_gives_the_winner_and_a_bad_winner_is_named(versus: Rubric) -> None:
    good = read_reply(completion([(TOOL, {"reason": "r", "winner": "tie"})]), versus, "named")
    assert not isinstance(good, str) and good.winner == "tie"
    bad = read_reply(completion([(TOOL, {"reason": "r", "winner": "C"})]), versus, "named")
    assert bad == f"{TOOL} was called with winner 'C', not 'A', 'B' or 'tie'"


def test_a_text_answer_gets_the_corrective_turn(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.script(Reply(body=completion(content="A is better.")))
    judge_server.responder = prefers("GOOD")
    result = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert result.verdict == "pass" and result.details["judge"]["corrected"] is True
    corrective = judge_server.requests[1]["messages"][-1]["content"]
    assert f"call `{TOOL}`" in corrective and "A, B or tie" not in corrective
    assert "`winner` A if Response A" in corrective
    assert len(judge_server.requests) == 3


def test_the_cache_keeps_both_orders(
    judge_server: JudgeServer, versus: Rubric, tmp_path: Path
) -> None:
    def cached_judge() -> Judge:
        return Judge(
            model="judge-model", base_url=judge_server.url, api_key=SECRET_KEY, cache=tmp_path
        )

    judge_server.responder = always("A")
    first = cached_judge().grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert len(judge_server.requests) == 2
    again = cached_judge().grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert len(judge_server.requests) == 2, "a rerun sends nothing"
    assert again.details["judge"]["cached"] is True

    def sent(result: GradeResult) -> list[int]:
        assert result.details.pairwise is not None and result.details.pairwise.orders
        return [order.attempts for order in result.details.pairwise.orders]

    def answers(result: GradeResult) -> list[dict[str, Any]]:
        assert result.details.pairwise is not None and result.details.pairwise.orders
        return [order.model_dump(exclude={"attempts"}) for order in result.details.pairwise.orders]

    assert (sent(first), sent(again)) == ([1, 1], [0, 0])
    assert answers(again) == answers(first)
    assert (again.verdict, again.score) == ("fail", 0.5)


def test_no_baseline_is_not_judged(judge: Judge, judge_server: JudgeServer, versus: Rubric) -> None:
    result = judge.grade(versus, "GOOD answer", input="q")
    assert result.verdict == "error"
    assert result.reason == "not judged: no baseline (the rubric versus requires it)"
    assert judge_server.requests == []


def test_an_empty_baseline_is_still_compared(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.responder = prefers("GOOD")
    result = judge.grade(versus, "GOOD answer", input="q", baseline="")
    assert result.verdict == "pass" and len(judge_server.requests) == 2


def test_a_baseline_is_ignored_by_other_rubrics(judge: Judge, judge_server: JudgeServer) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "fine"}))
    rubric = rubriclib.load_rubric("helpfulness")
    result = judge.grade(rubric, "an answer", input="q", baseline="another")
    assert result.verdict == "pass" and "pairwise" not in result.details
    assert "another" not in judge_server.requests[0]["messages"][1]["content"]


def test_votes_compose_and_stop_at_a_majority(judge_server: JudgeServer, versus: Rubric) -> None:
    judge_server.responder = prefers("GOOD")
    judge = Judge(model="m", base_url=judge_server.url, api_key=SECRET_KEY, votes=3)
    result = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert result.verdict == "pass" and result.score == 1.0
    assert result.details["votes"]["cast"] == 2 and len(judge_server.requests) == 4
    assert result.details["votes"]["winners"] == ["output", "output"]
    assert result.details["pairwise"]["comparisons"] == 2


def test_votes_without_a_majority_winner_are_a_tie(
    judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.script(
        *[
            tool_reply(TOOL, {"reason": "x", "winner": w})
            for w in ("A", "B", "B", "A", "tie", "tie")
        ]
    )
    judge = Judge(model="m", base_url=judge_server.url, api_key=SECRET_KEY, votes=3)
    result = judge.grade(versus, "GOOD answer", input="q", baseline="plain answer")
    assert result.details["votes"]["winners"] == ["output", "baseline", "tie"]
    assert (result.verdict, result.score, result.details["pairwise"]["winner"]) == (
        "fail",
        0.5,
        "tie",
    )
    assert result.reason.startswith("tie: no winner has a majority")


def run_versus_goldens(judge: Judge, rubric: Rubric) -> Any:
    return asyncio.run(run_goldens(judge, [(rubric, load_goldens(rubric))], trials=1))


def test_goldens_match_on_the_winner(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.responder = prefers("GOOD")
    run = run_versus_goldens(judge, versus)
    assert run.ok and run.misses == 0
    assert [o.answers for o in run.rubrics[0].outcomes] == [["output"], ["baseline"], ["tie"]]


def test_a_tie_where_the_baseline_should_win_is_a_miss(
    judge: Judge, judge_server: JudgeServer, versus: Rubric
) -> None:
    judge_server.responder = always("A")  # every comparison becomes a flip, so a tie
    run = run_versus_goldens(judge, versus)
    outcomes = {o.golden.name: o for o in run.rubrics[0].outcomes}
    assert outcomes["both-plain"].agreed and not outcomes["baseline-good"].agreed
    assert not outcomes["output-good"].agreed
    assert run.misses == 2 and not run.ok
    assert run.rubrics[0].accuracy == pytest.approx(1 / 3), "accuracy compares winners"
    table = format_table(run)
    assert "MISS baseline-good  expected baseline  got tie" in table
    assert "output win 0.0%, tie 100.0%, loss 0.0%; position flips 100.0% (3 of 3)" in table
    data = json.loads(format_json(run))["rubrics"][0]
    assert data["pairwise"]["tie_rate"] == 1.0 and data["pairwise"]["flip_rate"] == 1.0
    assert data["goldens"][1]["expected_winner"] == "baseline"
    assert data["goldens"][1]["baseline"] == "GOOD answer"


def problems_of(path: Path) -> list[str]:
    with pytest.raises(RubricError) as caught:
        parse_rubric(path, f"file:{path}", str(path))
    return [f"{p.field}: {p.message}" for p in caught.value.problems]


def test_pairwise_shape_problems_are_reported(write_file: Callable[..., Path]) -> None:
    text = VERSUS.replace("requires: [input]", "requires: [input]\npass_threshold: 3").replace(
        "    expected_winner: tie\n", "    expected: fail\n"
    )
    found = problems_of(write_file("bad.md", text))
    assert found == [
        "pass_threshold: applies only to scale 1-5",
        "goldens[2].expected_winner: is required for scale pairwise (output, baseline or tie)",
    ]


def test_a_golden_with_no_expectation_is_a_problem(write_file: Callable[..., Path]) -> None:
    text = VERSUS.replace("    expected_winner: output\n", "")
    assert problems_of(write_file("bad.md", text)) == [
        "goldens[0].expected: is required",
        "goldens[0].expected_winner: is required for scale pairwise (output, baseline or tie)",
    ]


def test_a_golden_without_a_baseline_is_a_problem(write_file: Callable[..., Path]) -> None:
    text = VERSUS.replace("    baseline: plain answer\n", "", 1)
    assert problems_of(write_file("bad.md", text)) == [
        "goldens[0].baseline: is required by the rubric (requires)"
    ]


def test_a_contradicting_expected_is_a_problem(write_file: Callable[..., Path]) -> None:
    text = VERSUS.replace("expected_winner: tie", "expected_winner: tie\n    expected: pass")
    [problem] = problems_of(write_file("bad.md", text))
    assert problem.startswith("goldens[2]: expected: pass contradicts expected_winner: tie")


def test_pairwise_fields_do_not_fit_other_scales(write_file: Callable[..., Path]) -> None:
    text = (
        VERSUS.replace("scale: pairwise", "scale: pass-fail")
        .replace("requires: [input]", "requires: [input, baseline]")
        .replace("{submission}", "")
    )
    found = problems_of(write_file("bad.md", text))
    assert "requires: baseline applies only to scale pairwise" in found
    assert "goldens[0].expected_winner: applies only to scale pairwise" in found


def test_a_pairwise_body_cannot_place_the_submission(write_file: Callable[..., Path]) -> None:
    text = VERSUS.replace("Pick the response", "{submission} Pick the response")
    [problem] = problems_of(write_file("bad.md", text))
    assert problem.startswith("body: a pairwise rubric cannot place {submission}")


def test_the_judge_command_exits_by_the_winner(
    pairwise_library: Path, pairwise_endpoint: JudgeServer
) -> None:
    base = ["judge", "versus", "--input", "q", "--no-cache"]
    win = CliRunner().invoke(main, [*base, "--output", "GOOD", "--baseline", "plain"])
    assert win.exit_code == 0 and win.output.startswith("PASS versus@1.0.0: the output wins")
    loss = CliRunner().invoke(main, [*base, "--output", "plain", "--baseline", "GOOD"])
    assert loss.exit_code == 1 and "the baseline wins" in loss.output
    tie = CliRunner().invoke(main, [*base, "--output", "one", "--baseline", "two", "--json"])
    assert tie.exit_code == 1 and json.loads(tie.output)["details"]["pairwise"]["winner"] == "tie"
    missing = CliRunner().invoke(main, [*base, "--output", "GOOD"])
    assert missing.exit_code == 3 and "not judged: no baseline" in missing.output
    assert len(pairwise_endpoint.requests) == 6


def test_the_judge_command_refuses_a_baseline_for_other_rubrics(
    pairwise_library: Path, pairwise_endpoint: JudgeServer
) -> None:
    result = CliRunner().invoke(
        main, ["judge", "helpfulness", "--input", "q", "--output", "a", "--baseline", "b"]
    )
    assert result.exit_code == 2 and pairwise_endpoint.requests == []
    assert "--baseline: helpfulness is a pass-fail rubric" in result.stderr


def test_the_judge_command_reads_the_baseline_from_a_file(
    pairwise_library: Path, pairwise_endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    path = write_file("old.txt", "GOOD old answer")
    result = CliRunner().invoke(
        main, ["judge", "versus", "--input", "q", "--output", "new", "--baseline", f"@{path}"]
    )
    assert result.exit_code == 1 and "the baseline wins" in result.output
    assert "GOOD old answer" in responses(pairwise_endpoint.requests[0])[1]


def test_test_goldens_exits_1_on_a_winner_miss(
    pairwise_library: Path, pairwise_endpoint: JudgeServer
) -> None:
    ok = CliRunner().invoke(main, ["test-goldens", "versus", "--no-cache"])
    assert ok.exit_code == 0 and ok.output.strip().endswith(
        "OK: 1 rubric(s), 3 golden(s) x 1 trial(s); 0 golden(s) missed, 0 judge error(s)"
    )
    pairwise_endpoint.responder = always("B")
    missed = CliRunner().invoke(main, ["test-goldens", "versus", "--no-cache"])
    assert missed.exit_code == 1 and "REGRESSION" in missed.output


def test_extra_goldens_join_the_rubrics_they_fit(
    pairwise_library: Path, pairwise_endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    extra = write_file(
        "extra.yaml",
        "- {name: extra-win, input: q, output: GOOD, baseline: meh, expected_winner: output}\n",
    )
    result = CliRunner().invoke(
        main, ["test-goldens", "versus", "--goldens", str(extra), "--format", "json"]
    )
    assert result.exit_code == 0
    names = [g["name"] for g in json.loads(result.output)["rubrics"][0]["goldens"]]
    assert names == ["output-good", "baseline-good", "both-plain", "extra-win"]
    refused = CliRunner().invoke(main, ["test-goldens", "helpfulness", "--goldens", str(extra)])
    assert refused.exit_code == 2 and "fit no rubric in the run" in refused.stderr


def test_datasets_read_baseline_and_output_b(write_file: Callable[..., Path]) -> None:
    rows = [
        {"id": "a", "input": "q", "output": "x", "baseline": "y"},
        {"id": "b", "input": "q", "output": "x", "output_b": "z"},
        {"id": "c", "input": "q", "output": "x", "baseline": "same", "output_b": "same"},
        {"id": "d", "input": "q", "output": "x", "baseline": "one", "output_b": "two"},
    ]
    path = write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    problems, count = Dataset(path).check()
    assert count == 4
    assert [(p.source, p.field, p.message) for p in problems] == [
        (f"{path}:4", "output_b", "given twice, as baseline and output_b")
    ]
    rows_of = Dataset(path).rows()
    read = [next(rows_of).item for _ in range(3)]  # row d raises; the first three are good
    assert [item.baseline for item in read] == ["y", "z", "same"]
    assert all(item.metadata == {} for item in read)


def test_eval_reports_win_tie_loss_and_flips(
    pairwise_library: Path, pairwise_endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rows = [
        {"id": "1", "input": "q", "output": "GOOD", "baseline": "meh"},
        {"id": "2", "input": "q", "output": "GOOD too", "output_b": "meh"},
        {"id": "3", "input": "q", "output": "meh", "baseline": "GOOD"},
        {"id": "4", "input": "q", "output": "meh", "baseline": "also meh"},
        {"id": "5", "input": "q", "output": "meh"},
    ]
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    eval_file = write_file(
        "eval.yaml",
        "name: ab\ndataset: rows.jsonl\ngraders:\n  - name: prefer\n    rubric: versus\n",
    )
    report = rubriclib.run_eval(rubriclib.load_eval(eval_file))
    [stats] = report.graders
    assert (stats.passed, stats.failed, stats.errors) == (2, 2, 1)
    result = CliRunner().invoke(main, ["eval", str(eval_file), "--format", "json"])
    grader = json.loads(result.output)["graders"][0]
    assert grader["pairwise"]["win"] == 2 and grader["pairwise"]["tie"] == 1
    assert grader["pairwise"]["loss"] == 1 and grader["pairwise"]["errors"] == 1
    assert grader["pairwise"]["win_rate"] == 0.5 and grader["pairwise"]["loss_rate"] == 0.25
    table = CliRunner().invoke(main, ["eval", str(eval_file)]).output
    assert "prefer: output win 50.0%, tie 25.0%, loss 25.0%; position flips 0.0% (0 of 4)" in table
    assert grader["pairwise"]["comparisons"] == 4 and grader["pairwise"]["flip_rate"] == 0.0
    plan = CliRunner().invoke(main, ["eval", str(eval_file), "--dry-run", "--show-prompts"]).output
    assert "Response B" in plan and "(not provided)" not in plan


def test_eval_junit_runs_count_position_flips(
    pairwise_library: Path, pairwise_endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    from rubriclib.reports.evals import grader_pairwise

    pairwise_endpoint.responder = always("A")
    write_file("rows.jsonl", json.dumps({"input": "q", "output": "x", "baseline": "y"}) + "\n")
    eval_file = write_file(
        "eval.yaml", "name: ab\ndataset: rows.jsonl\ngraders:\n  - {name: p, rubric: versus}\n"
    )
    ev = rubriclib.load_eval(eval_file)
    from rubriclib.evals.run import run_ready
    from rubriclib.evals.setup import check_eval, ready_run

    report = asyncio.run(run_ready(ready_run(check_eval(ev)), keep_cases=True))
    found = grader_pairwise(report.graders[0], report)
    assert found is not None and found["flip_rate"] == 1.0 and found["tie"] == 1


def test_render_shows_the_baseline_as_response_b(pairwise_library: Path) -> None:
    result = CliRunner().invoke(
        main, ["render", "versus", "--output", "mine", "--baseline", "theirs", "--json"]
    )
    user = json.loads(result.output)[1]["content"]
    assert result.exit_code == 0 and user.index("mine") < user.index("## Response B [B]")
    assert user.index("## Response B [B]") < user.index("theirs")


def test_a_goldens_file_golden_without_an_expected_winner_is_a_problem(
    pairwise_library: Path,
) -> None:
    goldens = pairwise_library.parent / "goldens"
    goldens.mkdir()
    (goldens / "versus.yaml").write_text(
        "- {name: no-winner, input: q, output: a, baseline: b, expected: fail}\n"
    )
    with pytest.raises(rubriclib.RubricError) as raised:
        rubriclib.load_goldens(rubriclib.load_rubric("versus"))
    assert "versus.yaml" in str(raised.value) and "expected_winner" in str(raised.value)


def test_calibrate_refuses_a_pairwise_rubric_before_any_request(
    pairwise_library: Path, pairwise_endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = write_file("labels.jsonl", json.dumps({"output": "a", "label": "pass"}) + "\n")
    result = CliRunner().invoke(main, ["calibrate", "versus", "--labels", str(labels)])
    assert result.exit_code == 2 and "versus is a pairwise rubric" in result.output
    assert pairwise_endpoint.requests == []


def test_render_refuses_what_judge_refuses(pairwise_library: Path) -> None:
    missing = CliRunner().invoke(main, ["render", "versus", "--output", "mine"])
    assert missing.exit_code == 2 and "versus is a pairwise rubric" in missing.stderr
    extra = CliRunner().invoke(main, ["render", "helpfulness", "--output", "x", "--baseline", "y"])
    assert extra.exit_code == 2 and "only pairwise rubrics compare" in extra.stderr

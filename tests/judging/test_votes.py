"""Votes: K independent judgments of one output, combined by majority (1-5: the median), over
real HTTP to the scripted server."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import KEYWORD_RUBRIC, SECRET_KEY
from judge_server import JudgeServer, Reply, error_reply, tool_reply

from rubriclib import JudgeConfigError, Rubric
from rubriclib.cli import main
from rubriclib.evals.formats import load_eval
from rubriclib.judging.cache import cache_key
from rubriclib.judging.judge import Judge

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")


def voting_judge(server: JudgeServer, votes: int, **options: Any) -> Judge:
    """A Judge like the `judge` fixture's, casting `votes` votes."""
    settings: dict[str, Any] = {"timeout": 5.0, "backoff_base": 0.001, "backoff_max": 0.01}
    settings.update(options)
    return Judge(
        model="judge-model", base_url=server.url, api_key=SECRET_KEY, votes=votes, **settings
    )


def verdict(name: str, reason: str | None = None) -> Reply:
    tool = f"set_grade_{name}"
    return tool_reply(tool, {"reason": reason or f"it is a {name}"})


def score(value: int, reason: str | None = None) -> Reply:
    return tool_reply("set_grade_score", {"score": value, "reason": reason or f"scored {value}"})


def test_the_majority_of_three_votes_wins(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.script(verdict("pass", "good"), verdict("fail", "bad"), verdict("pass", "ok"))
    result = voting_judge(judge_server, 3).grade(rubric, "fine")
    assert (result.verdict, result.passed, result.score) == ("pass", True, 1.0)
    assert result.reason == "2/3 votes: good"
    votes = result.details["votes"]
    assert votes["verdicts"] == ["pass", "fail", "pass"] and votes["reasons"] == [
        "good",
        "bad",
        "ok",
    ]
    assert votes["asked"] == votes["cast"] == 3 and votes["errors"] == 0
    assert votes["agreement"] == pytest.approx(2 / 3)
    assert "scores" not in votes  # a pass-fail rubric has none
    judge_info = result.details["judge"]
    assert judge_info["attempts"] == 3 and judge_info["cached"] is False
    assert judge_info["usage"] == {"prompt_tokens": 33, "completion_tokens": 21}
    assert len(judge_server.requests) == 3


def test_two_agreeing_votes_of_three_skip_the_third(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(verdict("fail", "wrong"), verdict("fail"), verdict("pass"))
    result = voting_judge(judge_server, 3).grade(rubric, "broken")
    assert result.verdict == "fail" and result.reason == "2/3 votes: wrong"
    assert len(judge_server.requests) == 2 and len(judge_server.replies) == 1
    assert result.details["votes"]["cast"] == 2 and result.details["votes"]["agreement"] == 1.0


@pytest.mark.parametrize("order", [("pass", "fail"), ("fail", "pass")])
def test_a_tie_never_passes(
    judge_server: JudgeServer, rubric: Rubric, order: tuple[str, str]
) -> None:
    judge_server.script(*(verdict(name) for name in order))
    result = voting_judge(judge_server, 2).grade(rubric, "fine")
    assert (result.verdict, result.passed, result.score) == ("fail", False, 0.0)
    assert result.reason.startswith("tie, 1 pass and 1 fail of 2 votes: a tie never passes")
    assert result.reason.endswith("a fail vote said: it is a fail")
    assert result.details["votes"]["agreement"] == 0.5 and len(judge_server.requests) == 2


def test_every_vote_erroring_is_an_error(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.script(*[error_reply(500, "down")] * 3)
    result = voting_judge(judge_server, 3, max_retries=0).grade(rubric, "fine")
    assert (result.verdict, result.passed, result.score) == ("error", False, None)
    assert result.reason.startswith("all 3 vote(s) errored: judge request failed")
    votes = result.details["votes"]
    assert votes["errors"] == 3 and votes["agreement"] is None
    assert votes["verdicts"] == ["error"] * 3


def test_votes_that_error_are_left_out_and_the_reason_says_so(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(error_reply(500, "down"), verdict("pass", "good"), verdict("pass"))
    result = voting_judge(judge_server, 3, max_retries=0).grade(rubric, "fine")
    assert result.verdict == "pass"
    assert result.reason == (
        "1 of 3 vote(s) errored, so the majority was decided on the 2 that answered; "
        "2/3 votes: good"
    )
    assert result.details["votes"]["errors"] == 1
    assert result.details["votes"]["agreement"] == 1.0


def test_one_pass_among_errors_is_no_majority_of_those_asked(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(error_reply(500, "down"), verdict("pass", "good"), error_reply(500, "x"))
    result = voting_judge(judge_server, 3, max_retries=0).grade(rubric, "fine")
    assert (result.verdict, result.passed) == ("error", False)
    assert result.reason.startswith("only 1 of 3 votes answered (2 errored: judge request failed")
    assert result.reason.endswith("a decision needs 2")


def test_a_scored_rubric_takes_the_median(judge_server: JudgeServer, scored: Rubric) -> None:
    judge_server.script(score(5), score(2), score(4, "mostly right"))
    result = voting_judge(judge_server, 3).grade(scored, "x", reference="y")
    assert (result.verdict, result.score, result.details["raw_score"]) == ("pass", 0.75, 4)
    assert result.details["votes"]["scores"] == [5, 2, 4]
    assert result.reason == "2/3 votes, median score 4 of [5, 2, 4]: mostly right"


def test_an_even_count_takes_the_lower_median(judge_server: JudgeServer, scored: Rubric) -> None:
    judge_server.script(score(4), score(3))
    result = voting_judge(judge_server, 2).grade(scored, "x", reference="y")
    assert (result.verdict, result.passed, result.details["raw_score"]) == ("fail", False, 3)
    assert "lower median (a tie never rounds up) score 3 of [4, 3]" in result.reason


def test_scored_votes_stop_once_a_score_has_the_majority(
    judge_server: JudgeServer, scored: Rubric
) -> None:
    judge_server.script(score(4), score(5), score(5), score(1))
    result = voting_judge(judge_server, 3).grade(scored, "x", reference="y")
    assert result.details["raw_score"] == 5 and len(judge_server.requests) == 3
    assert len(judge_server.replies) == 1  # 4 and 5 decide nothing; 5, 5 of 3 decides


def test_the_async_path_votes_too(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.script(verdict("pass"), verdict("fail"), verdict("pass"), verdict("pass"))
    judge = voting_judge(judge_server, 2)
    results = judge.grade_many(rubric, [{"output": "a"}, {"output": "b"}], concurrency=1)
    assert [r.verdict for r in results] == ["fail", "pass"]  # a 1-1 tie, then 2 of 2
    assert [r.details["votes"]["verdicts"] for r in results] == [["pass", "fail"], ["pass"] * 2]
    assert len(judge_server.requests) == 4


def test_one_vote_is_todays_result(judge: Judge, judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.script(verdict("pass", "good"))
    result = judge.grade(rubric, "fine")
    assert result.reason == "good" and "votes" not in result.details and judge.votes == 1


@pytest.mark.parametrize("votes", [0, -1, True, 2.5, "3"])
def test_votes_must_be_a_whole_number_of_at_least_one(
    judge_server: JudgeServer, votes: Any
) -> None:
    with pytest.raises(JudgeConfigError, match="votes must be a whole number of at least 1"):
        voting_judge(judge_server, votes)


ENDPOINT = "http://127.0.0.1:1/v1"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}


def test_one_vote_keeps_the_cache_key_it_had_before_votes() -> None:
    # computed with the cache_key of before votes existed: existing caches stay valid
    before = "87926787a7dab76146e0079bfeab9333ed1eb45bac69abdc6f0a6ca8874b9034"
    assert cache_key(ENDPOINT, BODY, 1) == cache_key(ENDPOINT, BODY, 1, 1) == before
    trial_two = "e2a1a068e70d486960292aa989734e16582569b3f1633881aedb45262541f511"
    assert cache_key(ENDPOINT, BODY, 2) == trial_two


def test_votes_and_trials_never_share_a_cache_key() -> None:
    keys = {cache_key(ENDPOINT, BODY, trial, vote) for trial in (1, 2, 3) for vote in (1, 2, 3)}
    assert len(keys) == 9


def test_the_cache_keeps_votes_apart(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge_server.script(verdict("pass", "a"), verdict("fail", "b"), verdict("pass", "c"))
    first = voting_judge(judge_server, 3, cache=tmp_path / "cache").grade(rubric, "fine")
    again = voting_judge(judge_server, 3, cache=tmp_path / "cache").grade(rubric, "fine")
    assert len(judge_server.requests) == 3  # the rerun sent nothing
    assert again.details["votes"]["reasons"] == first.details["votes"]["reasons"] == ["a", "b", "c"]
    assert again.verdict == first.verdict == "pass"
    assert again.details["votes"]["cached"] == 3 and again.details["judge"]["cached"] is True
    assert first.details["votes"]["cached"] == 0


def test_a_single_vote_cached_before_is_the_first_of_several(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge_server.script(verdict("pass", "once"), verdict("fail", "two"), verdict("fail", "three"))
    single = voting_judge(judge_server, 1, cache=tmp_path / "cache").grade(rubric, "fine")
    voted = voting_judge(judge_server, 3, cache=tmp_path / "cache").grade(rubric, "fine")
    assert single.reason == "once" and len(judge_server.requests) == 3
    assert voted.details["votes"]["reasons"] == ["once", "two", "three"]
    assert voted.verdict == "fail" and voted.details["votes"]["cached"] == 1
    assert voted.details["judge"]["cached"] is False


def test_identical_votes_at_temperature_zero_warn_once(
    judge_server: JudgeServer, rubric: Rubric, caplog: pytest.LogCaptureFixture
) -> None:
    judge_server.script(*[verdict("pass", "same")] * 4)
    judge = voting_judge(judge_server, 2, temperature=0)
    judge.grade(rubric, "one")
    judge.grade(rubric, "two")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].name == "rubriclib"
    assert "set a temperature above 0" in warnings[0].getMessage()


@pytest.mark.parametrize(
    ("temperature", "replies"),
    [
        (0, [verdict("pass", "one way"), verdict("pass", "another way")]),
        (0.7, [verdict("pass", "same"), verdict("pass", "same")]),
    ],
)
def test_differing_votes_or_a_temperature_above_zero_do_not_warn(
    judge_server: JudgeServer,
    rubric: Rubric,
    caplog: pytest.LogCaptureFixture,
    temperature: float,
    replies: list[Reply],
) -> None:
    judge_server.script(*replies)
    result = voting_judge(judge_server, 2, temperature=temperature).grade(rubric, "fine")
    assert result.verdict == "pass" and len(judge_server.requests) == 2
    assert [r for r in caplog.records if r.levelno == logging.WARNING] == []


def test_judge_votes_on_the_command_line(library: Path, endpoint: JudgeServer) -> None:
    arguments = ["judge", "keywords", "--output", "verdict:flip", "--json", "--no-cache"]
    result = CliRunner().invoke(main, [*arguments, "--votes", "3"])
    assert result.exit_code == 0, result.output  # pass, fail, pass
    votes = json.loads(result.stdout)["details"]["votes"]
    assert votes["verdicts"] == ["pass", "fail", "pass"] and len(endpoint.requests) == 3
    tie = CliRunner().invoke(main, [*arguments, "--votes", "2"])  # fail, pass
    assert tie.exit_code == 1 and "a tie never passes" in json.loads(tie.stdout)["reason"]
    zero = CliRunner().invoke(main, [*arguments, "--votes", "0"])
    assert zero.exit_code == 2 and len(endpoint.requests) == 5
    sampled = CliRunner().invoke(main, [*arguments, "--votes", "2", "--temperature", "0.7"])
    assert sampled.exit_code in (0, 1), sampled.output
    assert {request["temperature"] for request in endpoint.requests[5:]} == {0.7}
    assert {request["temperature"] for request in endpoint.requests[:5]} == {0.0}


def test_test_goldens_composes_votes_with_trials(library: Path, endpoint: JudgeServer) -> None:
    arguments = ["test-goldens", "keywords", "--trials", "2", "--votes", "3", "--format", "json"]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 0, result.output
    # 2 goldens x 2 trials, each trial stopping after 2 agreeing votes of 3
    assert len(endpoint.requests) == 8
    goldens = json.loads(result.stdout)["rubrics"][0]["goldens"]
    results = [r for golden in goldens for r in golden["results"]]
    assert len(results) == 4
    assert {r["details"]["votes"]["asked"] for r in results} == {3}
    rerun = CliRunner().invoke(main, arguments)  # every (trial, vote) was cached apart
    assert rerun.exit_code == 0 and len(endpoint.requests) == 8
    warm = CliRunner().invoke(main, [*arguments, "--temperature", "1"])  # another judgment
    assert warm.exit_code == 0 and {r["temperature"] for r in endpoint.requests[8:]} == {1.0}


EVAL = """\
name: voted
rows:
  - {{id: r1, output: "verdict:pass"}}
  - {{id: r2, output: "verdict:fail"}}
graders:
  - name: kw
    rubric: ./keywords.md
    votes: {votes}
"""


def test_votes_in_an_eval_file(
    write_file: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    write_file("keywords.md", KEYWORD_RUBRIC)
    path = write_file("eval.yaml", EVAL.format(votes=3))
    assert load_eval(path).graders[0].judge.votes == 3
    out = tmp_path / "results.jsonl"
    result = CliRunner().invoke(main, ["eval", str(path), "--out", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["row"]: line["verdict"] for line in lines} == {"r1": "pass", "r2": "fail"}
    assert {line["result"]["details"]["votes"]["cast"] for line in lines} == {2}
    assert len(endpoint.requests) == 4  # two rows, two agreeing votes each
    again = CliRunner().invoke(
        main, ["eval", str(path), "--out", str(out), "--resume", "--votes", "1", "--no-cache"]
    )
    assert again.exit_code == 0, again.output  # other votes: judged again, one request a row
    assert len(endpoint.requests) == 6
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4  # the voted lines stay, superseded by the lines after them
    assert all("votes" in line["result"]["details"] for line in lines[:2])
    assert all("votes" not in line["result"]["details"] for line in lines[2:])


@pytest.mark.parametrize("votes", ["0", "true", "two"])
def test_a_bad_votes_value_is_reported_with_its_line(
    write_file: Callable[..., Path], endpoint: JudgeServer, votes: str
) -> None:
    write_file("keywords.md", KEYWORD_RUBRIC)
    path = write_file("eval.yaml", EVAL.format(votes=votes))
    result = CliRunner().invoke(main, ["eval", str(path)])
    assert result.exit_code == 2 and endpoint.requests == []
    assert f"rubriclib: error: {path}:8: graders[0].votes: " in result.stderr


def test_the_dry_run_shows_the_votes(write_file: Callable[..., Path]) -> None:
    write_file("keywords.md", KEYWORD_RUBRIC)
    path = write_file("eval.yaml", EVAL.format(votes=3))
    result = CliRunner().invoke(main, ["eval", str(path), "--dry-run", "--votes", "5"])
    assert result.exit_code == 0, result.output
    assert "5 votes per judgment" in result.stdout


def test_the_async_grade_votes_sequentially(judge_server: JudgeServer, rubric: Rubric) -> None:
    judge_server.script(verdict("pass"), verdict("pass"), verdict("fail"))
    judge = voting_judge(judge_server, 3)

    async def grade() -> Any:
        try:
            return await judge.agrade(rubric, "fine")
        finally:
            await judge.aclose()

    result = asyncio.run(grade())
    assert result.verdict == "pass" and judge_server.max_in_flight == 1
    assert len(judge_server.requests) == 2


def test_the_command_line_prints_the_temperature_warning(
    library: Path, endpoint: JudgeServer
) -> None:
    # a real process: the warning handler binds the stderr of the first command run in it
    env = {**os.environ, "OPENAI_BASE_URL": endpoint.url, "OPENAI_API_KEY": SECRET_KEY}
    arguments = ["judge", "keywords", "--output", "verdict:pass", "--no-cache", "--votes", "3"]
    result = subprocess.run([RUBRICLIB, *arguments], env=env, capture_output=True, text=True)
    assert result.returncode == 0 and len(endpoint.requests) == 2
    assert result.stdout.startswith("PASS keywords@2.1.0: 2/3 votes: scripted set_grade_pass")
    assert result.stderr.startswith(
        "rubriclib: warning: 2 votes at temperature 0 came back identical"
    )
    assert result.stderr.count("\n") == 1

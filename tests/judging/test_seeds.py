"""Seeds and what produced a verdict (issue 51, item 3), over the wire: `--seed N` sent with
every request, offset by the vote and the trial (the first judgment sends N), refused seeds
learned as a quirk; every result records the temperature and seed sent, the protocol, the
model the endpoint says answered and its `system_fingerprint`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, VALID_RUBRIC, keyword_responder
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply

from rubriclib import Judge, JudgeSettings, Rubric
from rubriclib.cli import main
from rubriclib.errors import JudgeConfigError


def seeded(server: JudgeServer, **options: Any) -> Judge:
    settings: dict[str, Any] = {"timeout": 5.0, "backoff_base": 0.001, "backoff_max": 0.01}
    return Judge("judge-model", server.url, SECRET_KEY, **(settings | options))


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_each_vote_is_sent_the_seed_plus_its_offset(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.responder = keyword_responder()  # verdict:flip: pass, fail, pass
    result = seeded(judge_server, seed=7, votes=3, temperature=0.7).grade(rubric, "verdict:flip")
    assert [body["seed"] for body in judge_server.requests] == [7, 8, 9]
    assert result.details.judge.seed == 7 and result.details.judge.temperature == 0.7
    assert result.details.votes is not None and result.details.votes.cast == 3


def test_a_result_records_what_produced_it(judge_server: JudgeServer, rubric: Rubric) -> None:
    reply = completion([("set_grade_pass", {"reason": "ok"})])
    reply |= {"model": "qwen2.5-7b-instruct-q4", "system_fingerprint": "fp_44709d6fcb"}
    judge_server.script(Reply(body=reply))
    result = seeded(judge_server, seed=3).grade(rubric, "fine")
    judge = result.model_dump(mode="json")["details"]["judge"]
    assert judge["model"] == "judge-model"  # the model asked for
    assert judge["served_model"] == "qwen2.5-7b-instruct-q4"  # the model that says it answered
    assert judge["system_fingerprint"] == "fp_44709d6fcb"
    assert (judge["temperature"], judge["seed"], judge["protocol"]) == (0.0, 3, "tools")


def test_no_seed_is_sent_or_recorded_unless_asked(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(tool_reply("set_grade_pass", {"reason": "ok"}))
    result = seeded(judge_server, temperature=None).grade(rubric, "fine")
    assert "seed" not in judge_server.requests[0] and "temperature" not in judge_server.requests[0]
    written = result.model_dump(mode="json")["details"]["judge"]
    assert "seed" not in written and "temperature" not in written
    assert "system_fingerprint" not in written  # the scripted reply gives none


def test_an_endpoint_that_refuses_seeds_is_asked_without_one(
    judge_server: JudgeServer, rubric: Rubric
) -> None:
    judge_server.script(
        error_reply(400, "Unrecognized request argument supplied: seed"),
        tool_reply("set_grade_fail", {"reason": "no"}),
    )
    judge = seeded(judge_server, seed=11)
    result = judge.grade(rubric, "broken")
    assert result.verdict == "fail" and judge.quirks == {"no_seed"}
    assert "seed" in judge_server.requests[0] and "seed" not in judge_server.requests[1]
    assert result.details.judge.seed is None


def test_a_cached_verdict_keeps_the_seed_its_request_was_sent(
    judge_server: JudgeServer, rubric: Rubric, tmp_path: Path
) -> None:
    judge_server.responder = keyword_responder()
    first = seeded(judge_server, seed=5, cache=tmp_path).grade(rubric, "verdict:pass")
    again = seeded(judge_server, seed=5, cache=tmp_path).grade(rubric, "verdict:pass")
    other = seeded(judge_server, seed=6, cache=tmp_path).grade(rubric, "verdict:pass")
    assert again.details.judge.cached is True and again.details.judge.seed == 5
    assert first.details.judge.cached is False and other.details.judge.cached is False
    assert len(judge_server.requests) == 2  # another seed is another request


def test_a_bad_seed_is_refused_before_any_request(judge_server: JudgeServer) -> None:
    with pytest.raises(JudgeConfigError, match="seed must be a whole number of at least 0"):
        seeded(judge_server, seed=-1)
    with pytest.raises(ValueError, match="seed"):
        JudgeSettings(seed=-2)
    assert judge_server.requests == []


def test_trials_and_the_flag_offset_the_seed(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    tiny = str(write_file("tiny.md", VALID_RUBRIC))
    run = cli(
        "test-goldens", tiny, "--trials", "2", "--seed", "40", "--no-cache", "--format", "json"
    )
    assert run.exit_code == 1, run.output  # the scripted judge fails "fine"
    seeds = sorted(body["seed"] for body in endpoint.requests)
    assert seeds == [40, 40, 41, 41]  # two goldens, each trial its own seed
    judged = cli("judge", tiny, "--output", "verdict:pass", "--seed", "9", "--json", "--no-cache")
    assert json.loads(judged.output)["details"]["judge"]["seed"] == 9
    refused = cli("judge", tiny, "--output", "x", "--seed", "-1")
    assert refused.exit_code == 2 and "-1 is not in the range x>=0" in refused.output


EVAL = """\
name: seeded
judge: {model: judge-model, seed: 100}
rows:
  - {id: a, output: "verdict:pass"}
graders:
  - name: tiny
    rubric: ./tiny.md
"""


def test_an_eval_file_and_its_flag_set_the_seed(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("tiny.md", VALID_RUBRIC)
    eval_file = str(write_file("eval.yaml", EVAL))
    out = tmp_path / "out.jsonl"
    assert cli("eval", eval_file, "--out", str(out), "--no-cache").exit_code == 0
    assert endpoint.requests[-1]["seed"] == 100
    assert (
        cli("eval", eval_file, "--out", str(out), "--no-cache", "--seed", "3", "--force").exit_code
        == 0
    )
    assert endpoint.requests[-1]["seed"] == 3
    line = json.loads(out.read_text().splitlines()[-1])
    assert line["result"]["details"]["judge"]["seed"] == 3

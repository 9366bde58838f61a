"""Judge panels: several judge models on one item, each behind its own scripted server."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, VALID_RUBRIC, keyword_responder
from judge_server import JudgeServer, Reply, error_reply, tool_reply

import rubriclib
from rubriclib.cli import main
from rubriclib.errors import JudgeConfigError
from rubriclib.evals.formats import load_eval
from rubriclib.judging.judge import Judge
from rubriclib.judging.panel import Panel
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric

PAIRWISE_RUBRIC = """\
---
name: versus
version: 1.0.0
scale: pairwise
description: Test pairwise rubric.
---
Pick the better response. Call `set_pairwise_winner`.
"""

CONTEXT_RUBRIC = """\
---
name: needs-context
version: 1.0.0
scale: pass-fail
description: Needs context.
requires: [context]
---
Judge it. Call `set_grade_pass` or `set_grade_fail`.
"""


@pytest.fixture
def servers() -> Iterator[list[JudgeServer]]:
    with JudgeServer() as a, JudgeServer() as b, JudgeServer() as c:
        yield [a, b, c]


@pytest.fixture
def versus(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("versus.md", PAIRWISE_RUBRIC)))


def member(server: JudgeServer | str, model: str, **options: Any) -> Judge:
    """A judge at a scripted server (or a URL) with a secret key and near-zero backoff."""
    url = server if isinstance(server, str) else server.url
    settings: dict[str, Any] = {"timeout": 5.0, "backoff_base": 0.001, "backoff_max": 0.01}
    settings.update(options)
    return Judge(model=model, base_url=url, api_key=SECRET_KEY, **settings)


def panel_of(servers: list[JudgeServer], aggregate: Any = "majority", **options: Any) -> Panel:
    names = ["judge-a", "judge-b", "judge-c"]
    return Panel([member(s, n, **options) for s, n in zip(servers, names, strict=False)], aggregate)


def says(verdict: str) -> Callable[[dict[str, Any]], Reply]:
    """A judge that always gives `verdict` (pass or fail)."""
    return lambda body: tool_reply(f"set_grade_{verdict}", {"reason": f"I say {verdict}"})


def scores(value: int) -> Callable[[dict[str, Any]], Reply]:
    return lambda body: tool_reply("set_grade_score", {"score": value, "reason": f"I give {value}"})


def prefers(word: str) -> Callable[[dict[str, Any]], Reply]:
    """A consistent pairwise judge: the response containing `word` wins in either position."""

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        first, second = user.split("## Response A [A]", 1)[1].split("## Response B [B]", 1)
        winner = "A" if word in first else "B" if word in second else "tie"
        return tool_reply("set_pairwise_winner", {"reason": f"{word} is better", "winner": winner})

    return respond


def dead(status: int = 401, key: str = SECRET_KEY) -> Callable[[dict[str, Any]], Reply]:
    """A server that refuses the key it was sent (`key`), echoing it as some providers do."""
    return lambda body: error_reply(status, f"Incorrect API key provided: {key}")


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_judges_that_agree(servers: list[JudgeServer], rubric: Rubric) -> None:
    for server in servers:
        server.responder = says("pass")
    result = panel_of(servers).grade(rubric, output="fine")
    assert result.verdict == "pass" and result.score == 1.0
    panel = result.details["panel"]
    assert (panel["aggregate"], panel["answered"], panel["errors"]) == ("majority", 3, 0)
    assert panel["agreement"] == 1.0
    assert [(j["model"], j["endpoint"], j["verdict"], j["reason"]) for j in panel["judges"]] == [
        (name, server.url, "pass", "I say pass")
        for name, server in zip(["judge-a", "judge-b", "judge-c"], servers, strict=True)
    ]
    assert result.details["rubric"]["name"] == "tiny"
    judge = result.details["judge"]
    assert judge["attempts"] == 3 and judge["usage"]["prompt_tokens"] == 33
    assert judge["model"] == "panel:majority(judge-a, judge-b, judge-c)"
    assert result.reason.startswith("majority of 3 judge(s): 3 pass, 0 fail")
    assert [s.request_count for s in servers] == [1, 1, 1]


@pytest.mark.parametrize(
    ("aggregate", "verdicts", "expected", "agreement"),
    [
        ("majority", ["pass", "fail", "pass"], "pass", 2 / 3),
        ("unanimous", ["pass", "fail", "pass"], "fail", 1 / 3),
        ("any", ["pass", "fail", "pass"], "pass", 2 / 3),
        ("majority", ["fail", "pass", "fail"], "fail", 2 / 3),
        ("unanimous", ["pass", "pass", "pass"], "pass", 1.0),
        ("any", ["fail", "pass", "fail"], "pass", 1 / 3),
        ("any", ["fail", "fail", "fail"], "fail", 1.0),
    ],
)
def test_judges_that_disagree(
    servers: list[JudgeServer],
    rubric: Rubric,
    aggregate: str,
    verdicts: list[str],
    expected: str,
    agreement: float,
) -> None:
    for server, verdict in zip(servers, verdicts, strict=True):
        server.responder = says(verdict)
    result = panel_of(servers, aggregate).grade(rubric, output="fine")
    assert result.verdict == expected and result.passed == (expected == "pass")
    assert result.details["panel"]["agreement"] == pytest.approx(agreement)
    assert [j["verdict"] for j in result.details["panel"]["judges"]] == verdicts
    quoted = "judge-a" if verdicts[0] == expected else "judge-b"
    assert f"{quoted} said: I say {expected}" in result.reason


def test_a_tie_never_passes(servers: list[JudgeServer], rubric: Rubric) -> None:
    servers[0].responder, servers[1].responder = says("pass"), says("fail")
    result = panel_of(servers[:2]).grade(rubric, output="fine")
    assert result.verdict == "fail"
    assert "1 pass, 1 fail" in result.reason and "a tie never passes" in result.reason
    assert result.details["panel"]["agreement"] == 0.5


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_member_with_a_dead_key_leaves_the_others_judging(
    servers: list[JudgeServer], rubric: Rubric, concurrency: int
) -> None:
    servers[0].responder, servers[2].responder = says("pass"), says("fail")
    servers[1].responder = dead(401)
    items = [{"output": f"answer {i}"} for i in range(8)]
    results = panel_of(servers).grade_many(rubric, items, concurrency=concurrency)
    assert len(results) == 8
    # judge-b's own fail-fast stopped it; judge-a and judge-c judged every item
    assert servers[0].request_count == servers[2].request_count == 8
    assert 1 <= servers[1].request_count <= concurrency
    for result in results:
        assert result.verdict == "fail"  # 1 pass and 1 fail among those that answered: a tie
        panel = result.details["panel"]
        assert (panel["answered"], panel["errors"]) == (2, 1)
        assert panel["judges"][1]["verdict"] == "error"
        assert "HTTP 401" in panel["judges"][1]["reason"]
        assert result.reason.startswith("1 of 3 judges errored (judge-b: ")
        assert "decided on the 2 that answered" in result.reason
    assert any("not judged: HTTP 401" in r.details["panel"]["judges"][1]["reason"] for r in results)
    dumped = json.dumps([result.model_dump() for result in results])
    assert SECRET_KEY not in dumped and "[redacted]" in dumped


def test_every_member_failing_is_an_error(servers: list[JudgeServer], rubric: Rubric) -> None:
    servers[0].responder = dead(401)
    servers[1].responder = dead(500)
    judges = [
        member(servers[0], "judge-a"),
        member(servers[1], "judge-b", max_retries=0),
        member(closed_port_url(), "judge-c", max_retries=0),
    ]
    results = Panel(judges, "any").grade_many(rubric, [{"output": "x"}, {"output": "y"}])
    for result in results:
        assert result.verdict == "error" and not result.passed and result.score is None
        assert result.reason.startswith("all 3 judges errored (judge-a: ")
        assert (result.details["panel"]["answered"], result.details["panel"]["errors"]) == (0, 3)
        assert result.details["panel"]["agreement"] is None
    assert "HTTP 500" in results[0].reason
    assert SECRET_KEY not in json.dumps([result.model_dump() for result in results])


def test_a_majority_panel_with_most_judges_missing_never_passes(
    servers: list[JudgeServer], rubric: Rubric
) -> None:
    servers[0].responder, servers[1].responder = says("pass"), dead(401)
    judges = [
        member(servers[0], "judge-a"),
        member(servers[1], "judge-b"),
        member(closed_port_url(), "judge-c", max_retries=0),
    ]
    [result] = Panel(judges, "majority").grade_many(rubric, [{"output": "x"}])
    assert (result.verdict, result.passed) == ("error", False)
    assert result.reason.startswith("2 of 3 judges errored (judge-b: ")
    assert result.reason.endswith("a majority panel needs 2 of 3 to answer")
    [lenient] = Panel(judges, "any").grade_many(rubric, [{"output": "x"}])
    assert lenient.verdict == "pass"  # `any` is decided by one judge that answered pass


@pytest.mark.parametrize(
    ("aggregate", "values", "raw", "verdict"),
    [
        ("majority", [5, 4, 2], 4, "pass"),
        ("unanimous", [5, 4, 2], 2, "fail"),
        ("any", [2, 3, 5], 5, "pass"),
        ("majority", [4, 3], 3, "fail"),  # the lower median: a tie never rounds up
        ("any", [1, 3], 3, "fail"),
    ],
)
def test_a_scored_rubric_takes_the_median_the_lowest_or_the_highest(
    servers: list[JudgeServer],
    scored: Rubric,
    aggregate: str,
    values: list[int],
    raw: int,
    verdict: str,
) -> None:
    for server, value in zip(servers, values, strict=False):
        server.responder = scores(value)
    result = panel_of(servers[: len(values)], aggregate).grade(scored, output="x")
    assert (result.details["raw_score"], result.verdict) == (raw, verdict)
    assert result.score == (raw - 1) / 4
    assert [j["raw_score"] for j in result.details["panel"]["judges"]] == values
    assert f"score, {raw}" in result.reason


@pytest.mark.parametrize(
    ("aggregate", "words", "winner", "verdict"),
    [
        ("majority", ["GOOD", "plain", "GOOD"], "output", "pass"),
        ("unanimous", ["GOOD", "plain", "GOOD"], "tie", "fail"),
        ("any", ["plain", "plain", "GOOD"], "output", "pass"),
        ("majority", ["plain", "none", "GOOD"], "tie", "fail"),
        ("any", ["plain", "none", "plain"], "tie", "fail"),
        ("unanimous", ["plain", "plain", "plain"], "baseline", "fail"),
    ],
)
def test_pairwise_panels(
    servers: list[JudgeServer],
    versus: Rubric,
    aggregate: str,
    words: list[str],
    winner: str,
    verdict: str,
) -> None:
    for server, word in zip(servers, words, strict=True):
        server.responder = prefers(word)
    result = panel_of(servers, aggregate).grade(
        versus, output="GOOD answer", baseline="plain answer"
    )
    assert (result.details["pairwise"]["winner"], result.verdict) == (winner, verdict)
    assert result.score == {"output": 1.0, "tie": 0.5, "baseline": 0.0}[winner]
    found = {"GOOD": "output", "plain": "baseline", "none": "tie"}
    assert [j["winner"] for j in result.details["panel"]["judges"]] == [found[w] for w in words]
    assert result.details["pairwise"]["comparisons"] == 3
    assert [s.request_count for s in servers] == [2, 2, 2]  # both orders, every judge


def test_each_member_may_vote(servers: list[JudgeServer], rubric: Rubric) -> None:
    servers[0].script(
        *(tool_reply(f"set_grade_{v}", {"reason": v}) for v in ("fail", "pass", "pass"))
    )
    servers[1].responder = says("fail")
    panel = Panel(
        [member(servers[0], "judge-a", votes=3, temperature=0.7), member(servers[1], "judge-b")],
        "any",
    )
    assert panel.model == "panel:any(judge-a x3, judge-b)"
    result = panel.grade(rubric, output="fine")
    assert result.verdict == "pass"  # judge-a's own majority is pass, and any passes
    first = result.details["panel"]["judges"][0]
    assert (first["verdict"], first["votes"]["asked"], first["votes"]["cast"]) == ("pass", 3, 3)
    assert "votes" not in result.details["panel"]["judges"][1]
    assert result.details["judge"]["attempts"] == 4


def test_a_missing_required_field_sends_nothing(
    servers: list[JudgeServer], write_file: Callable[..., Path]
) -> None:
    needs = load_rubric(str(write_file("needs.md", CONTEXT_RUBRIC)))
    result = panel_of(servers).grade(needs, output="x")
    assert result.verdict == "error"
    assert result.reason == "not judged: no context (the rubric needs-context requires it)"
    assert [s.request_count for s in servers] == [0, 0, 0]


def test_the_async_form(servers: list[JudgeServer], rubric: Rubric) -> None:
    import asyncio

    servers[0].responder, servers[1].responder = says("pass"), says("pass")
    panel = panel_of(servers[:2], "unanimous")

    async def grade() -> Any:
        try:
            return await panel.agrade(rubric, output="fine")
        finally:
            await panel.aclose()

    assert asyncio.run(grade()).verdict == "pass"


def test_a_bad_panel_is_refused(servers: list[JudgeServer]) -> None:
    with pytest.raises(JudgeConfigError, match="at least one judge"):
        Panel([])
    with pytest.raises(JudgeConfigError, match="aggregate must be one of"):
        Panel([member(servers[0], "a")], "most")  # type: ignore[arg-type]
    assert rubriclib.Panel is Panel


EVAL = """\
name: panel-eval
rows:
  - {{id: r1, output: "verdict:pass 1"}}
  - {{id: r2, output: "verdict:fail 2"}}
judge:
  concurrency: 2
graders:
  - name: panel
    rubric: ./tiny.md
    judges:
      - {{model: judge-a, base_url: "{a}", api_key_env: KEY_A}}
      - {{model: judge-b, base_url: "{b}", api_key_env: KEY_B, temperature: 0.5}}
      - {{model: judge-c, base_url: "{c}", api_key_env: KEY_C}}
    aggregate: {aggregate}
gate:
  panel: {{min_pass_rate: 0.5}}
"""

KEYS = {"KEY_A": "sk-key-a-000000000000", "KEY_B": "sk-key-b-111111111111", "KEY_C": SECRET_KEY}


@pytest.fixture
def panel_eval(
    servers: list[JudgeServer], write_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> Callable[[str], Path]:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    servers[0].responder, servers[2].responder = keyword_responder(), keyword_responder()
    servers[1].responder = says("fail")
    write_file("tiny.md", VALID_RUBRIC)

    def write(aggregate: str) -> Path:
        urls = {key: server.url for key, server in zip("abc", servers, strict=True)}
        return write_file("eval.yaml", EVAL.format(aggregate=aggregate, **urls))

    return write


def test_an_eval_file_with_a_panel_end_to_end(
    servers: list[JudgeServer], panel_eval: Callable[[str], Path], tmp_path: Path
) -> None:
    path = panel_eval("majority")
    grader = load_eval(path).graders[0]
    assert grader.panel is not None and grader.panel.aggregate == "majority"
    assert [m.model for m in grader.panel.judges] == ["judge-a", "judge-b", "judge-c"]
    out = tmp_path / "results.jsonl"
    # --model names one judge for single-judge graders; a panel keeps its own judges
    result = CliRunner().invoke(
        main, ["eval", str(path), "--out", str(out), "--no-cache", "--model", "other"]
    )
    assert result.exit_code == 0, result.output  # pass rate 0.5 holds
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["row"]: line["verdict"] for line in lines} == {"r1": "pass", "r2": "fail"}
    r1 = next(line for line in lines if line["row"] == "r1")["result"]
    assert [j["verdict"] for j in r1["details"]["panel"]["judges"]] == ["pass", "fail", "pass"]
    assert r1["details"]["judge"]["model"] == "panel:majority(judge-a, judge-b, judge-c)"
    for server, model, key in zip(servers, ["judge-a", "judge-b", "judge-c"], KEYS, strict=True):
        assert {request["model"] for request in server.requests} == {model}
        assert {h["authorization"] for h in server.headers} == {f"Bearer {KEYS[key]}"}
        assert server.request_count == 2
    assert {request["temperature"] for request in servers[1].requests} == {0.5}
    for text in (out.read_text(), result.output):
        assert not any(key in text for key in KEYS.values())
    again = CliRunner().invoke(main, ["eval", str(path), "--out", str(out), "--resume"])
    assert again.exit_code == 0, again.output
    assert [s.request_count for s in servers] == [2, 2, 2]  # the panel's results were kept


def test_an_eval_panel_member_with_a_dead_key(
    servers: list[JudgeServer], panel_eval: Callable[[str], Path], tmp_path: Path
) -> None:
    servers[1].responder = dead(401, KEYS["KEY_B"])
    out = tmp_path / "results.jsonl"
    result = CliRunner().invoke(main, ["eval", str(panel_eval("majority")), "--out", str(out)])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    # a majority of the panel (judge-a and judge-c, which agree) answered: r1 passes, r2 fails
    assert {line["row"]: line["verdict"] for line in lines} == {"r1": "pass", "r2": "fail"}
    assert all("1 of 3 judges errored (judge-b" in line["result"]["reason"] for line in lines)
    assert result.exit_code == 0, result.output
    assert servers[0].request_count == servers[2].request_count == 2
    assert not any(key in out.read_text() + result.output for key in KEYS.values())
    # Unanimity cannot be known with a judge missing: never a pass, though the rest passed.
    strict = tmp_path / "strict.jsonl"
    CliRunner().invoke(main, ["eval", str(panel_eval("unanimous")), "--out", str(strict)])
    verdicts = {
        json.loads(line)["row"]: json.loads(line) for line in strict.read_text().splitlines()
    }
    assert {row: line["verdict"] for row, line in verdicts.items()} == {"r1": "error", "r2": "fail"}
    assert (
        "a unanimous panel passes only when every judge passed"
        in verdicts["r1"]["result"]["reason"]
    )


BAD = """\
name: bad
rows: [{{output: x}}]
graders:
  - name: one
    rubric: groundedness
{grader}
"""


@pytest.mark.parametrize(
    ("grader", "problem"),
    [
        ("    judges: []", ":6: graders[0].judges: is empty"),
        (
            "    judges: [{model: a}, {model: b}]\n    aggregate: most",
            ":7: graders[0].aggregate: 'most' is not allowed",
        ),
        (
            "    judge: {model: a}\n    judges: [{model: b}]",
            ":6: graders[0].judge: give judge (one judge) or judges (a panel), not both",
        ),
        (
            "    judges:\n      - {model: a}\n      - {model: b, temperature: -1}",
            ":8: graders[0].judges[1].temperature: ",
        ),
        (
            "    judges:\n      - {model: a}\n      - {modle: b}",
            ":8: graders[0].judges[1].modle: unknown key; did you mean 'model'?",
        ),
        (
            "    judges:\n      - {model: a, concurrency: 4}",
            ":7: graders[0].judges[0].concurrency: is a setting of the whole run",
        ),
        (
            "    judges:\n      - {model: a}\n      - {model: a}",
            ":8: graders[0].judges[1]: is the same judge as judges[0]",
        ),
        ("    aggregate: any", ":6: graders[0].aggregate: applies only to a panel"),
    ],
)
def test_bad_panels_are_reported_with_their_lines(
    write_file: Callable[..., Path], endpoint: JudgeServer, grader: str, problem: str
) -> None:
    path = write_file("eval.yaml", BAD.format(grader=grader))
    result = CliRunner().invoke(main, ["eval", str(path)])
    assert result.exit_code == 2, result.output
    assert f"rubriclib: error: {path}{problem}" in result.stderr
    assert endpoint.requests == []


def test_the_plan_counts_requests_per_member(
    panel_eval: Callable[[str], Path], servers: list[JudgeServer]
) -> None:
    path = panel_eval("any")
    panel = load_eval(path).graders[0].panel
    assert panel is not None
    lines = panel.plan_lines(2)
    assert lines[0].startswith("any of 3 judges (--model does not replace a panel's judges")
    assert lines[1] == f"judge-a at {servers[0].url}: 2 judgment(s) = 2 request(s)"
    assert panel.plan_lines(2, votes=3, pairwise=True)[2] == (
        f"judge-b at {servers[1].url}: 2 judgment(s) x 3 votes x 2 orders = up to 12 request(s)"
    )
    result = CliRunner().invoke(main, ["eval", str(path), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert f"    judge-a at {servers[0].url}: 2 judgment(s) = 2 request(s)" in result.output
    assert "(default judge model)" not in result.output
    assert [s.request_count for s in servers] == [0, 0, 0]


def test_batch_refuses_a_panel(
    panel_eval: Callable[[str], Path], servers: list[JudgeServer], tmp_path: Path
) -> None:
    path = panel_eval("majority")
    out = str(tmp_path / "results.jsonl")
    live = CliRunner().invoke(main, ["eval", str(path), "--batch", "--out", out])
    offline = CliRunner().invoke(main, ["batch", "prepare", str(path), "--to", out + ".batch"])
    for result in (live, offline):
        assert result.exit_code == 2, result.output
        assert "a judge panel cannot be judged through" in result.stderr
    assert [s.request_count for s in servers] == [0, 0, 0]

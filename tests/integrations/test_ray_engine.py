"""`rubriclib eval --engine ray` on the session's Ray cluster (`ray_cluster`: the docs' head and
worker node, started once) against the scripted judge, beside `--engine local` on the same eval
file: the docs' cluster command gives the same results file, report and exit code; the docs'
`--engine ray` run (finding the cluster by RAY_ADDRESS), stopped by SIGINT mid-run, keeps
whole lines, and its `--resume` judges exactly what is missing. Three Ray runs, each a job
whose actors start anew: about a minute on a quiet 2-core machine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import KEYWORD_RUBRIC, keyword_responder, snippet
from judge_server import JudgeServer, Reply
from ray_cluster import RayCluster

ROWS = 30
EVAL = """\
name: engines
dataset: rows.jsonl
judge: {model: judge-model}
graders:
  - name: words
    rubric: keywords.md
  - name: warm
    rubric: keywords.md
    judge: {temperature: 0.5}
gate:
  words: {min_pass_rate: 0.5}
"""
RUN = json.loads((Path(__file__).parent.parent / "data" / "runs" / "openai_chat.json").read_text())


def rows() -> list[dict[str, Any]]:
    """Rows that pass and fail by keyword, one the judge answers without a verdict (an error
    result) and one agent run (sent to the workers as JSON)."""
    found: list[dict[str, Any]] = [
        {"id": f"r{n}", "output": f"verdict:{'pass' if n % 3 else 'fail'} row {n}"}
        for n in range(ROWS)
    ]
    found[4]["output"] = "verdict:text row 4"
    found[7] |= {"transcript": RUN, "team": "support"}
    return found


def pairs(lines: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(line["row"], line["grader"]) for line in lines]


def results_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of a results file, each whole (JSON, ended by a newline)."""
    text = path.read_text()
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def judged(line: dict[str, Any]) -> dict[str, Any]:
    """A line as what was judged: all but how long its requests took and the folder its
    rubric was read from (the same text: its digest is kept)."""
    result = json.loads(json.dumps(line["result"]))
    result["details"]["judge"].pop("latency_ms", None)
    result["details"]["rubric"].pop("source")
    return line | {"result": result}


def by_pair(lines: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Each row and grader's last line (its current one), as what was judged."""
    return {(line["row"], line["grader"]): judged(line) for line in lines}


def report_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """What a report says of the graders and the gate: the lines naming either."""
    return [line for line in done.stdout.splitlines() if line.startswith(("words", "warm", "  "))]


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, ray_cluster: RayCluster
) -> Iterator[dict[str, Any]]:
    """`--engine local`, the docs' cluster command, and (in another folder) the docs'
    `--engine ray` run interrupted then resumed, on one eval file."""
    work = tmp_path_factory.mktemp("engines")
    again = work / "again"
    for folder in (work, again):
        folder.mkdir(exist_ok=True)
        (folder / "keywords.md").write_text(KEYWORD_RUBRIC)
        (folder / "eval.yaml").write_text(EVAL)
        (folder / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows()))
    found: dict[str, Any] = {"work": work, "again": again}
    with JudgeServer() as server:
        server.responder = keyword_responder()
        driver = ray_cluster.env | {
            "OPENAI_BASE_URL": server.url,
            "RUBRICLIB_CACHE_DIR": str(work / "cache"),
        }

        def run(name: str, arguments: list[str], where: Path, env: dict[str, str]) -> None:
            before = server.request_count
            done = ray_cluster.run_rubriclib(arguments, where, env)
            found[name] = (done, server.request_count - before)

        local = ["eval", "eval.yaml", "--out", "local.jsonl", "--no-cache", "--concurrency", "2"]
        run("local", local, work, driver)
        [on_cluster] = ray_cluster.commands  # the docs' multi-node command, --address HEAD
        run("cluster", on_cluster, work, driver)
        first, resumed = [
            line[2:].split("#")[0].split()[1:]
            for line in snippet("eval-ray").splitlines()
            if line.startswith("$ ")
        ]
        extra = ["--no-cache", "--concurrency", "2"]
        found_by_address = driver | {"RAY_ADDRESS": ray_cluster.address}
        server.latency = 0.3  # slow enough to stop it mid-run
        signalled = threading.Event()
        server.responder = held_until(signalled)
        found["interrupted"] = interrupted(
            ray_cluster.rubriclib(first + extra), again, found_by_address, ray_cluster, signalled
        )
        run("resumed", resumed + extra, again, found_by_address)
    yield found


def held_until(signalled: threading.Event) -> Callable[[dict[str, Any]], Reply]:
    """The keyword judge, holding its answers about the last two rows until `signalled`: the
    run cannot end before its interrupt (Ray may hand back the other batches all at once)."""
    answer = keyword_responder()

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        if f"row {ROWS - 2}" in user or f"row {ROWS - 1}" in user:
            signalled.wait(timeout=300)
        return answer(body)

    return respond


def interrupted(
    command: list[str],
    work: Path,
    env: dict[str, str],
    cluster: RayCluster,
    signalled: threading.Event,
) -> tuple[int, str, int, int]:
    """`command` with its judging actors killed (SIGKILL) once it wrote its first verdicts,
    and stopped by SIGINT once it wrote more (`signalled` then set): its exit code, stderr,
    the actors killed and the lines it wrote."""
    out = work / "results.jsonl"
    with subprocess.Popen(  # noqa: S603 - our own command
        command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        wait_for_verdicts(process, out, 2)
        actors = cluster.judging_actors()
        for actor in actors:
            os.kill(actor, signal.SIGKILL)
        wait_for_verdicts(process, out, verdicts(out) + 4)  # from the actors Ray restarted
        process.send_signal(signal.SIGINT)
        signalled.set()
        _, stderr = process.communicate(timeout=300)
    return process.returncode, stderr, len(actors), len(out.read_text().splitlines())


def wait_for_verdicts(process: subprocess.Popen[str], out: Path, count: int) -> None:
    deadline = time.monotonic() + 600
    while verdicts(out) < count:
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{count} verdicts never came:\n{process.communicate()[1][-3000:]}")
        time.sleep(0.1)


def verdicts(path: Path) -> int:
    """Lines of a results file holding a verdict, so far."""
    text = path.read_text() if path.exists() else ""
    return text.count('"verdict": "pass"') + text.count('"verdict": "fail"')


JUDGMENTS = 2 * ROWS


def test_the_cluster_run_writes_the_lines_the_local_run_writes(runs: dict[str, Any]) -> None:
    (local, local_sent), (cluster, cluster_sent) = runs["local"], runs["cluster"]
    assert (local.returncode, cluster.returncode) == (0, 0), cluster.stderr[-3000:]
    mine = results_lines(runs["work"] / "results.jsonl")
    theirs = results_lines(runs["work"] / "local.jsonl")
    assert len(mine) == len(theirs) == JUDGMENTS  # one line per row and grader
    assert by_pair(mine) == by_pair(theirs)  # verdicts, reasons, rubric, judge, metadata
    assert by_pair(mine)["r4", "words"]["verdict"] == "error"  # failures are data alike
    assert by_pair(mine)["r7", "warm"]["metadata"] == {"team": "support"}
    assert cluster_sent == local_sent  # nothing judged twice


def test_the_cluster_run_prints_the_local_report(runs: dict[str, Any]) -> None:
    (local, _), (cluster, _) = runs["local"], runs["cluster"]
    assert cluster.stdout == local.stdout
    assert "UNDECIDED" not in local.stdout and "PASSED" in local.stdout


def test_an_interrupted_ray_run_keeps_whole_lines_and_exits_130(runs: dict[str, Any]) -> None:
    code, stderr, _, written = runs["interrupted"]
    assert code == 130, stderr[-3000:]
    assert "rubriclib: interrupted by SIGINT; results so far are kept" in stderr
    assert "Traceback" not in stderr
    lines = results_lines(runs["again"] / "results.jsonl")[:written]  # each whole
    assert 4 <= len(lines) < JUDGMENTS


def test_judging_actors_killed_mid_run_are_restarted_and_judge_on(runs: dict[str, Any]) -> None:
    """Ray restarts a killed actor and judges its batch again; each actor keeps its own share
    of the pace, so none waits on slots a dead one held."""
    _, _, killed, written = runs["interrupted"]
    assert killed >= 1
    lines = results_lines(runs["again"] / "results.jsonl")[:written]
    assert {line["row"] for line in lines if line["verdict"] == "error"} <= {"r4"}
    assert len(set(pairs(lines))) == len(lines)  # none twice


def test_a_resumed_ray_run_judges_exactly_what_the_interrupt_left(runs: dict[str, Any]) -> None:
    (resumed, sent), (local, local_sent) = runs["resumed"], runs["local"]
    _, _, _, written = runs["interrupted"]
    assert resumed.returncode == local.returncode == 0, resumed.stderr[-3000:]
    lines = results_lines(runs["again"] / "results.jsonl")
    kept = {pair for pair, line in by_pair(lines[:written]).items() if line["verdict"] != "error"}
    again = [(line["row"], line["grader"]) for line in lines[written:]]
    assert len(again) == len(set(again)) == JUDGMENTS - len(kept)  # the rest, each once
    assert not kept & set(again)  # nothing with a verdict judged twice
    assert sent == local_sent - len(kept)  # (an error is judged again, as locally)
    assert by_pair(lines) == by_pair(results_lines(runs["work"] / "local.jsonl"))
    assert report_lines(resumed) == report_lines(local)


def test_the_cluster_is_the_docs_two_nodes_started_by_their_commands(
    ray_cluster: RayCluster,
) -> None:
    assert ray_cluster.recipe == snippet("ray-cluster")
    assert len(ray_cluster.nodes) == 2 and all(node.poll() is None for node in ray_cluster.nodes)
    assert ray_cluster.commands == [
        ["eval", "eval.yaml", "--out", "results.jsonl", "--engine", "ray"]
        + ["--address", ray_cluster.address]
    ]

"""Batch judging: offline request and output files, `eval --batch` against a fake Batch API,
resume without resubmitting, status and cancel, failures as error results, the estimate."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_server import BatchServer
from click.testing import CliRunner
from conftest import SECRET_KEY, VERSUS, keyword_responder, prefers
from judge_server import JudgeServer, Reply, as_json_answer, tool_reply

from rubriclib.batch.files import Recorder
from rubriclib.batch.judges import batch_judges
from rubriclib.cli import main
from rubriclib.item import Item
from rubriclib.judging.judge import Judge
from rubriclib.rubrics.registry import load_rubric

ROWS = [
    {"id": "r1", "output": "verdict:pass one"},
    {"id": "r2", "output": "verdict:fail two"},
    {"id": "r3", "output": "verdict:pass three"},
]
EVAL = """\
name: kw
dataset: rows.jsonl
judge: {model: judge-model}
graders:
  - name: kw
    rubric: keywords
"""


@pytest.fixture
def eval_file(library: Path, write_file: Callable[..., Path]) -> Path:
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    return write_file("eval.yaml", EVAL)


def add_row(eval_file: Path, row: dict[str, Any]) -> None:
    with (eval_file.parent / "rows.jsonl").open("a") as handle:
        handle.write(json.dumps(row) + "\n")


@pytest.fixture
def batch_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[BatchServer]:
    """The fake Batch API as the judge endpoint, answering by keyword, polled fast."""
    with BatchServer(keyword_responder()) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
        monkeypatch.setenv("RUBRICLIB_BATCH_POLL_SECONDS", "0.01")
        yield server


def cli(*arguments: str) -> Any:
    return CliRunner().invoke(main, list(arguments))


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def verdicts(path: Path) -> dict[str, tuple[str, str]]:
    return {line["row"]: (line["verdict"], line["result"]["reason"]) for line in lines_of(path)}


def answer_lines(requests: list[dict[str, Any]], responder: Callable[..., Reply]) -> str:
    """What vllm run-batch (or the Batch API) writes for these request lines."""
    out = []
    for number, request in enumerate(requests):
        reply = responder(request["body"])
        response = {"status_code": reply.status, "request_id": f"req-{number}", "body": reply.body}
        out.append(
            {"id": f"line-{number}", "custom_id": request["custom_id"], "response": response}
        )
    return "".join(json.dumps(line) + "\n" for line in out)


def test_prepared_lines_follow_the_batch_format_and_match_a_live_run(
    eval_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    to = tmp_path / "requests.jsonl"
    result = cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache")  # no key set
    assert result.exit_code == 0, result.output
    assert "3 request(s)" in result.output and "prompt tokens" in result.output
    requests = lines_of(to)
    assert len({line["custom_id"] for line in requests}) == len(requests) == 3
    for line in requests:
        assert set(line) == {"custom_id", "method", "url", "body"}
        assert (line["method"], line["url"]) == ("POST", "/v1/chat/completions")
        assert len(line["custom_id"]) == 64
    with JudgeServer() as live:
        live.responder = keyword_responder()
        monkeypatch.setenv("OPENAI_BASE_URL", live.url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
        out = tmp_path / "live.jsonl"
        assert cli("eval", str(eval_file), "--out", str(out), "--no-cache").exit_code == 0
        sent = sorted(json.dumps(body, sort_keys=True) for body in live.requests)
    assert sorted(json.dumps(line["body"], sort_keys=True) for line in requests) == sent


def test_prepare_then_collect_gives_the_live_verdicts(
    eval_file: Path, tmp_path: Path, endpoint: JudgeServer
) -> None:
    add_row(eval_file, {"id": "r4", "output": "verdict:text four"})
    live = tmp_path / "live.jsonl"
    cli("eval", str(eval_file), "--out", str(live), "--no-cache")
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    assert cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache").exit_code == 0
    output.write_text(answer_lines(lines_of(to), keyword_responder()))
    result = cli(
        "batch", "collect", str(eval_file), "--from", str(output), "--out", str(results),
        "--no-cache", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 3, result.output  # r4 is an error, and there is no gate
    offline, online = verdicts(results), verdicts(live)
    assert (
        {row: v for row, (v, _) in offline.items() if row != "r4"}
        == {row: v for row, (v, _) in online.items() if row != "r4"}
        == {"r1": "pass", "r2": "fail", "r3": "pass"}
    )
    verdict, reason = offline["r4"]
    assert verdict == "error" and "corrective turn" in reason and "eval --batch" in reason
    assert "0 problem(s)" in result.output


def test_collect_refuses_to_empty_a_results_file_unless_forced(
    eval_file: Path, tmp_path: Path
) -> None:
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    assert cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache").exit_code == 0
    output.write_text(answer_lines(lines_of(to), keyword_responder()))
    collect = ["batch", "collect", str(eval_file), "--from", str(output), "--out", str(results)]
    results.write_text('{"row": "mine", "grader": "kw"}\n')
    refused = cli(*collect, "--no-cache")
    assert refused.exit_code == 2 and refused.stderr == (
        f"rubriclib: error: --out: {results} already holds results; pass --force to replace it, "
        "or name another file\n"
    )
    assert results.read_text() == '{"row": "mine", "grader": "kw"}\n'
    forced = cli(*collect, "--no-cache", "--force")
    assert forced.exit_code == 0, forced.output
    assert {row: v for row, (v, _) in verdicts(results).items()} == {
        "r1": "pass",
        "r2": "fail",
        "r3": "pass",
    }


def test_collect_reports_unknown_duplicate_and_missing_answers(
    eval_file: Path, tmp_path: Path
) -> None:
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    assert cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache").exit_code == 0
    requests = lines_of(to)
    answered = answer_lines(requests[:2], keyword_responder()).splitlines()  # the 3rd: missing
    stranger = json.loads(answered[0]) | {"custom_id": "not-a-request"}
    output.write_text("\n".join([*answered, answered[0], json.dumps(stranger), "{oops"]) + "\n")
    result = cli(
        "batch", "collect", str(eval_file), "--from", str(output), "--out", str(results),
        "--no-cache",
    )  # fmt: skip
    missing = requests[2]["custom_id"]
    assert (
        f"out.jsonl:3: duplicate answer for {requests[0]['custom_id']} (out.jsonl:1 is used)"
        in (result.output)
    )
    assert "out.jsonl:4: not-a-request matches no request of this eval" in result.output
    assert "out.jsonl:5: not JSON" in result.output
    assert f"out.jsonl: no answer for request {missing}" in result.output
    by_row = verdicts(results)
    assert sorted(v for v, _ in by_row.values()) == ["error", "fail", "pass"]
    assert any(v == "error" and missing in reason for v, reason in by_row.values())


def test_eval_batch_judges_through_the_batch_api_and_writes_no_key(
    eval_file: Path, tmp_path: Path, batch_api: BatchServer
) -> None:
    out = tmp_path / "results.jsonl"
    result = cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache")
    assert result.exit_code == 0, result.output
    assert {row: v for row, (v, _) in verdicts(out).items()} == {
        "r1": "pass", "r2": "fail", "r3": "pass",
    }  # fmt: skip
    assert len(batch_api.submissions) == 1
    assert all(line["url"] == "/v1/chat/completions" for line in batch_api.request_lines)
    assert "submitted 3 request(s)" in result.output and "completed, 3/3 done" in result.output
    state = json.loads((tmp_path / "results.jsonl.batch.json").read_text())
    assert [b["status"] for b in state["batches"]] == ["completed"]
    assert state["batches"][0]["api_key_env"] == "OPENAI_API_KEY"
    assert set(batch_api.authorizations) == {f"Bearer {SECRET_KEY}"}  # the key was used ...
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".output.jsonl") for p in written)
    for path in written:  # ... and is in no file written, and not in the output
        assert SECRET_KEY not in path.read_text(errors="replace"), path
    assert SECRET_KEY not in result.output


def test_a_run_killed_after_submitting_resumes_by_polling_the_same_batch(
    eval_file: Path, tmp_path: Path, batch_api: BatchServer
) -> None:
    batch_api.polls_to_finish = 10**6  # the batch never finishes while the first run waits
    out = tmp_path / "results.jsonl"
    state = tmp_path / "results.jsonl.batch.json"
    command = [sys.executable, "-c", "from rubriclib.cli import main; main()"]
    environment = dict(os.environ, RUBRICLIB_BATCH_POLL_SECONDS="0.05")
    run = subprocess.Popen(
        [*command, "eval", str(eval_file), "--out", str(out), "--batch", "--no-cache"],
        env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not (state.exists() and json.loads(state.read_text())["batches"]):
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.05)
    run.send_signal(signal.SIGTERM)
    assert run.wait(timeout=30) == 143
    assert batch_api.submissions == ["batch-2"]
    refused = cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache")
    assert refused.exit_code == 2 and "still running" in refused.output
    batch_api.polls_to_finish = 1
    result = cli("eval", str(eval_file), "--out", str(out), "--batch", "--resume", "--no-cache")
    assert result.exit_code == 0, result.output
    assert batch_api.submissions == ["batch-2"]  # exactly one submission, polled again
    assert "recorded by an earlier run" in result.output
    assert sorted(v for v, _ in verdicts(out).values()) == ["fail", "pass", "pass"]
    downloads = len(batch_api.downloads)
    again = cli("eval", str(eval_file), "--out", str(out), "--batch", "--resume", "--no-cache")
    assert again.exit_code == 0 and len(batch_api.downloads) == downloads  # nothing fetched twice


def test_status_and_cancel_follow_the_recorded_batches(
    eval_file: Path, tmp_path: Path, batch_api: BatchServer
) -> None:
    batch_api.polls_to_finish = 10**6
    uploaded = batch_api.upload(b'{"custom_id": "x", "body": {}}\n', "requests.jsonl")
    created = batch_api.create(
        {
            "input_file_id": uploaded["id"],
            "endpoint": "/v1/chat/completions",
            "completion_window": "24h",
        }
    )
    state = tmp_path / "results.jsonl.batch.json"
    record = {"id": created["id"], "status": "validating", "endpoint": batch_api.url,
              "api_key_env": "OPENAI_API_KEY", "model": "judge-model", "custom_ids": ["x"]}  # fmt: skip
    state.write_text(json.dumps({"version": 1, "batches": [record]}))
    status = cli("batch", "status", str(tmp_path / "results.jsonl"))
    assert status.exit_code == 0, status.output
    assert (
        f"{created['id']}  in_progress  0/1 done" in status.output
        and "1 not finished" in status.output
    )
    cancelled = cli("batch", "cancel", "--state", str(state))
    assert cancelled.exit_code == 0, cancelled.output
    assert batch_api.batches[created["id"]]["status"] == "cancelling"
    assert cli("batch", "status", "--state", str(state)).exit_code == 0
    assert json.loads(state.read_text())["batches"][0]["status"] == "cancelled"
    assert SECRET_KEY not in state.read_text() + status.output + cancelled.output


@pytest.mark.parametrize(
    ("script", "cause"),
    [
        ("expired", "the batch expired"),
        ("failed", "scripted validation failure"),
        ("error-lines", "the batch answered server_error: scripted line failure"),
        ("http-500", "HTTP 500"),
    ],
)
def test_failed_and_expired_requests_become_error_results_naming_the_cause(
    eval_file: Path, tmp_path: Path, batch_api: BatchServer, script: str, cause: str
) -> None:
    failing = "verdict:fail"  # the row whose request fails, where only some do
    if script in ("expired", "failed"):
        batch_api.outcome = [script]
    elif script == "error-lines":
        error = {"error": {"code": "server_error", "message": "scripted line failure"}}
        batch_api.line_error = lambda body: error if failing in json.dumps(body) else None
    else:
        answer = keyword_responder()

        def responder(body: dict[str, Any]) -> Reply:
            if failing in json.dumps(body):
                return Reply(500, {"error": {"message": "scripted crash"}})
            return answer(body)

        batch_api.responder = responder
    out = tmp_path / "results.jsonl"
    result = cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache")
    assert result.exit_code == 3, result.output
    by_row = verdicts(out)
    broken = ["r1", "r2", "r3"] if script in ("expired", "failed") else ["r2"]
    for row, (verdict, reason) in by_row.items():
        assert (verdict == "error") == (row in broken), (row, reason)
        if row in broken:
            assert cause in reason
    assert len(batch_api.submissions) == 1  # no retry batch within a run


def test_a_corrective_turn_goes_in_a_second_batch(
    eval_file: Path, tmp_path: Path, batch_api: BatchServer
) -> None:
    add_row(eval_file, {"id": "r4", "output": "verdict:text four"})
    answer = keyword_responder()

    def responder(body: dict[str, Any]) -> Reply:
        if len(body["messages"]) > 2:  # the corrective turn
            return tool_reply("set_grade", {"reason": "corrected", "verdict": "pass"})
        return answer(body)

    batch_api.responder = responder
    out = tmp_path / "results.jsonl"
    result = cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache")
    assert result.exit_code == 0, result.output
    assert len(batch_api.submissions) == 2
    second = [line for line in batch_api.request_lines if len(line["body"]["messages"]) > 2]
    assert len(second) == 1 and len(batch_api.request_lines) == 5
    line = next(line for line in lines_of(out) if line["row"] == "r4")
    assert line["verdict"] == "pass" and line["result"]["details"]["judge"]["corrected"] is True


def test_votes_and_trials_get_distinct_custom_ids(eval_file: Path, tmp_path: Path) -> None:
    to = tmp_path / "requests.jsonl"
    result = cli("batch", "prepare", str(eval_file), "--to", str(to), "--votes", "3", "--no-cache")
    assert result.exit_code == 0, result.output
    requests = lines_of(to)
    assert len(requests) == 9 and len({line["custom_id"] for line in requests}) == 9
    assert len({json.dumps(line["body"], sort_keys=True) for line in requests}) == 3
    judge = Judge(model="m", base_url="http://127.0.0.1:9/v1", api_key=SECRET_KEY)
    recorder = Recorder()
    judge = batch_judges({"g": judge}, recorder)["g"]
    rubric = load_rubric("keywords")
    for trial in (1, 2):
        asyncio.run(judge.agrade_item(rubric, Item(output="verdict:pass"), trial=trial))
    assert len(recorder.requests) == 2
    assert len({json.dumps(body, sort_keys=True) for body in recorder.requests.values()}) == 1


def test_dry_run_estimates_batch_against_live(eval_file: Path) -> None:
    result = cli(
        "eval", str(eval_file), "--dry-run", "--batch", "--votes", "3",
        "--price-per-million", "1000", "--batch-discount", "0.4",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "batch: 6 to 9 request(s)" in result.output  # 3 judgments x (2 to 3 votes)
    assert "in 3 wave(s)" in result.output
    line = next(text for text in result.output.splitlines() if text.startswith("cost at $1000"))
    found = re.search(r"live about \$([\d.,]+)(?: to \$([\d.,]+))?, batch about \$([\d.,]+)", line)
    assert found, line
    live, batch = (float(found.group(n).replace(",", "")) for n in (1, 3))
    assert live > 0 and batch == pytest.approx(live * 0.4, rel=0.01)
    assert "40% of the live price" in line


def test_a_fresh_run_never_reads_an_earlier_runs_downloads(
    eval_file: Path, tmp_path: Path, batch_api: BatchServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "results.jsonl"
    assert cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache").exit_code == 0
    with BatchServer(lambda body: tool_reply("set_grade_fail", {"reason": "new"})) as other:
        monkeypatch.setenv("OPENAI_BASE_URL", other.url)  # its batch ids start again at batch-2
        result = cli("eval", str(eval_file), "--out", str(out), "--batch", "--force", "--no-cache")
        assert other.submissions == batch_api.submissions == ["batch-2"]
    assert result.exit_code == 0, result.output
    assert {v for v, _ in verdicts(out).values()} == {"fail"}


def test_test_goldens_batch_judges_every_golden_in_one_batch_and_resumes(
    library: Path, tmp_path: Path, batch_api: BatchServer
) -> None:
    out = tmp_path / "goldens.json"
    arguments = ["test-goldens", "keywords", "--batch", "--no-cache", "--format", "json"]
    result = cli(*arguments, "--out", str(out))
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert [g["verdicts"] for g in report["rubrics"][0]["goldens"]] == [["pass"], ["fail"]]
    assert len(batch_api.submissions) == 1 and len(batch_api.request_lines) == 2
    state = json.loads((tmp_path / "goldens.json.batch.json").read_text())
    assert [b["status"] for b in state["batches"]] == ["completed"]
    resumed = cli(*arguments, "--out", str(out), "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert len(batch_api.submissions) == 1  # polled the recorded batch; nothing resubmitted
    assert SECRET_KEY not in result.output + resumed.output


def test_test_goldens_batch_needs_an_out_file_and_resume_needs_batch(library: Path) -> None:
    assert "--batch needs --out" in cli("test-goldens", "keywords", "--batch").output
    assert "--resume resumes a --batch run" in cli("test-goldens", "keywords", "--resume").output


PAIRWISE_ROWS = [
    {"id": "p1", "input": "q", "output": "GOOD answer", "baseline": "meh"},
    {"id": "p2", "input": "q", "output": "so-so", "baseline": "GOOD reply"},
    {"id": "p3", "input": "q", "output": "plain", "baseline": "also plain"},
]


@pytest.fixture
def pairwise_eval(library: Path, write_file: Callable[..., Path]) -> Path:

    (library / "versus.md").write_text(VERSUS)
    write_file("pairs.jsonl", "".join(json.dumps(row) + "\n" for row in PAIRWISE_ROWS))
    return write_file(
        "pairwise.yaml",
        "name: ab\ndataset: pairs.jsonl\njudge: {model: judge-model}\n"
        "graders:\n  - name: prefer\n    rubric: versus\n",
    )


def winners(path: Path) -> dict[str, tuple[str, Any]]:
    return {
        line["row"]: (line["verdict"], line["result"]["details"].get("winner"))
        for line in lines_of(path)
    }


def test_prepare_then_collect_judges_a_pairwise_rubric_in_both_orders(
    pairwise_eval: Path, tmp_path: Path, endpoint: JudgeServer
) -> None:

    endpoint.responder = prefers("GOOD")
    live = tmp_path / "live.jsonl"
    assert cli("eval", str(pairwise_eval), "--out", str(live), "--no-cache").exit_code in (0, 1)
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    prepared = cli("batch", "prepare", str(pairwise_eval), "--to", str(to), "--no-cache")
    assert prepared.exit_code == 0, prepared.output
    requests = lines_of(to)
    assert len(requests) == 6  # both orders of every row
    assert sorted(json.dumps(line["body"], sort_keys=True) for line in requests) == sorted(
        json.dumps(body, sort_keys=True) for body in endpoint.requests
    )
    output.write_text(answer_lines(requests, prefers("GOOD")))
    result = cli(
        "batch", "collect", str(pairwise_eval), "--from", str(output), "--out", str(results),
        "--no-cache",
    )  # fmt: skip
    assert "6 answer(s) used, 0 unused" in result.output and "0 problem(s)" in result.output
    offline = winners(results)
    assert offline == winners(live)
    assert [offline[row][0] for row in ("p1", "p2", "p3")] == ["pass", "fail", "fail"]
    assert not any("corrective turn" in reason for _, reason in verdicts(results).values())


TARGET_EVAL = """\
name: written
dataset: rows.jsonl
target: {model: writer-model}
judge: {model: judge-model}
graders:
  - name: kw
    rubric: keywords
"""


def test_batch_refuses_an_eval_with_a_target_before_any_request(
    eval_file: Path, tmp_path: Path, endpoint: JudgeServer
) -> None:
    eval_file.write_text(TARGET_EVAL)
    out = tmp_path / "results.jsonl"
    runs = [
        cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache"),
        cli("eval", str(eval_file), "--dry-run", "--batch"),
        cli("batch", "prepare", str(eval_file), "--to", str(tmp_path / "req.jsonl")),
    ]
    for result in runs:
        assert result.exit_code == 2, result.output
        [line] = result.stderr.splitlines()
        assert "outputs come from a target model" in line and "run it live" in line
    assert runs[0].stderr.startswith("rubriclib: error: --batch: ")
    assert endpoint.request_count == 0
    assert not (tmp_path / "results.jsonl.batch.json").exists()
    assert not (tmp_path / "req.jsonl").exists()


@pytest.mark.parametrize("missing", ["id", "endpoint"])
def test_status_and_cancel_name_a_state_files_missing_field(
    tmp_path: Path, batch_api: BatchServer, missing: str
) -> None:
    record = {"id": "batch-9", "status": "in_progress", "endpoint": batch_api.url,
              "api_key_env": "OPENAI_API_KEY", "custom_ids": ["x"]}  # fmt: skip
    del record[missing]
    state = tmp_path / "results.jsonl.batch.json"
    state.write_text(json.dumps({"version": 1, "batches": [record]}))
    for command in ("status", "cancel"):
        result = cli("batch", command, "--state", str(state))
        assert result.exit_code == 2, result.output
        [line] = result.stderr.splitlines()
        assert str(state) in line and f"batches[0].{missing}" in line, line
    assert "Traceback" not in result.output and not batch_api.batches


def test_dry_run_counts_both_orders_of_a_pairwise_grader(pairwise_eval: Path) -> None:
    result = cli("eval", str(pairwise_eval), "--dry-run", "--batch", "--votes", "3")
    assert result.exit_code == 0, result.output
    assert "batch: 12 to 18 request(s)" in result.output  # 3 judgments x 2-3 votes x 2 orders
    assert "in 6 wave(s)" in result.output  # the swapped order waits for the first


PANEL_GRADER = """\
  - name: panel
    rubric: keywords
    judges:
      - {model: judge-a}
      - {model: judge-b}
"""


def test_dry_run_batch_refuses_a_panel(eval_file: Path) -> None:
    eval_file.write_text(EVAL + PANEL_GRADER)
    result = cli("eval", str(eval_file), "--dry-run", "--batch")
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert "grader panel: a judge panel cannot be judged through a batch" in line
    assert "batch:" not in result.stdout
    assert cli("eval", str(eval_file), "--dry-run").exit_code == 0  # live is fine


def test_a_refused_fresh_run_keeps_the_earlier_state_and_downloads(
    eval_file: Path, tmp_path: Path, batch_api: BatchServer
) -> None:
    out = tmp_path / "results.jsonl"
    assert cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache").exit_code == 0
    state = tmp_path / "results.jsonl.batch.json"
    files = tmp_path / "results.jsonl.batch.json.files"
    before = {path.name: path.read_bytes() for path in [state, *files.iterdir()]}
    assert any(name.endswith(".output.jsonl") for name in before)
    eval_file.write_text(EVAL + PANEL_GRADER)
    refused = cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache")
    assert refused.exit_code == 2, refused.output
    assert "a judge panel cannot be judged through a batch" in refused.stderr
    after = {path.name: path.read_bytes() for path in [state, *files.iterdir()]}
    assert after == before
    assert batch_api.submissions == ["batch-2"]


def test_prepare_removes_stale_numbered_request_files(eval_file: Path, tmp_path: Path) -> None:
    from rubriclib.batch.files import write_requests

    to = tmp_path / "requests.jsonl"
    bodies = {f"id-{n}": {"model": "m", "messages": []} for n in range(3)}
    written = write_requests(bodies, to, max_requests=1)
    assert [path.name for path in written] == [
        "requests.jsonl", "requests-2.jsonl", "requests-3.jsonl",
    ]  # fmt: skip
    kept = ["requests-x.jsonl", "requests-2.jsonl.bak", "other-2.jsonl", "requests-02.txt"]
    for name in kept:
        (tmp_path / name).write_text("keep\n")
    result = cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache")
    assert result.exit_code == 0, result.output
    assert len(lines_of(to)) == 3
    assert not (tmp_path / "requests-2.jsonl").exists()
    assert not (tmp_path / "requests-3.jsonl").exists()
    assert all((tmp_path / name).read_text() == "keep\n" for name in kept)


@pytest.mark.parametrize(
    ("status", "body", "first_line"),
    [
        (404, b"404 page not found\nno route /v1/files", "404 page not found"),
        (400, b'{"error": {"message": "Unknown endpoint: files"}}', "Unknown endpoint: files"),
    ],
)
def test_an_endpoint_that_refuses_the_batch_upload_is_one_line_and_no_state(
    eval_file: Path,
    tmp_path: Path,
    batch_api: BatchServer,
    status: int,
    body: bytes,
    first_line: str,
) -> None:
    out = tmp_path / "results.jsonl"
    assert cli("eval", str(eval_file), "--out", str(out), "--batch", "--no-cache").exit_code == 0
    state = tmp_path / "results.jsonl.batch.json"
    assert state.exists()  # an earlier run's batches: this run's refusal must not keep them
    batch_api.refuse_uploads = (status, body)
    result = cli("eval", str(eval_file), "--out", str(out), "--batch", "--force", "--no-cache")
    assert result.exit_code == 3, result.output
    refusals = [line for line in result.stderr.splitlines() if "refused the batch upload" in line]
    assert len(refusals) == 1, result.stderr
    assert f"HTTP {status}" in refusals[0] and first_line in refusals[0]
    assert "does this endpoint support the Batch API?" in refusals[0]
    assert "body is not JSON" not in result.output and "no route" not in result.output
    assert not state.exists() and len(batch_api.submissions) == 1


def test_prepare_and_collect_agree_wherever_the_environment_points(
    eval_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The custom_ids of an offline batch name no endpoint: prepare with no OPENAI_BASE_URL,
    collect with one set (or another), and every answer is found."""
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache").exit_code == 0
    output.write_text(answer_lines(lines_of(to), keyword_responder()))
    for base_url in ("http://127.0.0.1:9/v1", "https://elsewhere.example/v1"):
        monkeypatch.setenv("OPENAI_BASE_URL", base_url)
        result = cli(
            "batch", "collect", str(eval_file), "--from", str(output), "--out", str(results),
            "--force", "--no-cache",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        assert {row: v for row, (v, _) in verdicts(results).items()} == {
            "r1": "pass",
            "r2": "fail",
            "r3": "pass",
        }


def test_collect_with_another_model_says_what_changed_since_prepare(
    eval_file: Path, tmp_path: Path
) -> None:
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    assert cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache").exit_code == 0
    answers = [
        json.loads(line) for line in answer_lines(lines_of(to), keyword_responder()).splitlines()
    ]
    for answer in answers:
        answer["response"]["body"]["model"] = "judge-model-2026-01-01"
    output.write_text("".join(json.dumps(answer) + "\n" for answer in answers))
    result = cli(
        "batch", "collect", str(eval_file), "--from", str(output), "--out", str(results),
        "--no-cache", "--model", "other-judge",
    )  # fmt: skip
    assert result.exit_code != 0
    assert (
        "out.jsonl: 3 answer(s) match no request of this run and 3 request(s) have no answer: "
        "the requests changed since `batch prepare`"
    ) in result.output
    assert (
        "(out.jsonl answers model judge-model-2026-01-01; this run asks other-judge)"
        in result.output
    )


def test_a_run_is_sent_through_a_batch_file_as_it_is_live_cut_the_same_way(
    library: Path, write_file: Callable[..., Path], tmp_path: Path, endpoint: JudgeServer
) -> None:
    call = {"id": "c", "function": {"name": "fetch", "arguments": '{"page": 1}'}}
    run = [
        {"role": "user", "content": "fetch it"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c", "content": "é" * 20_000},
        {"role": "assistant", "content": "verdict:pass fetched"},
    ]
    write_file("rows.jsonl", json.dumps({"id": "r1", "transcript": run}) + "\n")
    eval_file = write_file(
        "eval.yaml",
        EVAL.replace("judge-model}", "judge-model, max_prompt_tokens: 3000, evidence: whole}"),
    )
    live = tmp_path / "live.jsonl"
    assert cli("eval", str(eval_file), "--out", str(live), "--no-cache").exit_code == 0
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    assert cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache").exit_code == 0
    [request] = lines_of(to)
    assert request["body"]["messages"] == endpoint.requests[0]["messages"]
    assert "characters cut ...]" in request["body"]["messages"][1]["content"]
    output.write_text(answer_lines([request], keyword_responder()))
    collected = cli(
        "batch",
        "collect",
        str(eval_file),
        "--from",
        str(output),
        "--out",
        str(results),
        "--no-cache",
    )
    assert collected.exit_code == 0, collected.output
    [line] = lines_of(results)
    assert line["verdict"] == "pass"
    assert (
        line["result"]["details"]["transcript"]
        == lines_of(live)[0]["result"]["details"]["transcript"]
    )
    assert line["result"]["details"]["transcript"]["cut"][0]["block"] == "M3"


def test_a_batch_file_keeps_each_verdict_s_checked_citations(
    eval_file: Path, tmp_path: Path
) -> None:
    def citing(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        word = re.search(r"verdict:pass (\w+)|verdict:fail (\w+)", user)
        quote = word.group(0) if word else "nothing"
        cited = [{"block": "output", "quote": quote}, {"block": "output", "quote": "invented"}]
        name = "set_grade_pass" if "verdict:pass" in user else "set_grade_fail"
        return tool_reply(name, {"reason": "as cited", "citations": cited})

    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    assert cli("batch", "prepare", str(eval_file), "--to", str(to), "--no-cache").exit_code == 0
    output.write_text(answer_lines(lines_of(to), citing))
    result = cli(
        "batch", "collect", str(eval_file), "--from", str(output), "--out", str(results),
        "--no-cache",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for line in lines_of(results):
        first, second = line["result"]["details"]["citations"]
        assert first["status"] == "verified" and first["quote"].startswith("verdict:")
        assert second == {"block": "output", "quote": "invented", "status": "unverified"}


TRIAGE = """\
---
name: triage
version: 1.0.0
scale: labels
description: Whether a support reply resolves the ticket.
labels: {resolved: pass, partly-resolved: fail, not-resolved: fail}
output:
  severity: {type: string, enum: [low, high]}
---
# Triage

Label the reply and say how severe its worst problem is.
"""


def triage_judge(body: dict[str, Any]) -> Reply:
    """The label the output names (`label:NAME`), a severity by it."""
    label = body["messages"][1]["content"].split("label:", 1)[1].split()[0]
    severity = "low" if label == "resolved" else "high"
    arguments = {"reason": "scripted", "label": label, "severity": severity}
    return tool_reply("set_grade_label", arguments)


def test_prepare_then_collect_keeps_labels_and_output_fields(
    library: Path, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    (library / "triage.md").write_text(TRIAGE)
    rows = [
        {"id": "a", "output": "label:resolved Sent."},
        {"id": "b", "output": "label:not-resolved No."},
    ]
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    eval_path = write_file("eval.yaml", EVAL.replace("rubric: keywords", "rubric: triage"))
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    assert cli("batch", "prepare", str(eval_path), "--to", str(to), "--no-cache").exit_code == 0
    [tool] = lines_of(to)[0]["body"]["tools"]
    assert list(tool["function"]["parameters"]["properties"]) == [
        "reason",
        "citations",
        "severity",
        "label",
    ]
    output.write_text(answer_lines(lines_of(to), triage_judge))
    ran = cli(
        "batch", "collect", str(eval_path), "--from", str(output), "--out", str(results),
        "--no-cache",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    details = {line["row"]: line["result"]["details"] for line in lines_of(results)}
    assert {row: (d["label"], d["output"]["severity"]) for row, d in details.items()} == {
        "a": ("resolved", "low"),
        "b": ("not-resolved", "high"),
    }
    assert {line["row"]: line["verdict"] for line in lines_of(results)} == {
        "a": "pass",
        "b": "fail",
    }


def test_a_batch_in_the_json_protocol_asks_and_reads_as_a_live_run(
    eval_file: Path, tmp_path: Path, endpoint: JudgeServer
) -> None:
    """Batch files and live runs share request building and reply reading in both protocols:
    `--protocol json` lines carry the response format, and their JSON answers read alike."""
    live = tmp_path / "live.jsonl"
    json_flags = ("--no-cache", "--protocol", "json")
    assert cli("eval", str(eval_file), "--out", str(live), *json_flags).exit_code in (0, 1)
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    assert cli("batch", "prepare", str(eval_file), "--to", str(to), *json_flags).exit_code == 0
    requests = lines_of(to)
    assert all(
        "response_format" in line["body"] and "tools" not in line["body"] for line in requests
    )
    assert sorted(json.dumps(line["body"], sort_keys=True) for line in requests) == sorted(
        json.dumps(body, sort_keys=True) for body in endpoint.requests
    )
    responder = keyword_responder()
    output.write_text(answer_lines(requests, lambda body: as_json_answer(body, responder(body))))
    collect = ["batch", "collect", str(eval_file), "--from", str(output), "--out", str(results)]
    assert cli(*collect, *json_flags).exit_code in (0, 1)
    assert verdicts(results) == verdicts(live)
    assert {v for v, _ in verdicts(results).values()} == {"pass", "fail"}

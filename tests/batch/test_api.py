"""The Batch API transport on its own, against the fake Batch API on 127.0.0.1: a wave of
requests becomes one batch per model, each answered by its custom_id, the state file records
it without the key, a resumed run polls instead of submitting again, failures answer every
request they touch, and the status and cancel refresh. (`eval --batch` and `test-goldens
--batch` end to end are in tests/test_batch.py.)"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_server import BatchServer
from conftest import SECRET_KEY
from judge_server import Reply

from rubriclib.batch.api import BatchTransport, api_key_for, refresh
from rubriclib.batch.api_run import BatchRun
from rubriclib.batch.files import MAX_REQUESTS, BatchState, state_path
from rubriclib.errors import JudgeConfigError
from rubriclib.judging.endpoints.failures import EndpointError, EndpointUnusable


def echo(body: dict[str, Any]) -> Reply:
    """Answers each request with its own question, so an answer shows which request it is."""
    return Reply(body={"answer": body["messages"][0]["content"]})


@pytest.fixture
def server() -> Iterator[BatchServer]:
    with BatchServer(echo) as batches:
        yield batches


def request(question: str, model: str = "judge-model") -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": question}]}


def state_for(tmp_path: Path) -> BatchState:
    return BatchState(state_path(tmp_path / "results.jsonl"))


def transport(server: BatchServer, state: BatchState, **options: Any) -> BatchTransport:
    return BatchTransport(server.url, SECRET_KEY, state, poll_seconds=0.01, **options)


def ask(batch: BatchTransport, requests: dict[str, dict[str, Any]]) -> list[Any]:
    """Post every request at once (one wave) and give each one's answer or failure."""

    async def wave() -> list[Any]:
        try:
            posts = (batch.post(body, timeout=5, custom_id=cid) for cid, body in requests.items())
            return await asyncio.gather(*posts, return_exceptions=True)
        finally:
            await batch.aclose()

    return [
        json.loads(found)["answer"] if isinstance(found, bytes) else found
        for found in asyncio.run(wave())
    ]


def test_a_wave_is_one_batch_per_model_answered_by_custom_id(
    server: BatchServer, tmp_path: Path
) -> None:
    state = state_for(tmp_path)
    said: list[str] = []
    answers = ask(
        transport(server, state, api_key_env="JUDGE_KEY", progress=said.append),
        {"a": request("qa"), "b": request("qb"), "c": request("qc", model="other-model")},
    )
    assert answers == ["qa", "qb", "qc"]
    assert len(server.submissions) == 2
    assert [(b["model"], b["custom_ids"], b["status"]) for b in state.batches] == [
        ("judge-model", ["a", "b"], "completed"),
        ("other-model", ["c"], "completed"),
    ]
    recorded = state.path.read_text()
    assert json.loads(recorded)["batches"][0]["api_key_env"] == "JUDGE_KEY"
    assert SECRET_KEY not in recorded and set(server.authorizations) == {f"Bearer {SECRET_KEY}"}
    assert (state.folder / "requests-1.jsonl").is_file()
    assert any("submitted 2 request(s) for judge-model" in line for line in said)


def test_a_resumed_run_polls_the_recorded_batch_and_submits_nothing(
    server: BatchServer, tmp_path: Path
) -> None:
    ask(transport(server, state_for(tmp_path)), {"a": request("qa")})
    downloads = len(server.downloads)
    said: list[str] = []
    again = transport(server, state_for(tmp_path), resume=True, progress=said.append)
    assert ask(again, {"a": request("qa")}) == ["qa"]
    assert len(server.submissions) == 1 and len(server.downloads) == downloads  # files kept
    assert any("recorded by an earlier run; not sent again" in line for line in said)


@pytest.mark.parametrize(
    ("outcome", "cause"),
    [("expired", "the batch expired (expired)"), ("failed", "scripted validation failure")],
)
def test_a_batch_that_ends_badly_fails_each_of_its_requests(
    server: BatchServer, tmp_path: Path, outcome: str, cause: str
) -> None:
    server.outcome = [outcome]
    failures = ask(transport(server, state_for(tmp_path)), {"a": request("qa"), "b": request("qb")})
    assert all(isinstance(failure, EndpointError) for failure in failures)
    assert all(cause in str(failure) for failure in failures)


def test_an_error_line_fails_only_its_request(server: BatchServer, tmp_path: Path) -> None:
    server.line_error = lambda body: (
        {"error": {"code": "server_error", "message": "line failed"}}
        if "qb" in json.dumps(body)
        else None
    )
    answers = ask(transport(server, state_for(tmp_path)), {"a": request("qa"), "b": request("qb")})
    assert answers[0] == "qa" and isinstance(answers[1], EndpointError)
    assert "server_error: line failed" in str(answers[1])


def test_a_refused_upload_stops_every_request_with_one_cause_and_no_key(
    server: BatchServer, tmp_path: Path
) -> None:
    server.refuse_uploads = (404, f"no such route; key {SECRET_KEY}".encode())
    batch = transport(server, state_for(tmp_path))
    failures = ask(batch, {"a": request("qa"), "b": request("qb")})
    assert all(isinstance(failure, EndpointUnusable) for failure in failures)
    assert batch.refused is not None and batch.refused.startswith(
        "the endpoint refused the batch upload (HTTP 404: "
    )
    assert "does this endpoint support the Batch API?" in batch.refused
    assert SECRET_KEY not in batch.refused and server.submissions == []


def test_a_refused_key_at_upload_names_the_variable_that_holds_it(
    server: BatchServer, tmp_path: Path
) -> None:
    server.refuse_uploads = (401, b'{"error": {"message": "Incorrect API key provided"}}')
    batch = transport(server, state_for(tmp_path), api_key_env="JUDGE_KEY")
    failures = ask(batch, {"a": request("qa")})
    assert all(isinstance(failure, EndpointUnusable) for failure in failures)
    assert batch.refused == (
        "the endpoint refused the batch upload (HTTP 401: Incorrect API key provided): check "
        "the key in JUDGE_KEY"
    )


def test_a_run_starts_every_judgment_of_a_batch_at_once() -> None:
    run = BatchRun({}, [])
    assert [run.in_flight(n) for n in (0, 7, MAX_REQUESTS + 1)] == [1, 7, MAX_REQUESTS]
    assert run.refused() is None


def test_a_recorded_batchs_key_comes_from_the_variable_it_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JUDGE_KEY", "sk-judge-key")
    assert api_key_for({"api_key_env": "JUDGE_KEY"}) == "sk-judge-key"
    assert api_key_for({"endpoint": "http://127.0.0.1:8000/v1"}) == "not-needed"
    with pytest.raises(JudgeConfigError, match="set OPENAI_API_KEY to follow batch b-1"):
        api_key_for({"id": "b-1", "endpoint": "https://api.openai.com/v1"})


def test_refresh_follows_and_cancels_what_is_not_final(
    server: BatchServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    server.polls_to_finish = 10**6
    uploaded = server.upload(b'{"custom_id": "x", "body": {}}\n', "requests.jsonl")
    created = server.create(
        {"input_file_id": uploaded["id"], "endpoint": "/v1/chat/completions",
         "completion_window": "24h"}
    )  # fmt: skip
    state = state_for(tmp_path)
    state.add({"id": created["id"], "status": "validating", "endpoint": server.url})
    state.add({"id": "done-1", "status": "completed", "endpoint": "http://127.0.0.1:9/v1"})
    [followed, done] = asyncio.run(refresh(state))
    assert followed["status"] == "in_progress" and followed["request_counts"]["total"] == 1
    assert done["status"] == "completed"  # final: never asked again (its endpoint is closed)
    asyncio.run(refresh(state, cancel=True))
    assert server.batches[created["id"]]["status"] == "cancelling"
    asyncio.run(refresh(state))
    assert json.loads(state.path.read_text())["batches"][0]["status"] == "cancelled"


def test_refresh_records_a_failure_without_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    state = state_for(tmp_path)
    state.add({"id": "b-9", "status": "in_progress", "endpoint": "http://127.0.0.1:9/v1"})
    [batch] = asyncio.run(refresh(state))
    assert batch["status"] == "in_progress" and batch["last_error"]
    assert SECRET_KEY not in state.path.read_text()

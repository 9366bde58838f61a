"""Judging through a provider's Batch API (OpenAI's; any server with /files and /batches).

`BatchTransport` is a `transport.Transport`: a judge built with it (`api_run.open_batch_run`)
runs every judgment on the engine as it always does, and each request is held instead of sent.
When no new request has arrived for a moment (every judgment in flight waits on the batch: a
wave), the wave is written as request lines (split at 50,000 lines and 200 MB, and by model),
uploaded, submitted, recorded in the state file, polled with backoff, and its output and error
files are downloaded (kept beside the state file) and answer each request by custom_id.
Corrective turns and later votes are simply the next wave. A resumed run polls the batches its
state file records instead of submitting them again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rubriclib.batch.files import (
    ENDPOINT,
    TERMINAL,
    UNSUCCESSFUL,
    BatchState,
    answer_of,
    line_failure,
    read_output,
    request_line,
    split_lines,
)
from rubriclib.config import credential
from rubriclib.errors import JudgeConfigError
from rubriclib.files import write_atomically
from rubriclib.judging import (
    EndpointError,
    EndpointUnusable,
    describe,
    display_url,
    from_sdk,
    redact,
    refused_key,
)

if TYPE_CHECKING:
    import openai

POLL_SECONDS = 10.0
"""The first wait between polls of a batch; each wait grows half again, up to MAX_POLL_SECONDS."""
MAX_POLL_SECONDS = 120.0
Answer = bytes | EndpointError


class BatchTransport:
    """Holds one judge endpoint's requests and sends them as batches; see the module."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        state: BatchState,
        *,
        api_key_env: str | None = None,
        resume: bool = False,
        poll_seconds: float = POLL_SECONDS,
        settle_seconds: float = 0.05,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.base_url = base_url
        self._api_key = api_key
        self.state = state
        self.api_key_env = api_key_env or "OPENAI_API_KEY"
        self.poll_seconds = poll_seconds
        self.settle_seconds = settle_seconds
        self.progress = progress or (lambda text: None)
        self._reusable = state.reusable() if resume else {}
        self._waiting: dict[str, tuple[dict[str, Any], list[asyncio.Future[bytes]]]] = {}
        self._registered = 0
        self._collecting = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._client: openai.AsyncOpenAI | None = None
        self.refused: str | None = None
        """Why the endpoint refused the batch upload (it has no Batch API, most likely): the
        run's one cause, which stopped every judgment before any batch existed."""

    async def post(self, body: dict[str, Any], *, timeout: float, custom_id: str) -> bytes:
        """Wait for this request's answer from the batch its wave goes in."""
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(custom_id, (body, []))[1].append(future)
        self._registered += 1
        if not self._collecting:
            self._collecting = True
            task = asyncio.create_task(self._flush())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await future

    async def _flush(self) -> None:
        """Once no request has arrived for `settle_seconds`, send the wave and answer it."""
        seen = -1
        while seen != self._registered:
            seen = self._registered
            await asyncio.sleep(self.settle_seconds)
        self._collecting = False
        wave, self._waiting = self._waiting, {}
        answers: dict[str, bytes | Exception]
        try:
            answers = dict(await self._run_wave({cid: body for cid, (body, _) in wave.items()}))
        except Exception as error:  # the wave could not be sent or followed at all
            failure = error if isinstance(error, EndpointUnusable) else self._failure(error)
            answers = {custom_id: failure for custom_id in wave}
        for custom_id, (_, futures) in wave.items():
            answer = answers.get(custom_id) or line_failure(f"no answer for request {custom_id}")
            for future in futures:
                if future.done():
                    continue
                if isinstance(answer, bytes):
                    future.set_result(answer)
                else:
                    future.set_exception(answer)

    async def _run_wave(self, wave: dict[str, dict[str, Any]]) -> dict[str, Answer]:
        """Answers for every request of the wave: from recorded batches first (a resumed
        run), then from new ones; a recorded answer that failed is asked once more."""
        recorded: dict[str, list[str]] = {}
        fresh = []
        for custom_id in wave:
            batch = self._reusable.pop(custom_id, None)
            if batch is None:
                fresh.append(custom_id)
            else:
                recorded.setdefault(batch["id"], []).append(custom_id)
        answers: dict[str, Answer] = {}
        batches = [b for b in self.state.batches if b["id"] in recorded]
        for batch in batches:
            self.progress(f"batch {batch['id']}: recorded by an earlier run; not sent again")
        batches += await self._submit(fresh, wave)
        for found in await asyncio.gather(*(self._answers(batch) for batch in batches)):
            answers.update(found)
        again = [cid for ids in recorded.values() for cid in ids if not _ok(answers.get(cid))]
        if again:
            self.progress(f"{len(again)} request(s) an earlier batch did not answer: sent again")
            for found in await asyncio.gather(
                *(self._answers(b) for b in await self._submit(again, wave))
            ):
                answers.update(found)
        return answers

    async def _submit(
        self, ids: list[str], wave: dict[str, dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """Upload and submit these requests (a batch per model and per 50,000 lines / 200 MB),
        recording each batch in the state file as soon as it exists."""
        by_model: dict[str, list[tuple[str, bytes]]] = {}
        for custom_id in ids:
            model = str(wave[custom_id].get("model"))
            by_model.setdefault(model, []).append(
                (custom_id, request_line(custom_id, wave[custom_id]))
            )
        submitted = []
        client = self._sdk()
        for model, lines in by_model.items():
            for chunk in split_lines(lines):
                data = b"".join(line for _, line in chunk)
                name = f"requests-{len(self.state.batches) + 1}.jsonl"
                try:
                    uploaded = await client.files.create(
                        file=(name, data, "application/jsonl"), purpose="batch"
                    )
                except Exception as error:
                    raise self._refusal(error) from None
                created = await client.batches.create(
                    input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h"
                )
                self.state.folder.mkdir(parents=True, exist_ok=True)
                write_atomically(self.state.folder / name, data)
                batch = {
                    "id": created.id,
                    "status": created.status,
                    "endpoint": self.base_url,
                    "api_key_env": self.api_key_env,
                    "model": model,
                    "input_file_id": uploaded.id,
                    "requests_file": name,
                    "submitted_at": round(time.time()),
                    "request_counts": {"total": len(chunk), "completed": 0, "failed": 0},
                    "custom_ids": [custom_id for custom_id, _ in chunk],
                }
                self.state.add(batch)
                self.progress(f"batch {created.id}: submitted {len(chunk)} request(s) for {model}")
                submitted.append(batch)
        return submitted

    async def _answers(self, batch: dict[str, Any]) -> dict[str, Answer]:
        """Poll the batch until it is done, then its answers by custom_id."""
        await self._follow(batch)
        answers: dict[str, Answer] = {}
        for kind in ("output", "error"):
            file_id = batch.get(f"{kind}_file_id")
            if not file_id:
                continue
            name = f"{batch['id']}.{kind}.jsonl"
            read = read_output(await self._download(file_id, name), name)
            for custom_id, (where, line) in read.answers.items():
                answers.setdefault(custom_id, answer_of(line, f"batch {batch['id']} {where}"))
        status = batch["status"]
        why = "; ".join(batch.get("errors", [])) or status
        for custom_id in batch.get("custom_ids", []):
            if custom_id not in answers:
                cause = f"the batch {status} ({why})" if status in UNSUCCESSFUL else "no answer"
                answers[custom_id] = line_failure(f"batch {batch['id']}: {cause} for this request")
        return answers

    async def _follow(self, batch: dict[str, Any]) -> None:
        """Poll with backoff until the batch is in a final status, reporting progress."""
        delay = self.poll_seconds
        said = ""
        while batch["status"] not in TERMINAL:
            found = await self._sdk().batches.retrieve(batch["id"])
            update(batch, found)
            self.state.save()
            counts = batch["request_counts"]
            text = (
                f"batch {batch['id']}: {batch['status']}, {counts['completed']}/{counts['total']} "
                f"done, {counts['failed']} failed"
            )
            if text != said:
                self.progress(text)
                said = text
            if batch["status"] not in TERMINAL:
                await asyncio.sleep(delay)
                delay = min(delay * 1.5, max(MAX_POLL_SECONDS, self.poll_seconds))

    async def _download(self, file_id: str, name: str) -> bytes:
        """A batch's output or error file: kept beside the state file, so never fetched twice."""
        kept = self.state.folder / name
        if kept.exists():
            return kept.read_bytes()
        data = (await self._sdk().files.content(file_id)).content
        self.state.folder.mkdir(parents=True, exist_ok=True)
        write_atomically(kept, data)
        return data

    def _refusal(self, error: BaseException) -> BaseException:
        """An upload the endpoint answered with an error status: the whole run's cause (kept
        in `refused`), raised as EndpointUnusable so no judgment waits on a batch that never
        existed; any other failure (no connection) as it was."""
        converted = from_sdk(error)
        if not isinstance(converted, EndpointError) or converted.status is None:
            return error
        answer = converted.body if converted.body is not None else converted.message
        if isinstance(answer, dict):
            answer = answer.get("message") or answer
        first_line = (str(answer).strip().splitlines() or ["(empty)"])[0][:200]
        question = f"does this endpoint support the Batch API? ({display_url(self.base_url)})"
        if converted.status == 401:
            question = refused_key(f"env {self.api_key_env}")
        self.refused = redact(
            f"the endpoint refused the batch upload (HTTP {converted.status}: {first_line}): "
            f"{question}",
            self._api_key,
        )
        return EndpointUnusable(self.refused)

    def _failure(self, error: BaseException) -> EndpointError:
        converted = from_sdk(error, display_url(self.base_url))
        if isinstance(converted, EndpointError):
            converted.message = redact(converted.message, self._api_key)
            converted.args = (converted.message,)
            return converted
        cause = f"the batch could not be run: {describe(converted)}"
        return EndpointError(redact(cause, self._api_key))

    def _sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=2
            )
        return self._client

    async def aclose(self) -> None:
        """Stop following batches (they keep running at the provider) and close the client."""
        for task in list(self._tasks):
            task.cancel()
        if self._client is not None:
            await self._client.close()
            self._client = None


def _ok(answer: Answer | None) -> bool:
    return isinstance(answer, bytes)


def update(batch: dict[str, Any], found: Any) -> None:
    """Copy what a retrieved batch says into its record."""
    batch["status"] = found.status
    counts = found.request_counts
    if counts is not None:
        batch["request_counts"] = {
            "total": counts.total,
            "completed": counts.completed,
            "failed": counts.failed,
        }
    batch["output_file_id"] = found.output_file_id
    batch["error_file_id"] = found.error_file_id
    errors = getattr(found, "errors", None)
    if errors is not None and getattr(errors, "data", None):
        batch["errors"] = [str(error.message) for error in errors.data if error.message]


def api_key_for(batch: dict[str, Any]) -> str:
    """The key for a recorded batch, from the environment variable its record names."""
    name = batch.get("api_key_env") or "OPENAI_API_KEY"
    key = credential(name)
    if key:
        return key
    if str(batch.get("endpoint", "")).startswith("https://api.openai.com"):
        raise JudgeConfigError(f"no API key: set {name} to follow batch {batch.get('id')}")
    return "not-needed"


async def refresh(state: BatchState, *, cancel: bool = False) -> list[dict[str, Any]]:
    """Retrieve every batch not yet final (cancelling each first, with `cancel`), saving what
    it says; every batch's record, in order."""
    import openai

    clients: dict[tuple[str, str], openai.AsyncOpenAI] = {}
    try:
        for batch in state.batches:
            if batch.get("status") in TERMINAL:
                continue
            key = api_key_for(batch)
            identity = (str(batch["endpoint"]), key)
            if identity not in clients:
                clients[identity] = openai.AsyncOpenAI(
                    api_key=key, base_url=identity[0], max_retries=2
                )
            client = clients[identity]
            try:
                if cancel:
                    update(batch, await client.batches.cancel(batch["id"]))
                else:
                    update(batch, await client.batches.retrieve(batch["id"]))
            except Exception as error:
                failure = from_sdk(error, display_url(identity[0]))
                origin = f"env {batch.get('api_key_env') or 'OPENAI_API_KEY'}"
                batch["last_error"] = redact(describe(failure, origin), key)
            state.save()
    finally:
        for client in clients.values():
            await client.close()
    return state.batches

"""Batch files and the state of a batch run: the Batch API's request and answer lines (split at
OpenAI's limits), an answers file read by custom_id, the state file of a batch run, the offline
transports (`Recorder` keeps the requests a run would send, `Answerer` answers them from an
output file), and the batch-vs-live estimate. Driving an eval's judgments through them is
`evals.batch_run`'s job (`api` has the live Batch API transport).

Line formats (OpenAI's Batch API; vllm run-batch reads and writes the same):
request `{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`; answer
`{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}`. A request's
custom_id is its verdict-cache key, so a rerun names the same request the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from rubriclib.errors import EvalError
from rubriclib.files import write_atomically
from rubriclib.judging import EndpointError, EndpointUnusable, status_error

ENDPOINT: Final = "/v1/chat/completions"
MAX_REQUESTS = 50_000
"""Requests per batch input file (OpenAI's limit)."""
MAX_BYTES = 200 * 1000 * 1000
"""Bytes per batch input file (OpenAI's limit: 200 MB)."""
BATCH_DISCOUNT = 0.5
"""What a batch request costs relative to a live one (OpenAI: half); `--batch-discount` wins."""
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
UNSUCCESSFUL = frozenset({"failed", "expired", "cancelled"})


def request_line(custom_id: str, body: dict[str, Any]) -> bytes:
    """One line of a batch input file."""
    line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


def split_lines(
    lines: Iterable[tuple[str, bytes]], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES
) -> list[list[tuple[str, bytes]]]:
    """(custom_id, line) pairs in files of at most `max_requests` lines and `max_bytes` bytes."""
    files: list[list[tuple[str, bytes]]] = [[]]
    size = 0
    for custom_id, line in lines:
        if files[-1] and (len(files[-1]) >= max_requests or size + len(line) > max_bytes):
            files.append([])
            size = 0
        files[-1].append((custom_id, line))
        size += len(line)
    return [chunk for chunk in files if chunk]


def line_failure(message: str) -> EndpointError:
    """A request the batch ran without an HTTP answer (an error line, an expired or cancelled
    batch, no line at all). Marked `timed_out`, as a request that got no answer in time is, so
    the engine counts it as one failed request, not as a dead connection that stops the run."""
    return EndpointError(message, timed_out=True)


def answer_of(line: dict[str, Any], where: str) -> bytes | EndpointError:
    """The reply body of an answer line (status 200), or the failure it reports."""
    response = line.get("response")
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        status, body = response["status_code"], response.get("body")
        raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        if 200 <= status < 300:
            return raw
        return status_error(status, {}, raw)
    error = line.get("error")
    if isinstance(error, dict):
        code, message = error.get("code") or "error", error.get("message") or "no message"
        return line_failure(f"{where}: the batch answered {code}: {message}")
    return line_failure(f"{where}: the answer line has neither a response nor an error")


@dataclass
class OutputFile:
    """An answers file read by custom_id: the first answer of each, and what could not be used
    (`FILE:LINE: problem`, one line each)."""

    answers: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    """custom_id -> (`FILE:LINE` of its first answer, the line)."""
    problems: list[str] = field(default_factory=list)


def read_output(data: bytes, name: str, into: OutputFile | None = None) -> OutputFile:
    """Parse a batch output (or error) file, adding to `into`; bad and duplicate lines become
    problems."""
    read = into if into is not None else OutputFile()
    for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except ValueError:
            read.problems.append(f"{name}:{number}: not JSON")
            continue
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        if not isinstance(custom_id, str):
            read.problems.append(f"{name}:{number}: no custom_id")
        elif custom_id in read.answers:
            first = read.answers[custom_id][0]
            read.problems.append(
                f"{name}:{number}: duplicate answer for {custom_id} ({first} is used)"
            )
        else:
            read.answers[custom_id] = (f"{name}:{number}", line)
    return read


def state_path(results: Path) -> Path:
    """The batch state file of a results file: `results.jsonl.batch.json` beside it."""
    return results.with_name(f"{results.name}.batch.json")


class BatchState:
    """The state file of a batch run: every batch submitted (id, endpoint, the name of the key's
    environment variable, never the key; status, counts, file ids; its custom_ids), rewritten
    atomically on every change. Downloads are kept in the folder beside it (`.files`)."""

    def __init__(self, path: Path, *, fresh: bool = False) -> None:
        self.path = path
        self.folder = path.with_name(f"{path.name}.files")
        self.batches: list[dict[str, Any]] = []
        if fresh and self.folder.is_dir():  # an earlier run's downloads must never answer this one
            for kept in self.folder.glob("*.jsonl"):
                kept.unlink()
        if fresh:  # nor its record: only a batch this run creates is written down
            path.unlink(missing_ok=True)
        if path.exists() and not fresh:
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
                batches = loaded.get("batches", [])
            except (ValueError, AttributeError, OSError) as error:
                problem = f"not a batch state file ({error})"
                raise EvalError.single(str(path), "batches", problem) from None
            self.batches = _checked_batches(path, batches)

    def running(self) -> list[dict[str, Any]]:
        """Batches not yet in a final status."""
        return [batch for batch in self.batches if batch.get("status") not in TERMINAL]

    def reusable(self) -> dict[str, dict[str, Any]]:
        """custom_id -> the latest batch that holds it and may still answer it (not failed,
        expired or cancelled): what a resumed run polls instead of submitting again."""
        found: dict[str, dict[str, Any]] = {}
        for batch in self.batches:
            if batch.get("status") in UNSUCCESSFUL:
                continue
            for custom_id in batch.get("custom_ids", []):
                found[custom_id] = batch
        return found

    def add(self, batch: dict[str, Any]) -> None:
        self.batches.append(batch)
        self.save()

    def save(self) -> None:
        text = json.dumps({"version": 1, "batches": self.batches}, indent=1) + "\n"
        write_atomically(self.path, text.encode())


REQUIRED_FIELDS: Final = ("id", "endpoint", "status")
"""What every recorded batch must hold, as a non-empty string, to be followed or cancelled."""


def _checked_batches(path: Path, batches: Any) -> list[dict[str, Any]]:
    """The recorded batches of a state file, or an EvalError naming the first bad field (a
    hand-edited or truncated file), so no command stops on a missing key later."""
    if not isinstance(batches, list):
        raise EvalError.single(str(path), "batches", "not a list of batches")
    for number, batch in enumerate(batches):
        where = f"batches[{number}]"
        if not isinstance(batch, dict):
            raise EvalError.single(str(path), where, "not a batch record (a mapping)")
        for name in REQUIRED_FIELDS:
            value = batch.get(name)
            if not isinstance(value, str) or not value:
                problem = "missing" if value is None else "not a non-empty string"
                raise EvalError.single(str(path), f"{where}.{name}", problem)
        custom_ids = batch.get("custom_ids", [])
        if not isinstance(custom_ids, list) or not all(isinstance(c, str) for c in custom_ids):
            raise EvalError.single(str(path), f"{where}.custom_ids", "not a list of strings")
    return batches


def open_state(results: Path, resume: bool) -> BatchState:
    """The state file of a batch run writing `results`: the recorded one with `resume`; else a
    fresh one, refused while a recorded batch is still running (it would be paid for twice)."""
    recorded = BatchState(state_path(results))
    if resume:
        return recorded
    if running := recorded.running():
        ids = ", ".join(batch["id"] for batch in running)
        raise EvalError.single(
            str(recorded.path),
            "batches",
            f"batch(es) {ids} still running: add --resume to collect them, or run "
            "`rubriclib batch cancel` first",
        )
    return BatchState(recorded.path, fresh=True)


class Recorder:
    """A transport that sends nothing: it keeps each request (by custom_id, in order) and refuses
    it, so every vote's first request is recorded and no later turn is ever asked for. Its
    judges are built `records_only` (`batch_judges`), so a pairwise vote records both orders."""

    def __init__(self) -> None:
        self.requests: dict[str, dict[str, Any]] = {}

    async def post(self, body: dict[str, Any], *, timeout: float, custom_id: str) -> bytes:
        self.requests.setdefault(custom_id, body)
        raise EndpointUnusable("prepared for a batch file; not sent")

    async def aclose(self) -> None:
        """Nothing to close."""


class Answerer:
    """A transport that answers from an output file by custom_id; `expected` are the requests a
    prepared file holds, so a request outside it is a later turn no batch file answered."""

    def __init__(self, output: OutputFile, expected: set[str], name: str) -> None:
        self.output = output
        self.expected = expected
        self.name = name
        self.asked: set[str] = set()

    async def post(self, body: dict[str, Any], *, timeout: float, custom_id: str) -> bytes:
        self.asked.add(custom_id)
        found = self.output.answers.get(custom_id)
        if found is not None:
            answer = answer_of(found[1], found[0])
            if isinstance(answer, BaseException):
                raise answer
            return answer
        if custom_id in self.expected:
            raise line_failure(f"{self.name} has no answer for request {custom_id}")
        raise line_failure(
            f"this judgment needs a corrective turn (or a quirk fallback), request {custom_id}, "
            f"which {self.name} cannot hold: a live run or `rubriclib eval --batch` is needed "
            "for its corrective turn"
        )

    async def aclose(self) -> None:
        """Nothing to close."""


def estimated_tokens(body: dict[str, Any]) -> int:
    """Prompt tokens of a request body, at four characters a token (messages and tools)."""
    characters = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
    return (characters + len(json.dumps(body.get("tools", [])))) // 4


def write_requests(
    requests: dict[str, dict[str, Any]],
    to: Path,
    max_requests: int = MAX_REQUESTS,
    max_bytes: int = MAX_BYTES,
) -> list[Path]:
    """The request lines, written atomically: `to`, then `to`'s stem `-2`, `-3`... for more
    than one file's worth (50,000 lines, 200 MB). Numbered files of `to` beyond these (an
    earlier, larger prepare's) are removed, so none is run by mistake."""
    lines = ((custom_id, request_line(custom_id, body)) for custom_id, body in requests.items())
    files = split_lines(lines, max_requests, max_bytes) or [[]]
    written = []
    for number, chunk in enumerate(files, start=1):
        path = to if number == 1 else to.with_name(f"{to.stem}-{number}{to.suffix}")
        write_atomically(path, b"".join(line for _, line in chunk))
        written.append(path)
    numbered = re.compile(rf"{re.escape(to.stem)}-([1-9][0-9]*){re.escape(to.suffix)}")
    if to.parent.is_dir():
        for stale in to.parent.iterdir():
            found = numbered.fullmatch(stale.name)
            if found and int(found.group(1)) > len(files) and stale.is_file():
                stale.unlink()
    return written


@dataclass(frozen=True)
class Estimate:
    """Requests and prompt tokens of a run, fewest (every vote stops at a majority) to most
    (every vote cast): the same live or in batches, which only differ in price and waves."""

    requests: tuple[int, int]
    tokens: tuple[int, int]
    waves: int


def estimate(
    by_grader: Mapping[str, int],
    tokens: Mapping[str, int],
    votes: Mapping[str, int],
    orders: Mapping[str, int] | None = None,
    most: tuple[Mapping[str, int], Mapping[str, int]] | None = None,
) -> Estimate:
    """From the plan's judgments and first-turn tokens (every order's) per grader, each
    grader's votes and its orders (2 for a pairwise rubric: a request per order, the swapped
    one in the next wave). `most`, for a live run that explores runs: the requests and prompt
    tokens each grader's judgments send at most (every vote's), in place of one request each."""
    fewest = most_requests = fewest_tokens = most_tokens = waves = 0
    for grader, judgments in by_grader.items():
        asked = votes.get(grader, 1)
        each = (orders or {}).get(grader, 1)
        majority = asked // 2 + 1 if asked > 1 else 1
        fewest += judgments * majority * each
        most_requests += asked * (most[0][grader] if most else judgments * each)
        fewest_tokens += tokens.get(grader, 0) * majority
        most_tokens += asked * (most[1][grader] if most else tokens.get(grader, 0))
        waves = max(waves, asked * each)
    return Estimate((fewest, most_requests), (fewest_tokens, most_tokens), waves)


def _span(pair: tuple[float, float], money: bool = False) -> str:
    low, high = (f"${v:,.4f}" if money else f"{v:,.0f}" for v in pair)
    return low if low == high else f"{low} to {high}"


def estimate_lines(
    found: Estimate,
    price_per_million: float | None,
    discount: float = BATCH_DISCOUNT,
    live: tuple[Estimate, int] | None = None,
) -> list[str]:
    """`eval --dry-run --batch`: requests, tokens and (at a price) cost, batch against live;
    `live`, when a live run would explore the runs a batch shows cut: its estimate, and how
    many judgments explore."""
    files = -(-found.requests[1] // MAX_REQUESTS) if found.requests[1] else 0
    lines = [
        f"batch: {_span(found.requests)} request(s), about {_span(found.tokens)} prompt tokens, "
        f"in {found.waves} wave(s) of at least {files} batch file(s) (votes, and a pairwise "
        "rubric's two orders, go one wave after another; a corrective turn adds a wave)",
        f"live:  the same {_span(found.requests)} request(s) and {_span(found.tokens)} prompt "
        "tokens, sent at once",
    ]
    spent = found
    if live is not None:
        spent, explored = live
        lines[1] = (
            f"live:  {_span(spent.requests)} request(s) and {_span(spent.tokens)} prompt tokens, "
            f"sent at once ({explored} judgment(s) explore their run, which a batch shows whole, "
            "cut; the most: every explored judgment's requests, each its budget's worth)"
        )
    if price_per_million is not None:
        cost = (
            spent.tokens[0] * price_per_million / 1e6,
            spent.tokens[1] * price_per_million / 1e6,
        )
        batch = (
            found.tokens[0] * price_per_million / 1e6 * discount,
            found.tokens[1] * price_per_million / 1e6 * discount,
        )
        lines.append(
            f"cost at ${price_per_million:g} per million prompt tokens: live about "
            f"{_span(cost, True)}, batch about {_span(batch, True)} (batch assumed at "
            f"{discount:.0%} of the live price; --batch-discount changes it; completion "
            "tokens not counted)"
        )
    return lines

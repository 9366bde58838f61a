"""The verdict cache: results of past judgments, keyed by everything that decides them.

A key is the sha256 of the endpoint URL (no credentials), the first request body of the
judgment (model, messages, tools, tool_choice, temperature, token limit), the trial number
and the vote number (left out for vote 1, so keys from before votes stay valid), so `--trials 3`
and `--votes 3` keep independent samples, and trial 2's votes never meet trial 1's. Only
verdicts are stored, never errors, and never an API key. SQLite from the standard library, in
WAL mode so runs can share it. A cache that cannot be used (corrupt, locked, unwritable) warns
once and the run goes on uncached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from rubriclib.config import default_cache_dir
from rubriclib.judging.asking.reply import ANSWER_DETAILS, JudgeVerdict
from rubriclib.judging.asking.request import POSITIONS, QUIRKS, Mode
from rubriclib.judging.result import (
    GradeResult,
    judge_details,
    make_result,
    with_details,
    with_winner,
)
from rubriclib.rubrics import Rubric

FILE_NAME = "verdicts.sqlite3"
logger = logging.getLogger("rubriclib")


def cache_key(endpoint: str, body: dict[str, Any], trial: int, vote: int = 1) -> str:
    """The key of a judgment (one vote of it) whose first request is `body`, sent to
    `endpoint`; vote 1 has the key a judgment had before votes existed."""
    identity: dict[str, Any] = {"endpoint": endpoint, "body": body, "trial": trial}
    if vote != 1:
        identity["vote"] = vote
    canonical = json.dumps(
        identity,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class VerdictCache:
    """A verdict store in `folder`; every failure to use it is a warning, never an error."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder).expanduser() if folder is not None else default_cache_dir()
        self.path = self.folder / FILE_NAME
        self._connection: sqlite3.Connection | None = None
        self._broken = False
        self._lock = threading.Lock()

    @classmethod
    def beside(
        cls, cache: VerdictCache | None, folder: Literal[True] | str | os.PathLike[str]
    ) -> VerdictCache:
        """The store in `folder` (True: the user cache folder): `cache` itself when it is
        there, so one file has one connection."""
        store = cls(None if folder is True else folder)
        return cache if cache is not None and cache.folder == store.folder else store

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value for `key`, or None (a miss, or a cache that cannot be read)."""
        row = self._run("SELECT value FROM verdicts WHERE key = ?", (key,), fetch=True)
        if not row:
            return None
        try:
            value = json.loads(row[0])
        except (TypeError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Store `value` under `key` (the first writer of a key wins)."""
        self._run(
            "INSERT OR IGNORE INTO verdicts (key, value) VALUES (?, ?)", (key, json.dumps(value))
        )

    def known_quirks(self, endpoint: str, model: str) -> set[str]:
        """The quirks `endpoint` showed for `model` in earlier runs (see `request.QUIRKS`)."""
        rows = self._run(
            "SELECT quirk FROM quirks WHERE endpoint = ? AND model = ?", (endpoint, model), "all"
        )
        return {row[0] for row in rows or ()} & set(QUIRKS)

    def remember_quirk(self, endpoint: str, model: str, quirk: str) -> None:
        """Keep a quirk `endpoint` showed for `model`, so later runs start from its fallback."""
        self._run("INSERT OR IGNORE INTO quirks VALUES (?, ?, ?)", (endpoint, model, quirk))

    def info(self) -> dict[str, Any]:
        """Where the cache is, how many verdicts it holds and its size on disk."""
        row = self._run("SELECT count(*) FROM verdicts", (), fetch=True) if self._exists() else None
        files = [self.path, Path(f"{self.path}-wal")]
        size = sum(file.stat().st_size for file in files if file.exists())
        return {"path": str(self.path), "entries": row[0] if row else 0, "bytes": size}

    def clear(self) -> int:
        """Delete every stored verdict and remembered quirk; the number of verdicts deleted."""
        if not self._exists():
            return 0
        count = self.info()["entries"]
        self._run("DELETE FROM verdicts", ())
        self._run("DELETE FROM quirks", ())
        self._run("VACUUM", ())
        return int(count)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def _exists(self) -> bool:
        return self.path.is_file()

    def _run(
        self, sql: str, parameters: tuple[Any, ...], fetch: bool | Literal["all"] = False
    ) -> Any:
        with self._lock:
            if self._broken:
                return None
            try:
                connection = self._connect()
                with connection:
                    cursor = connection.execute(sql, parameters)
                    if fetch == "all":
                        return cursor.fetchall()
                    return cursor.fetchone() if fetch else None
            except (sqlite3.Error, OSError) as error:
                self._broken = True
                logger.warning(
                    "the verdict cache at %s cannot be used (%s); going on without it",
                    self.path,
                    error,
                )
                return None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.path, timeout=10, isolation_level=None, check_same_thread=False
            )
            try:
                _set_up(connection)
            except sqlite3.Error:
                connection.close()
                raise
            self._connection = connection
        return self._connection


def _set_up(connection: sqlite3.Connection) -> None:
    """WAL mode and the table. Switching to WAL needs the database to itself, which the busy
    timeout does not wait for, so several runs opening a new cache at once retry a little."""
    for attempt in range(20):
        try:
            if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            connection.execute(
                "CREATE TABLE IF NOT EXISTS quirks (endpoint TEXT, model TEXT, quirk TEXT, "
                "PRIMARY KEY (endpoint, model, quirk))"
            )
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or attempt == 19:
                raise
            time.sleep(0.01 * (attempt + 1))


def stored_verdict(
    verdict: JudgeVerdict, mode: Mode | None, correction: str | None
) -> dict[str, Any]:
    """What the cache keeps of a verdict (a pairwise order's: with the judge's answer; its
    citations as they were checked: the key covers every block they were checked against)."""
    stored = {
        "verdict": verdict.verdict,
        "reason": verdict.reason,
        "raw_score": verdict.raw_score,
        "mode": mode,
        "correction": correction,
    }
    if verdict.winner is not None:
        stored["winner"] = verdict.winner
    return stored | verdict.item_details() | verdict.cited() | verdict.rubric_details()


def cached_result(
    stored: dict[str, Any] | None,
    rubric: Rubric,
    model: str,
    protocol: str = "tools",
    sampled: Mapping[str, Any] | None = None,
) -> GradeResult | None:
    """A cached verdict as a result (no attempts, `cached: true`), or None for a miss or a
    stored value that is not a verdict; on a pairwise rubric only one that kept the judge's
    answer (A, B or tie, in `details.winner`); a checklist item's with its answer (yes or no,
    and its `p` if it was known, in `details`); a checklist answered in one call with its
    items' answers (`details.checklist`)."""
    if stored is None or stored.get("verdict") not in ("pass", "fail"):
        return None
    reason, raw, answer = stored.get("reason"), stored.get("raw_score"), stored.get("answer")
    if not isinstance(reason, str) or answer not in (None, "yes", "no"):
        return None
    if answer is None and (rubric.scale == "1-5") != isinstance(raw, int):
        return None
    if rubric.scale == "pairwise" and stored.get("winner") not in POSITIONS:
        return None
    correction = stored.get("correction") if isinstance(stored.get("correction"), str) else None
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    mode = stored.get("mode")
    details = judge_details(
        model, mode, 0, 0, usage, correction, cached=True, protocol=protocol, sampled=sampled
    )
    result = make_result(rubric, details, stored["verdict"], reason, raw)
    p = stored.get("p") if isinstance(stored.get("p"), float) else None
    read = {key: stored[key] for key in ANSWER_DETAILS if key in stored}
    read_as = JudgeVerdict(stored["verdict"], reason, answer=answer, p=p, answer_details=read)
    item = read_as.item_details()
    cited = stored.get("citations")
    if isinstance(cited, list) and cited and all(isinstance(c, dict) for c in cited):
        item["citations"] = cited
    if rubric.output and not isinstance(stored.get("output"), dict):
        return None  # kept before the rubric had fields (its digest says it had none)
    if rubric.output:
        item["output"] = stored["output"]
    if rubric.scale == "labels" and stored.get("label") not in (rubric.labels or {}):
        return None
    if rubric.scale == "labels":
        item["label"] = stored["label"]
    if "checklist" in stored:  # a checklist answered in one call: its items' answers
        item["checklist"] = stored["checklist"]
    if "exploration" in stored:  # an explored run: what the judge read
        item["exploration"] = stored["exploration"]
    try:
        return with_details(with_winner(result, stored.get("winner")), **item)
    except ValueError:  # a stored value not in the shape of a verdict's details
        return None

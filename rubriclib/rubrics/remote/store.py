"""The cache of fetched remote rubrics, beside the verdict cache (`config.rubric_cache_dir`):
each file stored by its sha256 (`sha256/ab/abcdef...`) and hashed again on every read, and a
record of what each reference last resolved to (`references.json`: reference -> commit (or
URL) and sha256). Its paths are hashes, and references never hold credentials.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubriclib.config import rubric_cache_dir
from rubriclib.files import write_atomically

RECORD_NAME = "references.json"
logger = logging.getLogger("rubriclib")


@dataclass(frozen=True)
class Fetched:
    """What a reference resolved to: its commit (the URL, for one https file) and the sha256 of
    the rubric file's bytes."""

    commit: str
    sha256: str
    kind: str = "file"
    """What REV was: tag, commit, branch, head (none given), or file (one https file)."""


def sha256_of(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


class RubricStore:
    """The remote rubrics cache in `folder` (default: `config.rubric_cache_dir()`)."""

    def __init__(self, folder: str | os.PathLike[str] | None = None) -> None:
        self.folder = Path(folder) if folder is not None else rubric_cache_dir()

    def _blob(self, sha256: str) -> Path:
        return self.folder / "sha256" / sha256[:2] / sha256

    def put(self, content: bytes) -> str:
        """Keep `content`; its sha256."""
        digest = sha256_of(content)
        path = self._blob(digest)
        if self.read(digest) is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, content)
        return digest

    def path(self, sha256: str) -> Path:
        """Where the file of `sha256` is kept."""
        return self._blob(sha256)

    def read(self, sha256: str) -> bytes | None:
        """The stored bytes of `sha256`, hashed again: None when missing, and when they no
        longer hash to it (a damaged file, removed with a warning)."""
        path = self._blob(sha256)
        try:
            content = path.read_bytes()
        except OSError:
            return None
        if sha256_of(content) != sha256:
            logger.warning("rubriclib: %s in the rubric cache was damaged; removed it", sha256[:12])
            path.unlink(missing_ok=True)
            return None
        return content

    def recorded(self, reference: str) -> Fetched | None:
        """What `reference` last resolved to, if it was fetched and is still stored."""
        entry = self._record().get(reference)
        if not isinstance(entry, dict):
            return None
        try:
            return Fetched(str(entry["commit"]), str(entry["sha256"]), str(entry["kind"]))
        except KeyError:
            return None

    def record(self, reference: str, fetched: Fetched) -> None:
        """Remember that `reference` resolved to `fetched`."""
        record = self._record()
        record[reference] = {
            "commit": fetched.commit,
            "sha256": fetched.sha256,
            "kind": fetched.kind,
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(dict(sorted(record.items())), indent=2, ensure_ascii=False)
        write_atomically(self.folder / RECORD_NAME, text + "\n")

    def _record(self) -> dict[str, Any]:
        try:
            data = json.loads((self.folder / RECORD_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def info(self) -> dict[str, Any]:
        """Where the cache is, how many files and references it holds and its size on disk."""
        files = [path for path in self.folder.glob("sha256/*/*") if path.is_file()]
        size = sum(path.stat().st_size for path in files)
        return {
            "path": str(self.folder),
            "files": len(files),
            "references": len(self._record()),
            "bytes": size,
        }

    def clear(self) -> int:
        """Delete every fetched rubric and the record; the number of files deleted."""
        count = int(self.info()["files"])
        shutil.rmtree(self.folder / "sha256", ignore_errors=True)
        (self.folder / RECORD_NAME).unlink(missing_ok=True)
        return count

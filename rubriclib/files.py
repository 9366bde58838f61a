"""Writing a file a user will read or keep, whole: through a temporary file beside it, flushed
to disk, then put in place in one step, so neither a reader nor an interrupt ever leaves half
of it. A leaf: it imports nothing of rubriclib."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write `data` (text as UTF-8) to `path` whole, replacing what was there in one step."""
    with _beside(path, data) as temporary:
        os.replace(temporary, path)


def holds_anything(path: Path) -> bool:
    """Whether `path` exists and holds more than whitespace: what a run that replaces it loses."""
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(1 << 16):
                if chunk.strip():
                    return True
    except FileNotFoundError:
        return False
    return False


def write_new(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` whole, only if `path` does not exist yet (FileExistsError
    otherwise, even when another process creates it meanwhile): nothing is overwritten."""
    with _beside(path, data) as temporary:
        os.link(temporary, path)


@contextlib.contextmanager
def _beside(path: Path, data: str | bytes) -> Iterator[Path]:
    """A temporary file beside `path` holding `data` on disk (same folder: the same file
    system, so it can be renamed or linked into place); removed when it was not renamed."""
    encoded = data.encode("utf-8") if isinstance(data, str) else data
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(encoded)
            handle.flush()
            os.fsync(handle.fileno())
        yield temporary
    finally:
        temporary.unlink(missing_ok=True)

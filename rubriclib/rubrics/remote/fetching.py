"""Fetching a remote rubric: `git` for a repository (its revision resolved with `ls-remote`, then
a shallow fetch of that one commit), `urllib` for one https file. Every fetch runs under a time
limit and a size limit, never prompts for a password (git's credential helpers still answer),
and its errors never show a URL's user part.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from rubriclib._version import __version__
from rubriclib.rubrics.reading import MAX_FILE_BYTES
from rubriclib.rubrics.remote.reference import RemoteReference, redacted, refuse

FETCH_SECONDS = 60
"""The time one fetch (a `git ls-remote`, a `git fetch` or an https download) may take."""
FETCH_BYTES = 50 * 1024 * 1024
"""The most a fetch of a repository may write (50 MiB); a rubric file itself is limited to
`MAX_FILE_BYTES` (1 MiB). The limits are read at each fetch, so a test may lower them."""


@dataclass(frozen=True)
class Revision:
    """What a reference's REV resolves to now."""

    commit: str
    kind: Literal["tag", "branch", "commit", "head"]
    """`branch` and `head` (no REV: the repository's default branch) are floating."""

    @property
    def floating(self) -> bool:
        return self.kind in ("branch", "head")


def resolve_revision(reference: RemoteReference) -> Revision:
    """The commit a git reference's REV names now: a tag (its commit), a branch, a full commit
    id, or the default branch when no REV is given."""
    if reference.names_commit:
        return Revision(str(reference.rev), "commit")
    rev = reference.rev
    wanted: list[tuple[str, Literal["tag", "branch", "head"]]] = [
        (f"refs/tags/{rev}^{{}}", "tag"),  # an annotated tag, peeled to its commit
        (f"refs/tags/{rev}", "tag"),
        (f"refs/heads/{rev}", "branch"),
    ]
    if rev is None:
        wanted = [("HEAD", "head")]
    listing = run_git(["ls-remote", reference.url, *(name for name, _ in wanted)], reference)
    found = dict(line.split("\t", 1)[::-1] for line in listing.splitlines() if "\t" in line)
    for name, kind in wanted:
        if name in found:
            return Revision(found[name], kind)
    refuse(
        redacted(reference.text),
        "revision",
        f"{rev!r} is no tag or branch of {redacted(reference.url)} (a commit is written in full)",
    )


def fetch_git_file(reference: RemoteReference, commit: str) -> bytes:
    """The bytes of the reference's file at `commit`: a shallow fetch of that one commit into a
    temporary repository, checked out, the file refused when a link takes it outside."""
    with tempfile.TemporaryDirectory(prefix="rubriclib-fetch-") as folder:
        work = Path(folder)
        run_git(["init", "-q", str(work)], reference)
        fetch = ["-C", str(work), "fetch", "-q", "--depth", "1", reference.url]
        try:
            _git([*fetch, commit], reference)
        except _GitFailed as failed:  # a server refusing a commit id: fetch the named ref
            if reference.rev is None or reference.names_commit:
                refuse(redacted(reference.text), "fetch", str(failed))
            run_git([*fetch, reference.rev], reference)
        fetched = run_git(["-C", str(work), "rev-parse", "FETCH_HEAD"], reference).strip()
        if fetched != commit:
            refuse(redacted(reference.text), "revision", f"moved to {fetched} while fetching it")
        run_git(["-C", str(work), "checkout", "-q", commit], reference)
        return _file_inside(work, reference)


def _file_inside(work: Path, reference: RemoteReference) -> bytes:
    """The subpath's bytes, refused when it (through a link) leaves the checkout or is missing."""
    label = redacted(reference.text)
    path = work / reference.subpath
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        refuse(label, "subpath", f"{reference.subpath!r} does not exist at that revision")
    root = work.resolve()
    if not real.is_relative_to(root) or real.is_relative_to(root / ".git"):
        refuse(label, "subpath", f"{reference.subpath!r} leads outside the repository (a link)")
    if not real.is_file():
        refuse(label, "subpath", f"{reference.subpath!r} is not a file")
    if (size := real.stat().st_size) > MAX_FILE_BYTES:
        refuse(label, "subpath", f"is {size} bytes; the limit is {MAX_FILE_BYTES} bytes")
    return real.read_bytes()


def fetch_https_file(reference: RemoteReference) -> bytes:
    """One file over https (http to loopback only), within the time and file size limits."""
    return fetch_url(reference.url, redacted(reference.text))


def fetch_url(url: str, label: str) -> bytes:
    """The bytes at `url` (checked safe by the caller), within FETCH_SECONDS and
    MAX_FILE_BYTES; a RubricError naming `label` when it cannot be fetched whole. The time
    limit holds for the whole download, not only for each read, so a server trickling bytes
    is stopped too."""
    request = urllib.request.Request(url, headers={"User-Agent": f"rubriclib/{__version__}"})
    deadline = time.monotonic() + FETCH_SECONDS
    body = b""
    try:
        with urllib.request.urlopen(request, timeout=FETCH_SECONDS) as response:  # noqa: S310
            while len(body) <= MAX_FILE_BYTES and (chunk := response.read1(65536)):
                body += chunk
                if time.monotonic() > deadline:
                    raise TimeoutError
    except urllib.error.HTTPError as error:
        refuse(label, "fetch", f"the server answered HTTP {error.code}")
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", None) or error
        if isinstance(reason, TimeoutError):
            refuse(label, "fetch", f"took longer than {FETCH_SECONDS} seconds; stopped")
        refuse(label, "fetch", f"cannot be fetched: {redacted(str(reason))}")
    if len(body) > MAX_FILE_BYTES:
        refuse(label, "fetch", f"is larger than {MAX_FILE_BYTES} bytes; stopped")
    return body


class _GitFailed(Exception):
    """A git command that failed; its text is what git said, user parts hidden."""


def run_git(arguments: list[str], reference: RemoteReference) -> str:
    """`git ARGUMENTS`' output, or a RubricError naming the reference and what git said."""
    try:
        return _git(arguments, reference)
    except _GitFailed as failed:
        refuse(redacted(reference.text), "fetch", str(failed))


def _git(arguments: list[str], reference: RemoteReference) -> str:
    """Run git without a terminal prompt, within FETCH_SECONDS and, for a fetch into a folder,
    FETCH_BYTES; its output, or _GitFailed saying what git said."""
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    command = next(word for word in arguments if not word.startswith("-") and "/" not in word)
    folder = Path(arguments[1]) if arguments[:1] == ["-C"] and command == "fetch" else None
    label = redacted(reference.text)
    try:
        process = subprocess.Popen(
            ["git", *arguments],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            text=True,
        )
    except OSError as error:
        refuse(label, "fetch", f"git cannot be run: {error.strerror}")
    output, errors = _waited(process, folder, label)
    if process.returncode != 0:
        said = " ".join(redacted(errors).split())[-300:] or f"exit {process.returncode}"
        raise _GitFailed(f"git {command} failed: {said}")
    return output


def _waited(process: subprocess.Popen[str], folder: Path | None, label: str) -> tuple[str, str]:
    """The process's output once it ends; killed past the time limit, or when `folder` grows
    past the size limit."""
    deadline = time.monotonic() + FETCH_SECONDS
    while True:
        try:
            output = process.communicate(timeout=0.2)
        except subprocess.TimeoutExpired:
            output = None
        too_large = folder is not None and _size(folder) > FETCH_BYTES
        if output is not None and not too_large:
            return output
        if too_large:  # checked once it ends too: a fast fetch is measured all the same
            _stop(process)
            refuse(label, "fetch", f"the repository is larger than {FETCH_BYTES} bytes; stopped")
        if time.monotonic() > deadline:
            _stop(process)
            refuse(label, "fetch", f"took longer than {FETCH_SECONDS} seconds; stopped")


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
        process.communicate()


def _size(folder: Path) -> int:
    total = 0
    for directory, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                continue
    return total

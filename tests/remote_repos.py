"""Real git repositories of rubrics made in a test (committed, tagged, moved), reached as
`git+file://`, as `github.com/...` through git's own `url.<base>.insteadOf` set in the
environment, and one file served over http on 127.0.0.1."""

from __future__ import annotations

import contextlib
import functools
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

IDENTITY = ["-c", "user.name=Tester", "-c", "user.email=tester@example.com"]


def remote_rubric(name: str = "house", version: str = "1.0.0", words: str = "Pass it.") -> str:
    return (
        f"---\nname: {name}\nversion: {version}\nscale: pass-fail\n"
        f"description: A rubric kept in another repository.\n---\n{words} Call `set_grade_pass` "
        "or `set_grade_fail`.\n"
    )


class RubricRepo:
    """A git repository holding rubrics/NAME.md files."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *arguments: str) -> str:
        done = subprocess.run(
            ["git", *IDENTITY, *arguments],
            cwd=self.folder,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    def commit(self, files: dict[str, str], message: str = "change") -> str:
        for name, text in files.items():
            path = self.folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")

    def tag(self, name: str, force: bool = False) -> None:
        self.git("tag", *(["-f"] if force else []), name)

    @property
    def url(self) -> str:
        return self.folder.as_uri()


@pytest.fixture
def rubric_repo(tmp_path: Path) -> RubricRepo:
    """A repository with rubrics/house.md at 1.0.0, tagged v1.0.0."""
    repo = RubricRepo(tmp_path / "repos" / "org" / "rubrics")
    repo.commit({"rubrics/house.md": remote_rubric()}, "first")
    repo.tag("v1.0.0")
    return repo


def map_github_to(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """git reads `https://github.com/X` as `file://FOLDER/X` (its own insteadOf, through the
    environment), so host-style references reach repositories made in the test."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{folder.as_uri()}/.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "https://github.com/")


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """`folder` served over http on 127.0.0.1; the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

"""Real git repositories of rubrics made in a test (committed, tagged, moved, force-pushed),
reached as `git+file://`, as `github.com/...` through git's own `url.<base>.insteadOf` set in
the environment, and over http or https on 127.0.0.1: files served as they are, repositories
through `git http-backend` (a static server cannot serve a shallow fetch), https with a
certificate made in the test and trusted through SSL_CERT_FILE and GIT_SSL_CAINFO."""

from __future__ import annotations

import contextlib
import functools
import os
import ssl
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
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
def served(
    folder: Path, certificate: Path | None = None, delay: float = 0.0, trickle: float = 0.0
) -> Iterator[str]:
    """`folder` served on 127.0.0.1, over https with `certificate` (a PEM holding the key too),
    each answer `delay` seconds late and its body sent a byte every `trickle` seconds; the
    base URL."""
    late = type("_LateHandler", (_QuietHandler,), {"delay": delay, "trickle": trickle})
    handler = functools.partial(late, directory=str(folder))
    with _serving(handler, certificate) as base:
        yield base


@contextlib.contextmanager
def git_served(root: Path, certificate: Path | None = None, delay: float = 0.0) -> Iterator[str]:
    """The repositories under `root` served by `git http-backend` behind a small CGI wrapper
    on 127.0.0.1 (https with `certificate`); the base URL (`BASE/org/rubrics`)."""
    handler = functools.partial(_GitHandler, root=root, delay=delay)
    with _serving(handler, certificate) as base:
        yield base


@contextlib.contextmanager
def _serving(handler: object, certificate: Path | None) -> Iterator[str]:
    server = _QuietServer(("127.0.0.1", 0), handler)  # type: ignore[arg-type]
    scheme = "http"
    if certificate is not None:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (a time limit reached) is what a test expects


class _QuietHandler(SimpleHTTPRequestHandler):
    delay = 0.0
    trickle = 0.0

    def send_head(self):  # type: ignore[no-untyped-def]
        time.sleep(self.delay)
        return super().send_head()

    def copyfile(self, source, outputfile):  # type: ignore[no-untyped-def]
        if not self.trickle:
            return super().copyfile(source, outputfile)
        while byte := source.read(1):
            outputfile.write(byte)
            outputfile.flush()
            time.sleep(self.trickle)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _GitHandler(BaseHTTPRequestHandler):
    """`git http-backend` as a CGI script: the request as its environment and input, its
    output's headers (a `Status:` line among them) and body as the response."""

    def __init__(self, *arguments: object, root: Path, delay: float) -> None:
        self.root, self.delay = root, delay
        super().__init__(*arguments)  # type: ignore[arg-type]

    def do_GET(self) -> None:
        self._backend()

    def do_POST(self) -> None:
        self._backend()

    def _backend(self) -> None:
        time.sleep(self.delay)
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        environment = {
            **os.environ,
            "GIT_PROJECT_ROOT": str(self.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": urllib.parse.unquote(path),
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        done = subprocess.run(
            ["git", "http-backend"], input=body, env=environment, capture_output=True, check=False
        )
        head, _, content = done.stdout.replace(b"\r\n", b"\n").partition(b"\n\n")
        headers = [line.split(":", 1) for line in head.decode().splitlines() if ":" in line]
        status = next((int(v.split()[0]) for k, v in headers if k.lower() == "status"), 200)
        self.send_response(status)
        for key, value in headers:
            if key.lower() != "status":
                self.send_header(key, value.strip())
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: object) -> None:
        pass


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost: the server's PEM (certificate and
    key) and the certificate alone (what a client trusts)."""
    key, certificate = folder / "key.pem", folder / "certificate.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(certificate),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    both = folder / "server.pem"
    both.write_bytes(certificate.read_bytes() + key.read_bytes())
    return both, certificate


def trust(monkeypatch: pytest.MonkeyPatch, certificate: Path) -> None:
    """Python (SSL_CERT_FILE) and git (GIT_SSL_CAINFO) trust the certificate, and only it."""
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate))
    monkeypatch.setenv("GIT_SSL_CAINFO", str(certificate))


def published(repo: RubricRepo, root: Path) -> RubricRepo:
    """A bare copy of `repo` at `root/org/rubrics` (what a server serves), `repo` pushing to it
    as `origin`: every branch and tag pushed."""
    bare = root / "org" / "rubrics"
    bare.parent.mkdir(parents=True, exist_ok=True)
    repo.git("clone", "-q", "--bare", str(repo.folder), str(bare))
    repo.git("remote", "add", "origin", str(bare))
    return repo

"""Remote rubrics and indexes served for real on 127.0.0.1: repositories through `git
http-backend` over http and over https (a certificate made in the test, trusted through
SSL_CERT_FILE and GIT_SSL_CAINFO), host references mapped onto the server by git's insteadOf,
single files and an index over https, a force-pushed tag noticed, the fetch limits reached, and
nothing written when a fetch fails."""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from remote_repos import (
    RubricRepo,
    git_served,
    make_certificate,
    published,
    remote_rubric,
    served,
    trust,
)

from rubriclib import RubricError, load_rubric
from rubriclib.rubrics.remote import fetching
from rubriclib.rubrics.remote.store import RubricStore, sha256_of

REF_END = "/org/rubrics@v1.0.0#rubrics/house.md"


@pytest.fixture
def upstream(tmp_path: Path) -> RubricRepo:
    """A repository tagged v1.0.0 and pushed to a bare one under tmp_path/served."""
    repo = RubricRepo(tmp_path / "work")
    repo.commit({"rubrics/house.md": remote_rubric()}, "first")
    repo.tag("v1.0.0")
    return published(repo, tmp_path / "served")


@pytest.fixture
def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server's PEM; its certificate trusted by Python and git for the test."""
    (tmp_path / "tls").mkdir()
    server, trusted = make_certificate(tmp_path / "tls")
    trust(monkeypatch, trusted)
    return server


@pytest.fixture
def fetch_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The folder fetches make their temporary repositories in (empty after each)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder


def error_of(ref: str) -> str:
    with pytest.raises(RubricError) as caught:
        load_rubric(ref)
    return str(caught.value)


def test_git_over_http_on_loopback_through_http_backend(
    upstream: RubricRepo, tmp_path: Path
) -> None:
    with git_served(tmp_path / "served") as base:
        rubric = load_rubric(f"git+{base}{REF_END}")
    assert (rubric.name, rubric.version) == ("house", "1.0.0")
    assert rubric.remote is not None
    assert rubric.remote.commit == upstream.git("rev-parse", "v1.0.0")


def test_git_over_https_with_a_certificate_made_here(
    upstream: RubricRepo, tmp_path: Path, certificate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with git_served(tmp_path / "served", certificate) as base:
        assert load_rubric(f"git+{base}{REF_END}").version == "1.0.0"
        monkeypatch.setenv("GIT_CONFIG_COUNT", "1")  # a host reference, mapped onto the server
        monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.{base}/.insteadOf")
        monkeypatch.setenv("GIT_CONFIG_VALUE_0", "https://github.com/")
        assert load_rubric(f"github.com{REF_END}").name == "house"
        monkeypatch.delenv("GIT_SSL_CAINFO")  # git trusts the system's authorities only
        text = error_of(f"git+{base}/org/rubrics@v1.0.0#rubrics/other.md")
    assert "git ls-remote failed" in text and "certificate" in text.lower()


def test_one_file_and_an_index_over_https(
    tmp_path: Path, certificate: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rubriclib.rubrics import search_indexes

    site = tmp_path / "site"
    (site / "rubrics").mkdir(parents=True)
    (site / "rubrics" / "house.md").write_text(remote_rubric())
    index = '{"rubrics": [{"ref": "rubrics/house.md", "name": "house", "version": "1.0.0", '
    index += '"scale": "pass-fail", "description": "House style.", "tags": ["style"]}]}'
    (site / "rubriclib-index.json").write_text(index)
    with served(site, certificate) as base:
        rubric = load_rubric(f"{base}/rubrics/house.md")
        [entry] = search_indexes([f"{base}/rubriclib-index.json"], ["STYLE"])
        assert load_rubric(entry.ref).digest == rubric.digest
        monkeypatch.delenv("SSL_CERT_FILE")  # the system's authorities do not know it
        untrusted = error_of(f"{base}/rubrics/other.md")
    assert entry.ref == f"{base}/rubrics/house.md"
    assert (
        rubric.source
        == f"remote:{base}/rubrics/house.md (sha256 {sha256_of(remote_rubric().encode())})"
    )
    assert "cannot be fetched" in untrusted and "CERTIFICATE_VERIFY_FAILED" in untrusted
    monkeypatch.setenv("RUBRICLIB_OFFLINE", "1")  # the server gone: the index from the cache
    assert search_indexes([f"{base}/rubriclib-index.json"], ["house"]) == [entry]


def test_a_force_pushed_tag_is_noticed_and_the_pin_kept(
    upstream: RubricRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from click.testing import CliRunner

    from rubriclib.cli import main

    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(project)
    locked = upstream.git("rev-parse", "v1.0.0")
    with git_served(tmp_path / "served") as base:
        ref = f"git+{base}{REF_END}"
        assert CliRunner().invoke(main, ["lock", ref]).exit_code == 0
        moved = upstream.commit({"rubrics/house.md": remote_rubric(version="1.0.1")})
        upstream.tag("v1.0.0", force=True)
        upstream.git("push", "-q", "--force", "origin", "main", "v1.0.0")
        with caplog.at_level(logging.WARNING, logger="rubriclib"):
            rubric = load_rubric(ref)
        assert rubric.version == "1.0.0" and rubric.remote.commit == locked  # type: ignore[union-attr]
        assert f"v1.0.0 moved: locked at {locked[:12]}, now at {moved[:12]}" in caplog.text
        updated = CliRunner().invoke(main, ["update", ref])
    assert updated.exit_code == 0, updated.output
    assert f"house 1.0.0 -> house 1.0.1 (commit {locked[:12]} -> {moved[:12]})" in updated.output
    assert "-version: 1.0.0\n+version: 1.0.1" in updated.output


def fetched_nothing(fetch_folder: Path) -> bool:
    """No file in the rubric cache and no temporary repository left behind."""
    return RubricStore().info()["files"] == 0 and os.listdir(fetch_folder) == []


def test_a_repository_past_the_size_limit_is_stopped(
    tmp_path: Path, fetch_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = RubricRepo(tmp_path / "large")
    repo.commit({"rubrics/house.md": remote_rubric(), "data.txt": os.urandom(150_000).hex()})
    repo.tag("v1.0.0")
    monkeypatch.setattr(fetching, "FETCH_BYTES", 100_000)  # a fast fetch is measured too
    text = error_of(f"git+{repo.url}@v1.0.0#rubrics/house.md")
    assert "the repository is larger than 100000 bytes; stopped" in text
    assert fetched_nothing(fetch_folder)


def test_a_rubric_file_past_the_file_limit_is_refused(
    tmp_path: Path, fetch_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = RubricRepo(tmp_path / "repo")
    repo.commit({"rubrics/house.md": remote_rubric()})
    repo.tag("v1.0.0")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "house.md").write_text(remote_rubric())
    monkeypatch.setattr(fetching, "MAX_FILE_BYTES", 100)
    in_git = error_of(f"git+{repo.url}@v1.0.0#rubrics/house.md")
    with served(tmp_path / "site") as base:
        over_http = error_of(f"{base}/house.md")
    size = len(remote_rubric())
    assert f"is {size} bytes; the limit is 100 bytes" in in_git
    assert "is larger than 100 bytes; stopped" in over_http
    assert fetched_nothing(fetch_folder)


def test_a_fetch_past_the_time_limit_is_stopped(
    upstream: RubricRepo, tmp_path: Path, fetch_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "house.md").write_text(remote_rubric())
    monkeypatch.setattr(fetching, "FETCH_SECONDS", 1)
    with git_served(tmp_path / "served", delay=2.5) as base:
        in_git = error_of(f"git+{base}{REF_END}")
    with served(tmp_path / "site", delay=2.5) as base:
        over_http = error_of(f"{base}/house.md")
    for text in (in_git, over_http):
        assert "took longer than 1 seconds; stopped" in text
    assert fetched_nothing(fetch_folder)


def test_a_server_trickling_a_file_is_stopped_at_the_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each byte comes well within the limit; the whole file would take 3 seconds."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "house.md").write_text("x" * 30)
    monkeypatch.setattr(fetching, "FETCH_SECONDS", 1)
    with served(tmp_path / "site", trickle=0.1) as base:
        started = time.monotonic()
        text = error_of(f"{base}/house.md")
    assert "took longer than 1 seconds; stopped" in text
    assert time.monotonic() - started < 2.5

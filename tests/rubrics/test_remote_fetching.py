"""Remote rubrics fetched for real: git repositories made in the test over file://, host-style
references mapped onto them by git's insteadOf, one file over http on 127.0.0.1; the
content-addressed cache, re-hashed on read; offline from the cache with the repository gone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from remote_repos import RubricRepo, map_github_to, remote_rubric, rubric_repo, served

from rubriclib import RubricError, load_rubric
from rubriclib.rubrics.remote.store import RubricStore, sha256_of

__all__ = ["rubric_repo"]


def error_of(ref: str) -> str:
    with pytest.raises(RubricError) as caught:
        load_rubric(ref)
    return str(caught.value)


def test_a_tagged_rubric_loads_and_names_its_commit(rubric_repo: RubricRepo) -> None:
    ref = f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md"
    rubric = load_rubric(ref)
    commit = rubric_repo.git("rev-parse", "v1.0.0")
    assert (rubric.name, rubric.version) == ("house", "1.0.0")
    assert rubric.source == f"remote:{ref} (commit {commit})"
    assert rubric.remote is not None and rubric.remote.commit == commit
    content = remote_rubric().encode()
    assert rubric.remote.sha256 == sha256_of(content)
    assert RubricStore().read(rubric.remote.sha256) == content
    assert rubric.path == RubricStore().path(sha256_of(content))


def test_host_form_reaches_the_repository_through_insteadof(
    rubric_repo: RubricRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    map_github_to(monkeypatch, tmp_path / "repos")
    rubric = load_rubric("github.com/org/rubrics@v1.0.0#rubrics/house.md")
    assert rubric.name == "house"
    assert rubric.source.endswith(f"(commit {rubric_repo.git('rev-parse', 'v1.0.0')})")


def test_a_commit_a_branch_and_no_revision_resolve(rubric_repo: RubricRepo) -> None:
    first = rubric_repo.git("rev-parse", "HEAD")
    second = rubric_repo.commit({"rubrics/house.md": remote_rubric(version="1.1.0")})
    base = f"git+{rubric_repo.url}"
    assert load_rubric(f"{base}@{first}#rubrics/house.md").version == "1.0.0"
    assert load_rubric(f"{base}@main#rubrics/house.md").remote.commit == second  # type: ignore[union-attr]
    assert load_rubric(f"{base}#rubrics/house.md").version == "1.1.0"


def test_an_annotated_tag_resolves_to_its_commit(rubric_repo: RubricRepo) -> None:
    rubric_repo.git("tag", "-a", "v1.0.1", "-m", "annotated")
    rubric = load_rubric(f"git+{rubric_repo.url}@v1.0.1#rubrics/house.md")
    assert rubric.remote is not None
    assert rubric.remote.commit == rubric_repo.git("rev-parse", "HEAD")


@pytest.mark.parametrize(
    ("ref_end", "message"),
    [
        ("@v9.9.9#rubrics/house.md", "'v9.9.9' is no tag or branch of"),
        ("@v1.0.0#rubrics/gone.md", "'rubrics/gone.md' does not exist at that revision"),
        ("@v1.0.0#rubrics", "'rubrics' is not a file"),
        ("@v1.0.0#rubrics/escape.md", "leads outside the repository (a link)"),
    ],
)
def test_what_cannot_be_fetched_is_refused(tmp_path: Path, ref_end: str, message: str) -> None:
    repo = RubricRepo(tmp_path / "linked")
    (tmp_path / "secret.md").write_text(remote_rubric("secret"))
    (repo.folder / "rubrics").mkdir()
    (repo.folder / "rubrics" / "escape.md").symlink_to(tmp_path / "secret.md")
    repo.commit({"rubrics/house.md": remote_rubric()})
    repo.tag("v1.0.0")
    text = error_of(f"git+{repo.url}{ref_end}")
    assert message in text and "(taken as a remote reference)" in text


def test_a_missing_repository_says_what_git_said(tmp_path: Path) -> None:
    text = error_of(f"git+{(tmp_path / 'none').as_uri()}@v1#x.md")
    assert "git ls-remote failed:" in text and "(taken as a remote reference)" in text


def test_one_file_over_http_on_loopback(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "house.md").write_text(remote_rubric())
    with served(tmp_path / "site") as base:
        rubric = load_rubric(f"{base}/house.md")
        missing = error_of(f"{base}/gone.md")
    digest = sha256_of(remote_rubric().encode())
    assert rubric.source == f"remote:{base}/house.md (sha256 {digest})"
    assert "the server answered HTTP 404" in missing


def test_offline_uses_the_cache_with_the_repository_gone(
    rubric_repo: RubricRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md"
    online = load_rubric(ref)
    shutil.rmtree(rubric_repo.folder)
    monkeypatch.setenv("RUBRICLIB_OFFLINE", "1")
    offline = load_rubric(ref)
    assert (offline.digest, offline.source) == (online.digest, online.source)
    other = f"git+{rubric_repo.url}@v2.0.0#rubrics/house.md"
    text = error_of(other)
    assert "is not in the rubric cache" in text and f"run `rubriclib lock {other}`" in text


def test_the_cache_is_hashed_again_on_read(
    rubric_repo: RubricRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md"
    rubric = load_rubric(ref)
    assert rubric.remote is not None
    rubric.path.write_text(remote_rubric(words="Always pass."))  # tampered with in the cache
    monkeypatch.setenv("RUBRICLIB_OFFLINE", "1")
    assert "is not in the rubric cache" in error_of(ref)
    monkeypatch.delenv("RUBRICLIB_OFFLINE")
    assert load_rubric(ref).digest == rubric.digest  # fetched again, whole


def test_a_moved_tag_is_fetched_again_online(rubric_repo: RubricRepo) -> None:
    ref = f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md"
    assert load_rubric(ref).version == "1.0.0"
    rubric_repo.commit({"rubrics/house.md": remote_rubric(version="1.0.1")})
    rubric_repo.tag("v1.0.0", force=True)
    assert load_rubric(ref).version == "1.0.1"

"""`rubriclib index` and `rubriclib search` on the command line, and the remote rubrics the lock
pins in `list` and `show`, marked remote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from remote_repos import RubricRepo, remote_rubric, rubric_repo

from rubriclib.cli import main

__all__ = ["rubric_repo"]


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a folder of two rubrics to publish."""
    folder = tmp_path / "project"
    (folder / "shared" / "rubrics").mkdir(parents=True)
    (folder / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    for name, words in [("house", "House style."), ("refunds", "Refund policy stated.")]:
        text = remote_rubric(name).replace("A rubric kept in another repository.", words)
        (folder / "shared" / "rubrics" / f"{name}.md").write_text(text)
    monkeypatch.chdir(folder)
    return folder


def test_index_then_search_through_the_settings(project: Path) -> None:
    written = run("index", "shared")
    assert written.exit_code == 0, written.output
    assert written.output == "Wrote 2 rubric(s) to shared/rubriclib-index.json\n"
    config = (
        "[project]\nname = 'demo'\n[tool.rubriclib]\nindexes = ['shared/rubriclib-index.json']\n"
    )
    (project / "pyproject.toml").write_text(config)
    found = run("search", "refund")
    assert found.exit_code == 0, found.output
    assert found.output == (
        "shared/rubrics/refunds.md  refunds 1.0.0 pass-fail  Refund policy stated.\n"
    )
    rows = json.loads(run("search", "--json").output)
    assert [row["name"] for row in rows] == ["house", "refunds"]
    assert run("show", rows[0]["ref"]).exit_code == 0
    none = run("search", "nothing-like-it")
    assert none.exit_code == 1 and "no rubric in 1 index(es) matches" in none.stderr


def test_search_without_an_index_or_with_a_bad_one_is_exit_2(project: Path) -> None:
    missing = run("search", "style")
    assert missing.exit_code == 2 and "no index to search" in missing.output
    (project / "bad.json").write_text('{"rubrics": [{"ref": "x.md", "name": "X"}]}')
    bad = run("search", "--index", "bad.json", "style")
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    where = "rubriclib: error: bad.json: rubrics[0]"
    assert f"{where}.version: must be a non-empty string" in bad.stderr
    assert f"{where}.scale: must be a non-empty string" in bad.stderr


def test_search_shows_the_readable_indexes_matches_beside_a_bad_one(project: Path) -> None:
    assert run("index", "shared").exit_code == 0
    (project / "bad.json").write_text("not an index")
    found = run("search", "--index", "bad.json", "--index", "shared/rubriclib-index.json", "ref")
    assert found.exit_code == 2 and "Traceback" not in found.output
    assert found.stdout.startswith("shared/rubrics/refunds.md  refunds 1.0.0")
    assert "rubriclib: error: bad.json: line 1: is not JSON" in found.stderr


def test_index_refuses_a_broken_rubric_and_writes_nothing(project: Path) -> None:
    out = project / "index.json"
    out.write_text("the index as it was\n")
    (project / "shared" / "rubrics" / "broken.md").write_text("---\nname: broken\n---\nx\n")
    result = run("index", "shared", "--out", str(out))
    assert result.exit_code == 2 and "broken.md" in result.stderr
    assert out.read_text() == "the index as it was\n"
    assert run("index", "shared", "--url", "github.com/a/b").exit_code == 2  # no --rev
    assert not (project / "shared" / "rubriclib-index.json").exists()


def test_index_with_a_url_and_a_tag(project: Path) -> None:
    result = run("index", ".", "--url", "github.com/acme/rubrics", "--rev", "v2.0.0")
    assert result.exit_code == 0, result.output
    rows = json.loads((project / "rubriclib-index.json").read_text())["rubrics"]
    assert rows[0]["ref"] == "github.com/acme/rubrics@v2.0.0#shared/rubrics/house.md"


def test_list_and_show_mark_the_locked_remote_rubrics(
    project: Path, rubric_repo: RubricRepo
) -> None:
    ref = f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md"
    shown = json.loads(run("show", ref, "--json").output)
    assert shown["remote"]["reference"] == ref and shown["remote"]["pinned"] is False
    assert run("lock", ref).exit_code == 0
    commit = rubric_repo.git("rev-parse", "v1.0.0")
    assert f"remote: {ref} (tag, pinned in rubriclib.lock)" in run("show", ref).output
    assert json.loads(run("show", "groundedness", "--json").output)["remote"] is None
    listed = run("list")
    assert listed.exit_code == 0, listed.output
    assert "remote (pinned in rubriclib.lock):" in listed.output
    assert f"source: remote:{ref} (commit {commit}) (remote: by its reference only)" in (
        listed.output
    )
    rows = json.loads(run("list", "--json").output)
    [remote] = [row for row in rows if row["remote"] is not None]
    assert (remote["name"], remote["remote"], remote["default"]) == ("house", ref, False)
    assert all(row["remote"] is None for row in rows if row is not remote)
    shutil.rmtree(rubric_repo.folder)
    assert run("list", "--offline").exit_code == 0  # from the cache, nothing asked
    assert run("cache", "clear", "--rubrics").exit_code == 0
    gone = run("list", "--offline")
    assert gone.exit_code == 1 and f"run `rubriclib show {ref}` online" in gone.stderr
    assert "groundedness" in gone.output  # every other rubric still listed

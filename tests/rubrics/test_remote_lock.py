"""Remote rubrics in the lock: pinned by reference, used as locked (a moved tag is said, not
followed), and refused by `check` and --frozen (exit 2, before any request) when missing from
the lock, floating, or differing from the pin; an eval runs --frozen --offline with the
repository gone, its results naming the commit."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from judge_server import JudgeServer, tool_reply
from remote_repos import RubricRepo, map_github_to, remote_rubric, rubric_repo, served

from rubriclib.cli import main

__all__ = ["rubric_repo"]

HOST_REF = "github.com/org/rubrics@v1.0.0#rubrics/house.md"


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


@pytest.fixture
def project(tmp_path: Path, rubric_repo: RubricRepo, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose eval file grades with the repository's house rubric, by host reference."""
    folder = tmp_path / "project"
    (folder / "evals").mkdir(parents=True)
    (folder / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    write_eval(folder, HOST_REF)
    map_github_to(monkeypatch, tmp_path / "repos")
    monkeypatch.chdir(folder)
    return folder


def write_eval(folder: Path, ref: str) -> None:
    text = f"name: demo\nrows: [{{output: o}}]\ngraders:\n  - {{name: house, rubric: '{ref}'}}\n"
    (folder / "evals" / "demo.yaml").write_text(text)


def pins(project: Path) -> list[dict[str, str]]:
    return yaml.safe_load((project / "rubriclib.lock").read_text())["remote"]  # type: ignore[no-any-return]


def test_lock_resolves_each_remote_reference_it_is_given_once(
    project: Path, rubric_repo: RubricRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rubriclib.rubrics.remote import fetching

    listed: list[str] = []  # the repository of each `git ls-remote`
    run_git = fetching.run_git

    def counted(arguments: list[str], reference: Any) -> str:
        if arguments[0] == "ls-remote":
            listed.append(arguments[1])
        return run_git(arguments, reference)

    monkeypatch.setattr(fetching, "run_git", counted)
    result = run("lock", f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md")
    assert result.exit_code == 0, result.output
    assert "(2 remote)" in result.output  # the eval file's reference and this one
    assert listed.count(rubric_repo.url) == 1  # twice before: for the lock's entries and pins


def test_lock_pins_a_remote_rubric_by_reference(project: Path, rubric_repo: RubricRepo) -> None:
    result = run("lock")
    assert result.exit_code == 0, result.output
    assert "Locked 1 rubric(s) (1 remote)" in result.output
    [pin] = pins(project)
    assert pin["reference"] == HOST_REF and pin["kind"] == "tag"
    assert pin["commit"] == rubric_repo.git("rev-parse", "v1.0.0")
    assert (pin["name"], pin["version"]) == ("house", "1.0.0")
    assert len(pin["sha256"]) == 64 and len(pin["digest"]) == 64
    text = (project / "rubriclib.lock").read_text()
    assert run("lock").exit_code == 0 and (project / "rubriclib.lock").read_text() == text
    assert run("check").exit_code == 0


def test_a_moved_tag_is_said_and_the_locked_content_used(
    project: Path, rubric_repo: RubricRepo, caplog: pytest.LogCaptureFixture
) -> None:
    run("lock")
    locked = rubric_repo.git("rev-parse", "v1.0.0")
    moved = rubric_repo.commit({"rubrics/house.md": remote_rubric(version="1.0.1")})
    rubric_repo.tag("v1.0.0", force=True)  # a force-pushed tag
    with caplog.at_level(logging.WARNING, logger="rubriclib"):
        shown = run("show", HOST_REF, "--json")
    assert json.loads(shown.output)["version"] == "1.0.0"
    assert json.loads(shown.output)["source"] == f"remote:{HOST_REF} (commit {locked})"
    assert f"v1.0.0 moved: locked at {locked[:12]}, now at {moved[:12]}" in caplog.text
    assert run("check").exit_code == 0  # the pin holds: nothing drifted


def test_check_and_frozen_refuse_unlocked_and_floating_references(
    project: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "r"})
    run("lock")
    branch = HOST_REF.replace("@v1.0.0", "@main")
    write_eval(project, branch)
    unlocked = run("eval", "evals/demo.yaml", "--frozen")
    assert unlocked.exit_code == 2 and "is not in the lock; run `rubriclib lock`" in unlocked.stderr
    assert run("lock").exit_code == 0
    for command in (["check"], ["eval", "evals/demo.yaml", "--frozen"]):
        result = run(*command)
        assert result.exit_code == 2, (command, result.output)
        assert f"{branch}: is floating (names a branch); pin a tag or a commit" in result.stderr
    assert "(--frozen)" in run("eval", "evals/demo.yaml", "--frozen").stderr
    assert judge_server.requests == []  # refused before any request
    judge = run("judge", branch, "--output", "x", "--frozen")
    assert judge.exit_code == 2 and "is floating" in judge.stderr


def test_content_differing_from_the_pin_is_refused(tmp_path: Path, project: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "house.md").write_text(remote_rubric())
    with served(site) as base:
        write_eval(project, f"{base}/house.md")
        assert run("lock").exit_code == 0
        assert pins(project)[0]["kind"] == "file"
        (site / "house.md").write_text(remote_rubric(words="Always pass."))
        shutil.rmtree(tmp_path / "verdict-cache" / "rubrics")  # not cached: fetched again
        result = run("check")
    assert result.exit_code == 2
    assert "content differs from the lock (sha256 " in result.stderr
    assert f"`rubriclib update {base}/house.md` moves the pin" in result.stderr


def test_an_eval_runs_frozen_and_offline_with_the_repository_gone(
    project: Path,
    rubric_repo: RubricRepo,
    judge_server: JudgeServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "r"})
    assert run("lock").exit_code == 0
    commit = rubric_repo.git("rev-parse", "v1.0.0")
    shutil.rmtree(rubric_repo.folder)
    result = run("eval", "evals/demo.yaml", "--frozen", "--offline", "--out", "results.jsonl")
    assert result.exit_code == 0, result.output + result.stderr
    [line] = (project / "results.jsonl").read_text().splitlines()
    assert f'"remote:{HOST_REF} (commit {commit})"' in line
    assert len(judge_server.requests) == 1


def test_update_moves_a_pin_with_the_version_change_and_a_diff(
    project: Path, rubric_repo: RubricRepo
) -> None:
    run("lock")
    old = rubric_repo.git("rev-parse", "v1.0.0")
    bumped = remote_rubric(version="1.1.0", words="Pass it only when it cites.")
    new = rubric_repo.commit({"rubrics/house.md": bumped})
    rubric_repo.tag("v1.0.0", force=True)
    result = run("update")
    assert result.exit_code == 0, result.output + result.stderr
    assert f"{HOST_REF}: house 1.0.0 -> house 1.1.0 (commit {old[:12]} -> {new[:12]})" in (
        result.output
    )
    assert "-version: 1.0.0\n+version: 1.1.0\n" in result.output
    assert (
        "-Pass it. Call" in result.output and "+Pass it only when it cites. Call" in result.output
    )
    assert "Moved 1 pin(s) in " in result.output
    [pin] = pins(project)
    assert (pin["commit"], pin["version"]) == (new, "1.1.0")
    again = run("update", HOST_REF)
    assert again.exit_code == 0 and "house 1.1.0, unchanged" in again.output
    assert "Every pin is up to date" in again.output


def test_update_refuses_a_changed_body_without_a_bump(
    project: Path, rubric_repo: RubricRepo
) -> None:
    run("lock")
    lock_text = (project / "rubriclib.lock").read_text()
    rubric_repo.commit({"rubrics/house.md": remote_rubric(words="Always pass.")})
    rubric_repo.tag("v1.0.0", force=True)
    result = run("update")
    assert result.exit_code == 2
    assert "+Always pass. Call" in result.output  # the diff is still shown
    assert f"{HOST_REF}: version: house@1.0.0: the judged text changed (digest " in result.stderr
    assert "bump to 1.0.1 for a wording change" in result.stderr
    assert (project / "rubriclib.lock").read_text() == lock_text  # nothing written
    unknown = run("update", "github.com/org/other@v1#x.md")
    assert unknown.exit_code == 2 and "is not pinned; run `rubriclib lock` first" in unknown.stderr


GOLDEN_RUBRIC = remote_rubric().replace(
    "---\nPass it.",
    "goldens:\n  - {name: in-frontmatter, output: 'fine', expected: pass}\n---\nPass it.",
)
GOLDENS_FILE = "- {name: in-goldens-file, output: 'also fine', expected: pass}\n"


def test_test_goldens_runs_a_remote_rubrics_frontmatter_goldens(
    tmp_path: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The goldens a remote rubric carries in its frontmatter (pinned with the file's sha256)
    run; a goldens file beside it in its repository is not fetched, and runs from a local copy
    with --goldens."""
    repo = RubricRepo(tmp_path / "goldens-repo")
    repo.commit({"rubrics/house.md": GOLDEN_RUBRIC, "goldens/house.yaml": GOLDENS_FILE})
    repo.tag("v1.0.0")
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "r"})
    ref = f"git+{repo.url}@v1.0.0#rubrics/house.md"
    result = run("test-goldens", ref, "--no-cache")
    assert result.exit_code == 0, result.output + result.stderr
    outputs = [body["messages"][1]["content"] for body in judge_server.requests]
    assert len(outputs) == 1 and "fine" in outputs[0]
    copy = tmp_path / "house.yaml"
    copy.write_text(GOLDENS_FILE)
    both = run("test-goldens", ref, "--no-cache", "--goldens", str(copy))
    assert both.exit_code == 0, both.output + both.stderr
    assert len(judge_server.requests) == 3
    latest = [body["messages"][1]["content"] for body in judge_server.requests[1:]]
    assert any("also fine" in content for content in latest)

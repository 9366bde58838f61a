"""The lock/check cycle on a temporary project, and --frozen runs."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from conftest import RUBRICLIB, VALID_RUBRIC
from judge_server import JudgeServer, tool_reply

from rubriclib.cli import main

REPOSITORY = Path(__file__).parents[2]
HOUSE = VALID_RUBRIC.replace("name: tiny", "name: house")
EVAL = """\
name: demo
rows: [{input: q, context: c, output: o}]
graders:
  - {name: grounded, rubric: groundedness}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "house.md").write_text(HOUSE)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "demo.yaml").write_text(EVAL)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


def edit(project: Path, old: str, new: str) -> None:
    path = project / "rubrics" / "house.md"
    path.write_text(path.read_text().replace(old, new))


def test_lock_writes_every_rubric_the_project_uses(project: Path) -> None:
    result = run("lock")
    assert result.exit_code == 0 and "Locked 2 rubric(s)" in result.output
    text = (project / "rubriclib.lock").read_text()
    entries = yaml.safe_load(text)["rubrics"]
    assert [(e["name"], e["source"]) for e in entries] == [
        ("groundedness", "builtin:groundedness"),
        ("house", "file:rubrics/house.md"),
    ]
    assert entries[1]["version"] == "1.2.3" and len(entries[1]["digest"]) == 64
    run("lock")
    assert (project / "rubriclib.lock").read_text() == text  # stable: no diff on a rerun


def test_the_check_cycle(project: Path) -> None:
    run("lock")
    assert run("check").exit_code == 0
    edit(project, "Pass when the output is fine.", "Pass only when the output is perfect.")
    failed = run("check")
    assert failed.exit_code == 1
    output = failed.output
    assert "FAIL house@1.2.3: the judged text changed (digest " in output
    assert "bump to 1.2.4 for a wording change, 1.3.0 for new criteria" in output
    edit(project, "version: 1.2.3", "version: 1.2.4")
    bumped = run("check")  # bumped, not yet locked: the lock is stale
    assert bumped.exit_code == 1 and "house: locked at 1.2.3, now 1.2.4" in bumped.output
    run("lock")
    assert run("check").exit_code == 0
    edit(project, 'output: "broken"', 'output: "shattered"')  # goldens only: nothing to bump
    assert run("check").exit_code == 0


def test_a_changed_meaning_asks_for_a_major_bump(project: Path) -> None:
    run("lock")
    edit(project, "scale: pass-fail", "scale: 1-5\npass_threshold: 3")
    output = run("check").output
    assert "bump to 2.0.0 (the verdict's meaning changed)" in output


def test_a_version_going_down_or_a_rubric_gone_fails(project: Path) -> None:
    run("lock")
    edit(project, "version: 1.2.3", "version: 1.2.0")
    down = run("check")
    assert down.exit_code == 1 and "version went down from 1.2.3 to 1.2.0" in down.output
    (project / "rubrics" / "house.md").unlink()
    gone = run("check")
    assert gone.exit_code == 1 and "house: locked at 1.2.3" in gone.output
    assert "can no longer be found" in gone.output


def test_check_without_a_lock_says_so(project: Path) -> None:
    result = run("check")
    assert result.exit_code == 2
    assert "rubriclib.lock: file: does not exist; run `rubriclib lock` first" in result.stderr


def test_frozen_runs_refuse_a_rubric_that_moved(
    project: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "r"})
    run("lock")
    assert run("judge", "house", "--output", "x", "--frozen").exit_code == 0
    edit(project, "Pass when the output is fine.", "Pass when the output is great.")
    sent = len(judge_server.requests)
    for arguments in (
        ["judge", "house", "--output", "x", "--frozen"],
        ["test-goldens", "house", "--frozen"],
        ["eval", "evals/demo.yaml", "--frozen"],
    ):
        if arguments[0] == "eval":
            (project / "evals" / "demo.yaml").write_text(EVAL.replace("groundedness", "house"))
        result = run(*arguments)
        assert result.exit_code == 2, (arguments, result.output)
        assert "house@1.2.3: the judged text changed (digest " in result.stderr
        assert "bump to 1.2.4 for a wording change" in result.stderr
        assert result.stderr.count("\n") == 1
    assert len(judge_server.requests) == sent  # refused before any request
    unlocked = run("judge", "groundedness@^1", "--output", "x", "--context", "c", "--frozen")
    assert unlocked.exit_code == 0


def test_the_pre_commit_hook_runs_check() -> None:
    hooks = yaml.safe_load((REPOSITORY / ".pre-commit-hooks.yaml").read_text())
    [hook] = hooks
    assert hook["id"] == "rubriclib-check" and hook["entry"] == "rubriclib check"
    assert hook["pass_filenames"] is False and hook["language"] == "python"


def pre_commit_hook(folder: Path) -> subprocess.CompletedProcess[str]:
    """The command the shipped pre-commit hook runs, run as pre-commit runs it: in `folder`."""
    [hook] = yaml.safe_load((REPOSITORY / ".pre-commit-hooks.yaml").read_text())
    program, *arguments = shlex.split(hook["entry"])
    assert program == "rubriclib"
    command = [RUBRICLIB, *arguments]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120)


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of this repository's files as a fresh clone holds them (what git tracks)."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPOSITORY, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        source, copy = REPOSITORY / name, tmp_path / "clone" / name
        if source.is_file():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
    monkeypatch.chdir(tmp_path / "clone")
    return tmp_path / "clone"


def test_lock_and_check_pass_in_a_fresh_clone_of_this_repository(clone: Path) -> None:
    """Its waza example names no dataset (waza's runs give one): the scan needs none."""
    locked = run("lock")
    assert locked.exit_code == 0, locked.output
    entries = yaml.safe_load((clone / "rubriclib.lock").read_text())["rubrics"]
    sources = {entry["source"] for entry in entries}
    assert "file:examples/support/rubrics/house-style.md" in sources
    assert "waza-yaml:examples/waza/rubrics/intent_resolution.yaml" in sources  # portable
    assert run("check").exit_code == 0
    assert run("lock", "groundedness").exit_code == 0
    checked = run("check", "groundedness")
    assert checked.exit_code == 0, checked.output
    hook = pre_commit_hook(clone)
    assert hook.returncode == 0, hook.stderr
    assert hook.stdout == f"OK: {len(entries)} unchanged, 0 problem(s)\n"


def test_a_project_holding_only_a_waza_eval_locks_and_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    shutil.copyfile(REPOSITORY / "examples" / "waza" / "eval.yaml", tmp_path / "eval.yaml")
    monkeypatch.chdir(tmp_path)
    assert pre_commit_hook(tmp_path).returncode == 2  # no lock yet: says so
    assert run("lock").output == f"Locked 1 rubric(s) in {tmp_path / 'rubriclib.lock'}\n"
    entries = yaml.safe_load((tmp_path / "rubriclib.lock").read_text())["rubrics"]
    assert [(e["name"], e["source"]) for e in entries] == [("helpfulness", "builtin:helpfulness")]
    assert run("check").exit_code == 0
    hook = pre_commit_hook(tmp_path)
    assert (hook.returncode, hook.stdout) == (0, "OK: 1 unchanged, 0 problem(s)\n")
    ran = run("eval", "eval.yaml")  # a run still needs the rows
    assert ran.exit_code == 2
    assert ran.stderr == (
        f"rubriclib: error: {tmp_path / 'eval.yaml'}: dataset: is required: a file, or rows "
        "(waza: --dataset FILE)\n"
    )


def test_check_fails_a_bumped_rubric_the_lock_still_holds_at_its_old_version(
    project: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "r"})
    run("lock")
    edit(project, "Pass when the output is fine.", "Pass when the output is great.")
    edit(project, "version: 1.2.3", "version: 1.2.4")
    checked = run("check")
    frozen = run("judge", "house", "--output", "x", "--frozen")
    assert (checked.exit_code, frozen.exit_code) == (1, 2), "check and --frozen agree"
    assert "FAIL house: locked at 1.2.3, now 1.2.4" in checked.output
    assert "run `rubriclib lock`" in checked.output
    assert "house: locked at 1.2.3, now 1.2.4" in frozen.stderr
    run("lock")
    assert run("check").exit_code == 0
    assert run("judge", "house", "--output", "x", "--frozen").exit_code == 0


def test_check_and_frozen_agree_on_every_way_a_lock_goes_stale(
    project: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "r"})
    run("lock")
    # a rubric the project now needs that the lock lacks
    (project / "rubrics" / "extra.md").write_text(VALID_RUBRIC.replace("name: tiny", "name: extra"))
    missing = run("check")
    assert missing.exit_code == 1
    assert "FAIL extra@1.2.3 (file:rubrics/extra.md) is not in the lock" in missing.output
    assert run("judge", "extra", "--output", "x", "--frozen").exit_code == 2
    run("lock")
    # the same name now found somewhere else: a project file shadowing the built-in
    builtin = (Path(__file__).parents[2] / "rubrics" / "groundedness.md").read_text()
    (project / "rubrics" / "groundedness.md").write_text(builtin)
    moved = run("check")
    assert moved.exit_code == 1
    assert "locked from builtin:groundedness, now from file:rubrics/groundedness.md" in (
        moved.output
    )
    frozen = run("judge", "groundedness", "--output", "x", "--context", "c", "--frozen")
    assert frozen.exit_code == 2 and "locked from builtin:groundedness" in frozen.stderr


def test_lock_ref_refreshes_that_entry_and_keeps_the_others(project: Path) -> None:
    run("lock")
    locked = yaml.safe_load((project / "rubriclib.lock").read_text())["rubrics"]
    (project / "rubrics" / "extra.md").write_text(VALID_RUBRIC.replace("name: tiny", "name: extra"))
    edit(project, "Pass when the output is fine.", "Pass when the output is great.")
    edit(project, "version: 1.2.3", "version: 1.2.4")
    result = run("lock", "rubrics/house.md")
    assert result.exit_code == 0, result.output
    entries = yaml.safe_load((project / "rubriclib.lock").read_text())["rubrics"]
    assert [(e["name"], e["version"]) for e in entries] == [
        ("extra", "1.2.3"),  # the project needs it: added
        ("groundedness", locked[0]["version"]),  # kept as it was
        ("house", "1.2.4"),  # named: refreshed
    ]
    assert entries[1] == locked[0]
    assert run("check").exit_code == 0

"""A project's own rubrics: found by name, listed, regression-tested, and scaffolded safely."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import KEYWORD_RUBRIC, RUBRICLIB, VALID_RUBRIC
from judge_server import JudgeServer, tool_reply

from rubriclib import RubricError, load_rubric
from rubriclib.cli import main
from rubriclib.rubrics.registry import project_root


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with a pyproject.toml; the tests run from a subfolder of it."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "src" / "deep")
    return tmp_path


def test_new_then_show_by_name_from_anywhere_in_the_project(project: Path) -> None:
    runner = CliRunner()
    made = runner.invoke(main, ["new", "house-style", "--description", "Our house style."])
    assert made.exit_code == 0, made.output
    assert (project / "rubrics" / "house-style.md").is_file()
    assert project_root() == project
    shown = runner.invoke(main, ["show", "house-style", "--json"])
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.output)["source"] == f"file:{project / 'rubrics' / 'house-style.md'}"


def test_the_project_comes_before_the_path_and_the_builtins(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "rubrics").mkdir()
    local = VALID_RUBRIC.replace("name: tiny", "name: groundedness")
    (project / "rubrics" / "groundedness.md").write_text(local)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "groundedness.md").write_text(local.replace("1.2.3", "9.9.9"))
    monkeypatch.setenv("RUBRICLIB_PATH", str(elsewhere))
    assert load_rubric("groundedness").version == "1.2.3"
    listed = CliRunner().invoke(main, ["list"])
    assert "(shadows built-in)" in listed.output


def test_test_goldens_without_refs_covers_the_projects_rubrics(
    project: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "rubrics").mkdir()
    (project / "rubrics" / "keywords.md").write_text(KEYWORD_RUBRIC)
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "r"})
    result = CliRunner().invoke(main, ["test-goldens", "--format", "json", "--no-cache"])
    names = [entry["rubric"]["name"] for entry in json.loads(result.output)["rubrics"]]
    assert "keywords" in names and "groundedness" in names


def test_one_broken_file_does_not_hide_the_others(project: Path) -> None:
    (project / "rubrics").mkdir()
    (project / "rubrics" / "good.md").write_text(VALID_RUBRIC.replace("name: tiny", "name: good"))
    (project / "rubrics" / "broken.md").write_text("---\nname: broken\n---\n")
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 1
    assert "good " in result.output and "groundedness" in result.output
    assert "broken.md" in result.stderr and result.stderr.startswith("rubriclib: error: ")


def rubriclib(*arguments: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own, so its warnings reach its stderr."""
    command = [RUBRICLIB, *arguments]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60)


def test_new_with_a_builtins_name_warns_which_one_the_name_now_reaches(project: Path) -> None:
    builtin = load_rubric("groundedness")
    made = rubriclib("new", "groundedness", folder=project)
    assert made.returncode == 0 and made.stdout.startswith("Wrote rubrics/groundedness.md\n")
    assert made.stderr == (
        "rubriclib: warning: rubrics/groundedness.md has the name of the built-in rubric "
        f"groundedness@{builtin.version}, and takes its place: the name 'groundedness' now "
        "resolves to this file (rubric folders are searched before the built-ins); a pin, "
        f"groundedness@{builtin.version}, still reaches the built-in. Choose another name "
        "unless you mean to replace it\n"
    )
    shown = rubriclib("show", "groundedness", "--json", folder=project)  # what it said holds
    assert json.loads(shown.stdout)["source"] == f"file:{project / 'rubrics' / 'groundedness.md'}"
    pinned = rubriclib("show", f"groundedness@{builtin.version}", "--json", folder=project)
    assert json.loads(pinned.stdout)["source"] == "builtin:groundedness"


def test_new_with_a_builtins_name_elsewhere_warns_that_the_name_still_reaches_it(
    project: Path,
) -> None:
    docent = Path(__file__).parents[1] / "data" / "docent" / "helpfulness.json"
    arguments = ["--dir", "drafts", "--from-docent", str(docent), "--passing", "helpful"]
    made = rubriclib("new", "helpfulness", *arguments, folder=project)
    assert made.returncode == 0 and (project / "drafts" / "helpfulness.md").is_file()
    version = load_rubric("helpfulness").version
    assert made.stderr == (
        "rubriclib: warning: drafts/helpfulness.md has the name of the built-in rubric "
        f"helpfulness@{version}, but the name 'helpfulness' still resolves to the built-in: "
        "refer to this file by its path, or choose another name\n"
    )


def test_new_with_a_fresh_name_warns_of_nothing(project: Path) -> None:
    made = rubriclib("new", "house-style", folder=project)
    assert (made.returncode, made.stderr) == (0, "")
    assert (project / "rubrics" / "house-style.md").is_file()


def test_new_writes_nothing_invalid(project: Path) -> None:
    result = CliRunner().invoke(main, ["new", "two-lines", "--description", "one\ntwo"])
    assert result.exit_code == 2 and "description: must be one line" in result.stderr
    assert not (project / "rubrics").exists()
    assert CliRunner().invoke(main, ["list"]).exit_code == 0


def test_new_never_overwrites(project: Path) -> None:
    (project / "rubrics").mkdir()
    target = project / "rubrics" / "mine.md"
    target.write_text("my own words")
    result = CliRunner().invoke(main, ["new", "mine"])
    assert result.exit_code == 2 and "already exists" in result.stderr
    assert target.read_text() == "my own words"
    assert [p.name for p in (project / "rubrics").iterdir()] == ["mine.md"]


def test_show_body_prints_only_the_judged_text(project: Path) -> None:
    result = CliRunner().invoke(main, ["show", "groundedness", "--body"])
    assert result.exit_code == 0
    assert result.output == load_rubric("groundedness").body + "\n"


def versioned(name: str, version: str) -> str:
    return VALID_RUBRIC.replace("name: tiny", f"name: {name}").replace("1.2.3", version)


def test_a_pin_chooses_the_highest_fitting_version_across_folders(project: Path) -> None:
    (project / "rubrics").mkdir()
    (project / "rubrics" / "groundedness.md").write_text(versioned("groundedness", "2.0.0"))
    assert load_rubric("groundedness").version == "2.0.0"  # a bare name: the first found
    pinned = load_rubric("groundedness@^1")
    assert pinned.version == "1.4.0" and pinned.source == "builtin:groundedness"
    with pytest.raises(RubricError, match=r"at version 1\.4\.0, 2\.0\.0, which is not \^3"):
        load_rubric("groundedness@^3")


def test_older_versions_kept_beside_the_current_one(project: Path) -> None:
    folder = project / "rubrics"
    folder.mkdir()
    (folder / "house-style.md").write_text(versioned("house-style", "2.0.0"))
    (folder / "house-style@1.2.0.md").write_text(versioned("house-style", "1.2.0"))
    (folder / "house-style@1.1.0.md").write_text(versioned("house-style", "1.1.0"))
    assert load_rubric("house-style@^1").version == "1.2.0"
    assert load_rubric("house-style@~1.1").version == "1.1.0"
    assert load_rubric("house-style").version == "2.0.0"
    shown = CliRunner().invoke(main, ["show", "house-style@1.2.0", "--json"])
    assert json.loads(shown.output)["source"].endswith("house-style@1.2.0.md")
    listed = CliRunner().invoke(main, ["list"])
    assert [
        line.split()[1] for line in listed.output.splitlines() if line.startswith("house-style")
    ] == ["2.0.0", "1.2.0", "1.1.0"]
    assert "(by pin only: house-style@1.2.0)" in listed.output


def test_a_versioned_file_must_hold_that_version(project: Path) -> None:
    folder = project / "rubrics"
    folder.mkdir()
    (folder / "house-style.md").write_text(versioned("house-style", "2.0.0"))
    (folder / "house-style@1.2.0.md").write_text(versioned("house-style", "1.3.0"))
    with pytest.raises(
        RubricError, match="'1.3.0' does not match the file name 'house-style@1.2.0.md'"
    ):
        load_rubric("house-style@^1")


def test_strict_validation_fails_what_is_unfinished(project: Path) -> None:
    CliRunner().invoke(main, ["new", "draft"])
    draft = project / "rubrics" / "draft.md"
    assert CliRunner().invoke(main, ["validate", str(draft)]).exit_code == 0
    strict = CliRunner().invoke(main, ["validate", "--strict", str(draft)])
    assert strict.exit_code == 1
    assert f"{draft}: body: still holds scaffold placeholder text" in strict.output
    lopsided = VALID_RUBRIC.replace("expected: fail", "expected: pass")
    (project / "rubrics" / "lopsided.md").write_text(
        lopsided.replace("name: tiny", "name: lopsided")
    )
    result = CliRunner().invoke(main, ["validate", "--strict", "lopsided"])
    assert "goldens: no golden expects fail" in result.output
    assert "body: names `set_grade_pass`, a tool not offered in every tool mode" in result.output


def test_the_builtins_pass_strict_validation() -> None:
    from rubriclib.rubrics.registry import builtin_names

    result = CliRunner().invoke(main, ["validate", "--strict", *builtin_names()])
    assert result.exit_code == 0, result.output


def test_validate_takes_a_goldens_file_on_its_own(project: Path) -> None:
    good = project / "good.yaml"
    good.write_text("- {name: a, output: x, expected: pass}\n")
    bad = project / "bad.yaml"
    bad.write_text("- {name: a, output: x}\n")
    result = CliRunner().invoke(main, ["validate", str(good), str(bad)])
    assert result.exit_code == 1
    assert f"{good}: ok (1 golden; read alone: --rubric REF checks them for a rubric)" in (
        result.output
    )
    assert f"{bad}:1: goldens[0].expected: is required" in result.output

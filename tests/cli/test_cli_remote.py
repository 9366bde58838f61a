"""Remote rubrics on the command line: --offline on the commands that resolve rubrics, the
rubric cache in `rubriclib cache`, and no credential anywhere a user can see."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner
from remote_repos import RubricRepo, rubric_repo

from rubriclib.cli import main

__all__ = ["rubric_repo"]


def test_show_offline_with_the_repository_gone(rubric_repo: RubricRepo) -> None:
    ref = f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md"
    online = CliRunner().invoke(main, ["show", ref, "--json"])
    assert online.exit_code == 0, online.output
    commit = rubric_repo.git("rev-parse", "v1.0.0")
    assert json.loads(online.output)["source"] == f"remote:{ref} (commit {commit})"
    shutil.rmtree(rubric_repo.folder)
    offline = CliRunner().invoke(main, ["show", ref, "--json", "--offline"])
    assert offline.exit_code == 0 and json.loads(offline.output)["name"] == "house"
    gone = CliRunner().invoke(main, ["show", ref, "--json"])  # online, the repository gone
    assert gone.exit_code == 2 and "git ls-remote failed" in gone.stderr


def test_an_offline_miss_is_exit_2_naming_the_fetching_command(rubric_repo: RubricRepo) -> None:
    ref = f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md"
    for arguments, environment in [
        (["show", ref, "--offline"], {}),
        (["render", ref, "--output", "x", "--offline"], {}),
        (["show", ref], {"RUBRICLIB_OFFLINE": "1"}),
    ]:
        result = CliRunner(env=environment).invoke(main, arguments)
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output + result.stderr
        assert f"run `rubriclib lock {ref}` online to fetch it" in result.stderr
    assert CliRunner().invoke(main, ["show", ref]).exit_code == 0  # --offline did not stick


def test_offline_is_offered_by_every_command_that_resolves_rubrics() -> None:
    for command in ["show", "render", "list", "validate", "lock", "check", "eval", "judge"]:
        help_text = CliRunner().invoke(main, [command, "--help"]).output
        assert "--offline" in help_text, command
    assert "--offline" in CliRunner().invoke(main, ["batch", "prepare", "--help"]).output
    assert "--offline" not in CliRunner().invoke(main, ["config", "--help"]).output


def test_cache_shows_and_clears_both_caches(rubric_repo: RubricRepo, tmp_path: Path) -> None:
    ref = f"git+{rubric_repo.url}@v1.0.0#rubrics/house.md"
    assert CliRunner().invoke(main, ["show", ref]).exit_code == 0
    folder = tmp_path / "verdict-cache" / "rubrics"
    info = json.loads(CliRunner().invoke(main, ["cache", "info", "--json"]).output)
    assert info["rubrics"]["path"] == str(folder)
    assert (info["rubrics"]["files"], info["rubrics"]["references"]) == (1, 1)
    text = CliRunner().invoke(main, ["cache", "info"]).output
    assert f"rubric cache: {folder}\nrubric files: 1 (1 reference(s))" in text
    only = CliRunner().invoke(main, ["cache", "clear", "--verdicts"]).output
    assert only == "Removed 0 cached verdict(s)\n"
    cleared = CliRunner().invoke(main, ["cache", "clear", "--rubrics"]).output
    assert cleared == f"Removed 1 fetched rubric(s) from {folder}\n"
    after = CliRunner().invoke(main, ["show", ref, "--offline"])
    assert after.exit_code == 2 and "is not in the rubric cache" in after.stderr


def test_no_credential_reaches_an_error_or_the_cache(tmp_path: Path) -> None:
    secret = "ghp_s3cr3tT0ken"
    ref = f"git+https://alice:{secret}@example.com/org/repo@v1#x.md"
    result = CliRunner().invoke(main, ["show", ref])
    assert result.exit_code == 2 and "holds credentials" in result.stderr
    assert secret not in result.output + result.stderr
    cache = tmp_path / "verdict-cache"
    assert not cache.exists() or all(secret not in str(p) for p in cache.rglob("*"))

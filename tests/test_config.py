"""Project configuration: one precedence rule (flag, environment, config file, default)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import KEYWORD_RUBRIC, SECRET_KEY
from judge_server import JudgeServer, tool_reply

from rubriclib import load_rubric
from rubriclib.cli import main
from rubriclib.config import resolve
from rubriclib.judge import Judge


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    return tmp_path


def test_precedence_is_flag_then_environment_then_config_then_default(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve("model").origin == "default"
    (project / "rubriclib.toml").write_text('model = "from-config"\n')
    assert (resolve("model").value, resolve("model").origin) == (
        "from-config",
        str(project / "rubriclib.toml"),
    )
    monkeypatch.setenv("RUBRICLIB_MODEL", "from-env")
    assert resolve("model").origin == "env RUBRICLIB_MODEL"
    assert resolve("model", "from-flag").value == "from-flag"
    assert Judge(base_url="http://127.0.0.1:1/v1").model == "from-env"
    monkeypatch.delenv("RUBRICLIB_MODEL")
    assert Judge(base_url="http://127.0.0.1:1/v1").model == "from-config"
    assert Judge("flag-model", base_url="http://127.0.0.1:1/v1").model == "flag-model"


def test_pyproject_paths_are_relative_to_the_config_file(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.rubriclib]\npaths = ["shared/rubrics"]\n')
    folder = project / "shared" / "rubrics"
    folder.mkdir(parents=True)
    (folder / "keywords.md").write_text(KEYWORD_RUBRIC)
    assert load_rubric("keywords").source == f"file:{folder / 'keywords.md'}"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('modle = "x"\n', "modle: unknown setting"),
        ("concurrency = 0\n", "concurrency: must be an integer of at least 1, not 0"),
        ("model = [", "config: cannot be read"),
    ],
)
def test_a_bad_config_is_named_by_file_and_key(project: Path, text: str, fragment: str) -> None:
    (project / "rubriclib.toml").write_text(text)
    result = CliRunner().invoke(main, ["show", "groundedness"])
    assert result.exit_code == 2
    assert f"rubriclib: error: {project / 'rubriclib.toml'}: {fragment}" in result.stderr


def test_config_prints_values_and_origins_never_the_key(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "pyproject.toml").write_text("[tool.rubriclib]\nconcurrency = 3\n")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    result = CliRunner().invoke(main, ["config"])
    assert result.exit_code == 0 and SECRET_KEY not in result.output
    assert f"concurrency: 3  ({project / 'pyproject.toml'} [tool.rubriclib])" in result.output
    assert "base_url: 'http://127.0.0.1:9/v1'  (env OPENAI_BASE_URL)" in result.output
    assert "api key: set (OPENAI_API_KEY)" in result.output
    data = json.loads(CliRunner().invoke(main, ["config", "--json"]).output)
    assert data["settings"]["model"] == {"value": "gpt-4o-mini", "from": "default"}


def test_the_config_sets_concurrency_and_cache_for_commands(
    project: Path, judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUBRICLIB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(project / "xdg"))
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    (project / "rubrics").mkdir()
    (project / "rubrics" / "keywords.md").write_text(KEYWORD_RUBRIC)
    (project / "rubriclib.toml").write_text("concurrency = 1\ncache = false\n")

    def slow(body: dict[str, object]) -> object:
        import time

        time.sleep(0.05)
        return tool_reply("set_grade_pass", {"reason": "r"})

    judge_server.responder = slow  # type: ignore[assignment]
    result = CliRunner().invoke(main, ["test-goldens", "keywords"])
    assert result.exit_code == 1  # says-fail is judged pass
    assert judge_server.max_in_flight == 1
    assert not (project / "xdg").exists()  # cache = false: no cache was opened

"""Project configuration: one precedence rule (flag, environment, config file, default)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import KEYWORD_RUBRIC, SECRET_KEY
from judge_server import JudgeServer, tool_reply

from rubriclib import load_rubric
from rubriclib.cli import main
from rubriclib.config import resolve
from rubriclib.judging.judge import Judge


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


BAD_HEADER_VALUES = [
    ("sk-te st\nx-injected: 1", "line break"),
    ("sk-test\r\n", "ends with a line break (a key file saved with Windows line endings?)"),
    ("sk-te st", "space"),
    ("sk-t\tst", "control character"),
    ("sk-tést", "non-ASCII"),
]


@pytest.mark.parametrize(("value", "problem"), BAD_HEADER_VALUES)
def test_a_header_value_is_refused_naming_the_variable_never_the_value(
    value: str, problem: str
) -> None:
    from rubriclib.config import check_header_value
    from rubriclib.errors import JudgeConfigError

    assert check_header_value("MY_KEY", "sk-test-0123") == "sk-test-0123"
    with pytest.raises(JudgeConfigError) as raised:
        check_header_value("MY_KEY", value)
    assert str(raised.value).startswith("MY_KEY: ") and problem in str(raised.value)
    assert value.strip() not in str(raised.value) and "sk-t" not in str(raised.value)


def eval_with_key_variable(write_file: Any, url: str, variable: str) -> Path:
    write_file("rows.jsonl", '{"id": "r1", "output": "verdict:pass"}\n')
    key = f", api_key_env: {variable}" if variable == "MY_JUDGE_KEY" else ""
    return write_file(
        "eval.yaml",
        f"name: e\ndataset: rows.jsonl\njudge: {{model: judge-model{key}, base_url: '{url}'}}\n"
        "graders:\n  - {name: g, rubric: keywords}\n",
    )


@pytest.mark.parametrize(("value", "problem"), BAD_HEADER_VALUES)
@pytest.mark.parametrize(
    "variable", ["OPENAI_API_KEY", "MY_JUDGE_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID"]
)
def test_a_bad_credential_stops_judge_and_eval_before_any_request(
    endpoint: JudgeServer,
    library: Path,
    write_file: Any,
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    problem: str,
) -> None:
    monkeypatch.setenv(variable, value)
    path = eval_with_key_variable(write_file, endpoint.url, variable)
    commands = [["judge", "keywords", "--output", "verdict:pass"], ["eval", str(path)]]
    if variable == "MY_JUDGE_KEY":
        commands = commands[1:]  # only the eval file names that variable
    for command in commands:
        result = CliRunner().invoke(main, command)
        assert result.exit_code == 2, (command, result.output)
        assert f"{variable}: " in result.stderr and problem in result.stderr
        assert value.strip() not in result.output and "Traceback" not in result.output
    assert endpoint.requests == [] and endpoint.headers == []


def test_a_targets_bad_key_stops_the_eval_before_any_request(
    endpoint: JudgeServer, library: Path, write_file: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WRITER_KEY", "sk-writer\r\n")
    write_file("rows.jsonl", '{"id": "r1", "input": "hi"}\n')
    path = write_file(
        "eval.yaml",
        "name: e\ndataset: rows.jsonl\njudge: {model: judge-model}\n"
        f"target: {{model: writer, api_key_env: WRITER_KEY, base_url: '{endpoint.url}'}}\n"
        "graders:\n  - {name: g, rubric: keywords}\n",
    )
    result = CliRunner().invoke(main, ["eval", str(path)])
    assert result.exit_code == 2, result.output
    assert "WRITER_KEY: ends with a line break" in result.stderr
    assert endpoint.requests == []


def test_a_bad_key_never_reaches_the_socket_through_the_sdk_client(
    endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rubriclib.errors import JudgeConfigError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-te st\nx-injected: 1")
    for transport in ("auto", "sdk"):
        with pytest.raises(JudgeConfigError, match="OPENAI_API_KEY: "):
            Judge(base_url=endpoint.url, transport=transport)  # type: ignore[arg-type]
    with pytest.raises(JudgeConfigError, match="api_key: "):
        Judge(base_url=endpoint.url, api_key="sk-te st\nx-injected: 1")
    assert endpoint.headers == []


def test_a_named_key_variable_that_is_unset_never_falls_back_to_openai_api_key(
    endpoint: JudgeServer, library: Path, write_file: Any
) -> None:
    path = eval_with_key_variable(write_file, endpoint.url, "MY_JUDGE_KEY")
    result = CliRunner().invoke(main, ["eval", str(path)])
    assert result.exit_code == 2, result.output
    assert "api_key_env: $MY_JUDGE_KEY is not set" in result.stderr
    assert endpoint.headers == []


BAD_BASE_URLS = [
    ("not-a-url", "http:// or https://"),
    ("ftp://127.0.0.1/v1", "http:// or https://"),
    ("http:///v1", "no host"),
    ("http://127.0.0.1:notaport/v1", "bad port"),
    ("http://127.0.0.1/v1\r\nX-Injected: 1", "line break"),
]


@pytest.mark.parametrize(("url", "problem"), BAD_BASE_URLS)
def test_a_base_url_from_the_environment_is_refused_naming_the_variable(
    library: Path, monkeypatch: pytest.MonkeyPatch, url: str, problem: str
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    result = CliRunner().invoke(main, ["judge", "keywords", "--output", "verdict:pass"])
    assert result.exit_code == 2, result.output
    assert "OPENAI_BASE_URL: " in result.stderr and problem in result.stderr
    assert "cannot connect" not in result.output


def test_a_base_url_from_the_config_file_names_the_file_and_key(
    project: Path, library: Path
) -> None:
    (project / "rubriclib.toml").write_text('base_url = "not-a-url"\n')
    result = CliRunner().invoke(main, ["judge", "keywords", "--output", "verdict:pass"])
    assert result.exit_code == 2, result.output
    assert f"{project / 'rubriclib.toml'}: base_url: " in result.stderr


@pytest.mark.parametrize("section", ["judge", "target"])
def test_a_base_url_in_an_eval_file_is_refused_with_its_line(
    endpoint: JudgeServer, library: Path, write_file: Any, section: str
) -> None:
    write_file("rows.jsonl", '{"id": "r1", "input": "hi", "output": "verdict:pass"}\n')
    path = write_file(
        "eval.yaml",
        "name: e\ndataset: rows.jsonl\n"
        f"{section}:\n  model: judge-model\n  base_url: not-a-url\n"
        "graders:\n  - {name: g, rubric: keywords}\n",
    )
    result = CliRunner().invoke(main, ["eval", str(path)])
    assert result.exit_code == 2, result.output
    assert f"{path}:5: " in result.stderr and "base_url" in result.stderr
    assert "http:// or https://" in result.stderr and endpoint.requests == []


def test_the_judge_key_is_the_given_one_then_the_environments_then_none_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rubriclib.config import Setting, judge_key
    from rubriclib.errors import JudgeConfigError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-environment")
    assert judge_key("sk-given", None) == Setting("sk-given", "api_key")
    assert judge_key(None, None) == Setting("sk-environment", "env OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_API_KEY")
    assert judge_key(None, "http://127.0.0.1:8000/v1") == Setting("not-needed", "default")
    with pytest.raises(JudgeConfigError, match="no API key: set OPENAI_API_KEY"):
        judge_key("", None)
    with pytest.raises(JudgeConfigError, match="api_key"):
        judge_key("sk-bad\nInjected: header", None)

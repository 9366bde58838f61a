"""The README's two examples, run as written: the library call and the eval file."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import README, snippet
from judge_server import JudgeServer

from rubriclib.cli import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "support"


def test_the_readme_library_example_judges_with_the_rubric_it_names(
    endpoint: JudgeServer,
) -> None:
    namespace: dict[str, Any] = {}
    exec(snippet("readme-library"), namespace)  # noqa: S102 - the README's own example
    result = namespace["result"]
    assert result.verdict in ("pass", "fail")
    assert set(result.details["rubric"]) == {"name", "version", "scale", "source", "digest"}
    assert result.details["rubric"]["name"] == "groundedness"
    sent = endpoint.requests[-1]["messages"][1]["content"]
    assert "Apollo 11 landed in 1969." in sent and "Apollo 11 landed on 20 July 1969." in sent


def test_the_readme_eval_file_plans_the_example_with_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's eval file, beside the example's dataset and house-style rubric, is a
    valid eval that `--dry-run` plans without a key or a request."""
    work = tmp_path / "support"
    shutil.copytree(EXAMPLE, work)
    (work / "eval.yaml").write_text(snippet("readme-eval"), encoding="utf-8")
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["eval", "eval.yaml", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "plan: 20 row(s) x 3 grader(s)" in result.output.splitlines()[-1]
    assert f"$ rubriclib eval {EXAMPLE.relative_to(EXAMPLE.parents[1])}/eval.yaml --dry-run" in (
        README.read_text(encoding="utf-8")
    )

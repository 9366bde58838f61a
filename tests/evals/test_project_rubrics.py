"""A project's eval files and the rubrics they use: what `rubriclib lock` and `check` cover."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import VALID_RUBRIC

from rubriclib.evals.project import eval_files, project_rubrics

EVAL = """\
name: demo
rows: [{input: q, context: c, output: o}]
graders:
  - {name: grounded, rubric: groundedness}
  - {name: house, rubric: ../rubrics/house.md}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "house.md").write_text(
        VALID_RUBRIC.replace("name: tiny", "name: house")
    )
    for folder in ("evals", ".venv", "node_modules", ".hidden"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "demo.yaml").write_text(EVAL)
    (tmp_path / "evals" / "settings.yaml").write_text("model: gpt-4o-mini\n")  # no graders
    (tmp_path / "evals" / "broken.yml").write_text("graders: [\n")  # not YAML: not an eval
    monkeypatch.chdir(tmp_path / "evals")
    return tmp_path


def test_eval_files_are_the_yaml_files_with_graders_outside_skipped_folders(
    project: Path,
) -> None:
    assert eval_files(project) == [project / "evals" / "demo.yaml"]


def test_a_project_uses_its_rubrics_folder_and_every_rubric_its_evals_name(project: Path) -> None:
    used = sorted((rubric.name, rubric.source.split(":")[0]) for rubric in project_rubrics())
    assert used == [("groundedness", "builtin"), ("house", "file")]


def test_named_references_are_the_only_rubrics_used(project: Path) -> None:
    assert [rubric.name for rubric in project_rubrics(["groundedness"])] == ["groundedness"]

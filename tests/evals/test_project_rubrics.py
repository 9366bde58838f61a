"""A project's eval files and the rubrics they use: what `rubriclib lock` and `check` cover."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import VALID_RUBRIC

from rubriclib.errors import EvalError
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
    (tmp_path / "evals" / "broken.yml").write_text("steps: [\n")  # not YAML, no graders line
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


def test_an_eval_file_is_scanned_without_a_dataset_in_every_shape(project: Path) -> None:
    """Only a run reads rows: an eval file to be run with --dataset FILE (ours, waza's,
    letta's) still names the rubrics it uses."""
    evals = project / "evals"
    (evals / "demo.yaml").write_text(
        EVAL.replace("rows: [{input: q, context: c, output: o}]\n", "")
    )
    (evals / "waza.yaml").write_text(
        "name: w\ngraders:\n  - {type: prompt, name: h, config: {rubric: helpfulness}}\n"
    )
    (evals / "suite.yaml").write_text(
        "name: s\ngraders:\n  c: {kind: tool, function: grader.py:../rubrics/house.md}\n"
    )
    (evals / "grader.py").write_text("from rubriclib.integrations.letta import graders_for\n")
    used = sorted((rubric.name, rubric.source.split(":")[0]) for rubric in project_rubrics())
    assert used == [("groundedness", "builtin"), ("helpfulness", "builtin"), ("house", "file")]


def test_a_bad_rubric_reference_in_an_eval_without_a_dataset_is_reported_at_its_line(
    project: Path,
) -> None:
    (project / "evals" / "demo.yaml").write_text(
        "name: demo\ngraders:\n  - name: grounded\n    rubric: groundednes\n"
    )
    with pytest.raises(EvalError) as raised:
        project_rubrics()
    [problem] = raised.value.problems
    assert str(problem).startswith(f"{project / 'evals' / 'demo.yaml'}:4: graders[0].rubric: ")
    assert "no rubric named 'groundednes'. Did you mean 'groundedness'?" in str(problem)


def test_an_eval_file_that_is_not_yaml_is_reported_not_skipped(project: Path) -> None:
    (project / "evals" / "typo.yaml").write_text(
        "name: typo\ngraders:\n  - {name: g, rubric: groundedness\n"
    )
    assert project / "evals" / "typo.yaml" in eval_files(project)
    with pytest.raises(EvalError) as raised:
        project_rubrics()
    [problem] = raised.value.problems
    assert str(problem).startswith(
        f"{project / 'evals' / 'typo.yaml'}:3: eval file: invalid YAML: a flow mapping starts here"
    )


def test_a_waza_task_file_is_read_with_its_eval_not_as_an_eval_of_its_own(
    project: Path,
) -> None:
    """A task file has graders too, but its rubric paths resolve beside eval.yaml."""
    waza = project / "waza"
    (waza / "tasks").mkdir(parents=True)
    (waza / "eval.yaml").write_text(
        "name: w\ntasks: ['tasks/*.yaml']\n"
        "graders:\n  - {type: prompt, name: h, config: {rubric: helpfulness}}\n"
    )
    (waza / "tasks" / "one.yaml").write_text(
        "id: one\ngraders:\n  - {type: prompt, name: g, config: {rubric: ../rubrics/house.md}}\n"
    )
    assert waza / "tasks" / "one.yaml" not in eval_files(project)
    assert waza / "eval.yaml" in eval_files(project)
    used = sorted(rubric.name for rubric in project_rubrics())
    assert used == ["groundedness", "helpfulness", "house"]

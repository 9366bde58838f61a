"""`rubriclib eval --engine`: what the Ray engine cannot run is refused with exit 2, naming the
file and key, before any request and before Ray starts (none of this needs Ray: the real runs
are in tests/integrations/test_ray_engine.py)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer

from rubriclib.cli import main

ROWS = [{"id": "r1", "output": "verdict:pass one"}, {"id": "r2", "output": "verdict:fail two"}]
EVAL = """\
name: kw
dataset: rows.jsonl
judge: {model: judge-model}
graders:
  - name: kw
    rubric: keywords
"""
EXAMPLES = Path(__file__).parent.parent.parent / "examples"


@pytest.fixture
def eval_file(library: Path, write_file: Callable[..., Path]) -> Path:
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    return write_file("eval.yaml", EVAL)


def ray_eval(eval_file: Path, *more: str) -> Any:
    out = eval_file.parent / "results.jsonl"
    arguments = ["eval", str(eval_file), "--out", str(out), "--engine", "ray", *more]
    return CliRunner().invoke(main, arguments)


def refused(result: Any) -> list[str]:
    """The lines of a refusal (exit 2, no traceback), after `rubriclib: error: `."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return [line.removeprefix("rubriclib: error: ") for line in result.stderr.splitlines()]


def test_a_target_is_refused_naming_the_key(eval_file: Path, endpoint: JudgeServer) -> None:
    eval_file.write_text(EVAL.replace("judge:", "target: {model: writer}\njudge:"))
    [line] = refused(ray_eval(eval_file))
    assert line.startswith(f"{eval_file}: target: --engine ray cannot run a target model")
    assert "use --engine local" in line
    assert endpoint.request_count == 0 and not (eval_file.parent / "results.jsonl").exists()


def test_a_panel_and_an_inline_prompt_are_refused_each_on_its_line(
    eval_file: Path, endpoint: JudgeServer
) -> None:
    eval_file.write_text(
        EVAL
        + "  - name: both\n    rubric: keywords\n    judges: [{model: a}, {model: b}]\n"
        + "  - name: asked\n    prompt: 'Pass when {output} is short.'\n"
    )
    lines = refused(ray_eval(eval_file, "--dry-run"))
    assert [line.split(": ")[:2] for line in lines] == [
        [str(eval_file), "graders.both.panel"],
        [str(eval_file), "graders.asked.prompt"],
    ]
    assert "a judge panel" in lines[0] and "a rubric file's text" in lines[1]
    assert endpoint.request_count == 0


def test_a_letta_evals_file_is_refused(tmp_path: Path, endpoint: JudgeServer) -> None:
    shutil.copytree(EXAMPLES / "letta", tmp_path / "letta")
    suite = tmp_path / "letta" / "suite.yaml"
    [line] = refused(ray_eval(suite))
    assert line.startswith(f"{suite}: graders: --engine ray cannot run a letta-evals file")
    assert "turn by turn" in line
    assert endpoint.request_count == 0


def test_batch_and_a_stray_address_are_refused(eval_file: Path, endpoint: JudgeServer) -> None:
    batch = ray_eval(eval_file, "--batch")
    assert "Error: --engine ray and --batch: choose one" in "\n".join(refused(batch))
    out = str(eval_file.parent / "results.jsonl")
    stray = CliRunner().invoke(main, ["eval", str(eval_file), "--out", out, "--address", "x:1"])
    assert "Error: --address needs --engine ray" in refused(stray)
    assert endpoint.request_count == 0 and not Path(out).exists()


def test_ray_not_installed_says_which_extra_to_install(
    eval_file: Path, endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *more: None if name == "ray" else find(name)
    )
    out = eval_file.parent / "results.jsonl"
    out.write_text("kept as it was\n")
    [line] = refused(ray_eval(eval_file, "--force"))
    assert line == "--engine ray: ray is not installed here: pip install 'rubriclib[ray]'"
    assert endpoint.request_count == 0 and out.read_text() == "kept as it was\n"


def test_the_local_engine_is_the_default_and_unchanged(
    eval_file: Path, endpoint: JudgeServer
) -> None:
    out = eval_file.parent / "results.jsonl"
    runs = [
        CliRunner().invoke(main, ["eval", str(eval_file), "--out", str(out), "--no-cache", *more])
        for more in ([], ["--force", "--engine", "local"])
    ]
    assert [run.exit_code for run in runs] == [0, 0]
    assert runs[0].stdout == runs[1].stdout and endpoint.request_count == 4

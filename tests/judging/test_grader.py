"""The Grader protocol: Judge and Panel alike are what the engine drives, and the engine knows
neither (its imports point only up the pipeline)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import rubriclib

PACKAGE = Path(rubriclib.__file__).parent / "judging"


def imported_modules(module: str) -> list[tuple[str, bool]]:
    """Every rubriclib module `module` imports, anywhere in its file (at module level or not)."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found += [(name, id(node) in top_level) for name in names if name.startswith("rubriclib")]
    return found


def test_the_engine_never_imports_the_judge() -> None:
    imports = [name for name, _ in imported_modules("engine")]
    assert "rubriclib.judging.grader" in imports  # what it drives instead
    assert not [name for name in imports if name.startswith("rubriclib.judging.judge")]
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, rubriclib.judging.engine; print(sorted(m for m in sys.modules if 'rubriclib' in m))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "rubriclib.judging.engine" in loaded
    assert "rubriclib.judging.judge" not in loaded
    assert "rubriclib.judging.panel" not in loaded


@pytest.mark.parametrize("module", ["judge", "panel"])
def test_judge_and_panel_reach_the_engine_only_from_the_top_of_their_file(module: str) -> None:
    lazy = [name for name, top in imported_modules(module) if not top]
    assert not [name for name in lazy if name.startswith("rubriclib.judging.engine")]


def test_mypy_takes_a_judge_and_a_panel_as_graders_and_refuses_what_is_not_one() -> None:
    mypy = pytest.importorskip("mypy.api")
    snippet = (
        "from rubriclib.judging.grader import Grader\n"
        "from rubriclib.judging.judge import Judge\n"
        "from rubriclib.judging.panel import Panel\n"
        "def graders(judge: Judge) -> list[Grader]:\n"
        "    return [judge, Panel([judge])]\n"
        "not_a_grader: Grader = object()\n"
    )
    out, err, status = mypy.run(["--strict", "--no-error-summary", "-c", snippet])
    assert status == 1, out + err
    [line] = out.splitlines()
    assert line.startswith("<string>:6: error: Incompatible types in assignment"), line

"""Each room's face: every name it lists loads from its home, and type checkers see the same
names (mypy takes a face's `__getattr__` as Any, so a name missing there would pass it)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import rubriclib

ROOT = Path(rubriclib.__file__).parent
FACES = sorted(
    path.parent.name for path in ROOT.glob("*/__init__.py") if "_HOMES" in path.read_text()
)


def typed_names(package: str) -> set[str]:
    """The names a face imports under TYPE_CHECKING."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text())
    checking = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
    )
    return {alias.asname or alias.name for node in checking.body for alias in node.names}  # type: ignore[attr-defined]


def test_every_room_the_contract_protects_has_a_face() -> None:
    assert {"batch", "evals", "item", "judging", "measure", "reports", "rubrics"} <= set(FACES)


@pytest.mark.parametrize("package", FACES)
def test_a_face_loads_each_name_from_its_home(package: str) -> None:
    face = importlib.import_module(f"rubriclib.{package}")
    homes = face._HOMES
    assert set(homes) == typed_names(package)
    for name, home in homes.items():
        module, _, attribute = home.partition(":")
        expected = getattr(importlib.import_module(module, face.__name__), attribute or name)
        assert getattr(face, name) is expected
    assert set(homes) <= set(dir(face))
    with pytest.raises(AttributeError, match=f"module 'rubriclib.{package}' has no attribute"):
        face.no_such_name  # noqa: B018


def test_the_package_face_exports_align_though_measure_has_a_module_of_that_name() -> None:
    """Importing measure/align.py sets `align` on the measure package, so the package face
    takes the function from the measure face's `align_rubric`, whichever is imported first."""
    probe = (
        "import rubriclib.measure.align, rubriclib, rubriclib.measure.runs as runs; "
        "print(rubriclib.align is runs.align, rubriclib.aalign is runs.aalign)"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["True", "True"]

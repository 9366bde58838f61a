"""A non-editable install carries every built-in rubric and goldens file inside the package."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_install_finds_every_builtin(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path / "dist"),
        ],
        check=True,
    )
    [wheel] = (tmp_path / "dist").glob("rubriclib-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(
        name.removeprefix("rubriclib/rubrics/builtin/")
        for name in names
        if name.startswith("rubriclib/rubrics/builtin/")
    )
    assert shipped == sorted(path.name for path in (ROOT / "rubrics").glob("*.md"))
    goldens = [name for name in names if name.startswith("rubriclib/rubrics/goldens/")]
    assert len(goldens) == len(list((ROOT / "goldens").glob("*.yaml")))

    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    probe = (
        "import rubriclib, pathlib;"
        "print(pathlib.Path(rubriclib.__file__).parent);"
        "print(*sorted(r.name + '=' + r.source for r in rubriclib.list_rubrics()));"
        "print(len(rubriclib.load_goldens(rubriclib.load_rubric('groundedness'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert out[0] == str(target / "rubriclib")
    expected = sorted(f"{p.stem}=builtin:{p.stem}" for p in (ROOT / "rubrics").glob("*.md"))
    assert out[1].split() == expected
    assert int(out[2]) >= 2

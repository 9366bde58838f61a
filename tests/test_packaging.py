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

    # the public face, the entry points and the documented integration paths, from the wheel
    face = (
        "import importlib, importlib.metadata as m, rubriclib;"
        "print(*[n for n in rubriclib.__all__ if getattr(rubriclib, n, None) is None]);"
        "print(sorted(n for n in __import__('sys').modules if n.startswith(('openai', 'aiohttp'))));"
        "points = m.distribution('rubriclib').entry_points;"
        "print(*sorted(f'{p.group}={p.value}' for p in points));"
        "print(*[callable(p.load()) or p.load().__name__ for p in points]);"
        "from rubriclib.integrations.inspect import rubric_scorer;"
        "from rubriclib.integrations.letta import rubric_grader;"
        "from rubriclib.integrations.promptfoo import get_assert;"
        "print(rubric_scorer.__module__, rubric_grader.__module__, get_assert.__module__)"
    )
    env["PYTHONPATH"] = f"{target}{os.pathsep}{env.get('PYTHONPATH', '')}"
    shown = subprocess.run(
        [sys.executable, "-c", face], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    missing, heavy, points, loaded, paths = shown.stdout.split("\n")[:5]
    assert missing == ""  # every name in __all__ resolves
    assert heavy == "[]"  # and none of them imports openai or aiohttp on its own
    assert points.split() == [
        "console_scripts=rubriclib.cli:main",
        "pytest11=rubriclib.integrations.pytest_plugin",
    ]
    assert loaded.split() == ["True", "rubriclib.integrations.pytest_plugin"]
    assert paths.split() == [
        "rubriclib.integrations.inspect",
        "rubriclib.integrations.letta",
        "rubriclib.integrations.promptfoo",
    ]
    console = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, rubriclib.cli; sys.argv[0] = 'rubriclib'; rubriclib.cli.main()",
            "--version",
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert console.returncode == 0 and console.stdout.startswith("rubriclib"), console.stderr

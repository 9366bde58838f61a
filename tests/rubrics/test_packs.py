"""Rubric packs: scaffolded, built into a wheel, installed, resolved by name and judged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, VALID_RUBRIC
from judge_server import JudgeServer, tool_reply

from rubriclib.cli import main

RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")


def build_and_install(pack: Path, target: Path) -> None:
    dist = pack.parent / f"{pack.name}-dist"
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.run(
        [*pip, "wheel", str(pack), "--no-deps", "--no-build-isolation", "-w", str(dist)],
        check=True,
    )
    [wheel] = dist.glob("*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two packs, built from `rubriclib new-pack` scaffolds and installed into one folder; the
    second also defines the first's example rubric, to make the two collide."""
    work = tmp_path_factory.mktemp("packs")
    runner = CliRunner()
    for name in ("acme-rubrics", "beta-rubrics"):
        result = runner.invoke(main, ["new-pack", name, "--dir", str(work)])
        assert result.exit_code == 0, result.output
    clash = VALID_RUBRIC.replace("name: tiny", "name: shared-name")
    for package in ("acme_rubrics", "beta_rubrics"):
        (work / package.replace("_", "-") / package / "rubrics" / "shared-name.md").write_text(
            clash
        )
    target = work / "site"
    for name in ("acme-rubrics", "beta-rubrics"):
        build_and_install(work / name, target)
    return target


def cli(
    target: Path, *arguments: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **(env or {}), "PYTHONPATH": str(target)}
    return subprocess.run(
        [RUBRICLIB, *arguments],
        env=environment,
        capture_output=True,
        text=True,
        cwd=target,
        timeout=60,
    )


def test_an_installed_pack_resolves_by_name_and_judges(
    installed: Path, judge_server: JudgeServer
) -> None:
    shown = cli(installed, "show", "acme-rubrics-example", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["source"] == "pack:acme-rubrics:acme-rubrics-example"
    judge_server.responder = lambda body: tool_reply("set_grade_pass", {"reason": "fine"})
    env = {"OPENAI_BASE_URL": judge_server.url, "OPENAI_API_KEY": SECRET_KEY}
    judged = cli(
        installed,
        "judge",
        "acme-rubrics-example",
        "--output",
        "x",
        "--input",
        "q",
        "--json",
        "--no-cache",
        env=env,
    )
    assert judged.returncode == 0, judged.stderr
    result = json.loads(judged.stdout)
    assert result["verdict"] == "pass"
    assert result["details"]["rubric"]["source"] == "pack:acme-rubrics:acme-rubrics-example"


def test_list_shows_packs_before_the_builtins(installed: Path) -> None:
    listed = cli(installed, "list", "--json")
    sources = [row["source"] for row in json.loads(listed.stdout) if row["default"]]
    assert "pack:beta-rubrics:beta-rubrics-example" in sources
    assert "builtin:groundedness" in sources
    table = cli(installed, "list").stdout
    assert (
        table.index("pack acme-rubrics:")
        < table.index("pack beta-rubrics:")
        < table.index("built-in:")
    )


def test_two_packs_with_one_name_is_an_error_unless_pinned(installed: Path) -> None:
    bare = cli(installed, "show", "shared-name")
    assert bare.returncode == 2
    assert (
        "two packs define 'shared-name': pack:acme-rubrics:shared-name and pack:beta-rubrics:shared-name"
        in bare.stderr
    )
    pinned = cli(installed, "show", "shared-name@1.2.3", "--json")
    assert pinned.returncode == 0 and json.loads(pinned.stdout)["version"] == "1.2.3"


def test_new_pack_refuses_an_existing_folder(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    result = CliRunner().invoke(main, ["new-pack", "mine", "--dir", str(tmp_path)])
    assert result.exit_code == 2 and "already exists" in result.stderr

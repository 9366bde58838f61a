"""The command outputs the docs show are what the commands print today."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snippet

from rubriclib.cli import main


def test_the_list_the_docs_show_is_what_rubriclib_list_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line shown (the versions included) is a line `rubriclib list` prints, in order."""
    command, *shown = snippet("list-output").splitlines()
    assert command == "$ rubriclib list"
    monkeypatch.chdir(tmp_path)  # no project rubrics: the built-ins alone
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0, result.output
    printed = result.output.splitlines()
    kept = [line for line in shown if line != "..."]
    assert len(kept) >= 4
    at = -1
    for line in kept:
        at = printed.index(line, at + 1)  # ValueError: shown but not printed after the last

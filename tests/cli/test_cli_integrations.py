"""`rubriclib integrations promptfoo|letta`: the shim is written once, never over a user's file."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rubriclib.cli import main
from rubriclib.integrations import letta, promptfoo


@pytest.mark.parametrize(
    ("tool", "adapter", "usage"),
    [
        ("promptfoo", promptfoo, "value: file://{shim}"),
        ("letta", letta, "function: {shim}:groundedness@^1"),
    ],
)
def test_the_command_writes_the_shim_once(
    tmp_path: Path, tool: str, adapter: object, usage: str
) -> None:
    runner = CliRunner()
    command = ["integrations", tool, "--dir", str(tmp_path)]
    first = runner.invoke(main, command)
    shim = tmp_path / adapter.SHIM_FILENAME  # type: ignore[attr-defined]
    text = adapter.SHIM_TEXT  # type: ignore[attr-defined]
    assert first.exit_code == 0 and shim.read_text() == text
    assert f"wrote {shim}" in first.output and usage.format(shim=shim) in first.output
    again = runner.invoke(main, command)
    assert again.exit_code == 0 and again.output == f"{shim} is up to date\n"
    shim.write_text("# mine\n")
    refused = runner.invoke(main, command)
    assert refused.exit_code == 2 and shim.read_text() == "# mine\n"
    assert "exists and differs; pass --force to replace it" in refused.stderr
    forced = runner.invoke(main, [*command, "--force"])
    assert forced.exit_code == 0 and shim.read_text() == text
    missing = runner.invoke(main, ["integrations", tool, "--dir", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.stderr

"""`rubriclib integrations promptfoo|letta`: write the small file a tool loads by path."""

from __future__ import annotations

import importlib
from pathlib import Path

import click

from rubriclib.cli.app import BadInput, main, writable
from rubriclib.files import write_atomically


@main.group()
def integrations() -> None:
    """Write the file that plugs rubriclib into promptfoo or letta-evals."""


def write_shim(tool: str, folder: str, force: bool) -> None:
    """Write the adapter's shim into `folder`; never replace a different file without --force."""
    adapter = importlib.import_module(f"rubriclib.integrations.{tool}")
    target = writable(str(Path(folder) / adapter.SHIM_FILENAME), "--dir")
    if target.exists():
        current = target.read_text(encoding="utf-8", errors="replace")
        if current == adapter.SHIM_TEXT:
            click.echo(f"{target} is up to date")
            return
        if not force:
            raise BadInput(f"--dir: {target} exists and differs; pass --force to replace it")
    write_atomically(target, adapter.SHIM_TEXT)
    click.echo(f"wrote {target}")
    click.echo(adapter.USAGE.format(path=target))


DIR_OPTION = click.option(
    "--dir",
    "folder",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False),
    help="The folder to write the file into.",
)
FORCE_OPTION = click.option("--force", is_flag=True, help="Replace the file when it differs.")


@integrations.command("promptfoo")
@DIR_OPTION
@FORCE_OPTION
def promptfoo(folder: str, force: bool) -> None:
    """Write rubriclib_assert.py, a promptfoo Python assertion that judges with a rubric."""
    write_shim("promptfoo", folder, force)


@integrations.command("letta")
@DIR_OPTION
@FORCE_OPTION
def letta(folder: str, force: bool) -> None:
    """Write rubriclib_grader.py, a letta-evals custom grader that judges with a rubric."""
    write_shim("letta", folder, force)

"""The command-line reference as `--help` means it: a MkDocs hook (`hooks:` in mkdocs.yml) that
writes each option's row of mkdocs-click's table from click's own parameter: a range with its
open or closed bounds as `--help` prints it (`x>0`, `1<=x<=5`), the default click uses (a flag's
`False`; `none` where click has none, as click 8.3 keeps an unset one as `Sentinel.UNSET`); and
adds a Markdown preprocessor running after mkdocs-click's so a command's `Examples:` are a code
block, one command a line, as `--help` prints them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import click
from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs_click import _docs as mkdocs_click_docs

EXAMPLES = re.compile(r"Examples?\b.*:")
"""How a command's help opens its examples (`Examples:`, `Example (CI):`), after click's
`\\b`, which mkdocs-click drops."""
UNSET = "Sentinel.UNSET"
"""How click (8.3 on) writes a default left unset."""
TABLE_ROW = "_format_table_option_row"
"""mkdocs-click's (pinned in pyproject.toml) function writing an option's row, replaced here."""


def range_text(kind: click.IntRange | click.FloatRange) -> str:
    """A range as `--help` describes it: `x>=1`, `x>0`, `x<=10`, `0<=x<1`."""
    below = "<" if kind.max_open else "<="
    above = ">" if kind.min_open else ">="
    if kind.min is None:
        return f"x{below}{kind.max}"
    if kind.max is None:
        return f"x{above}{kind.min}"
    return f"{kind.min}{'<' if kind.min_open else '<='}x{below}{kind.max}"


def default_text(option: click.Option) -> str:
    """The default click gives the option when it is not typed, or `none`."""
    value: Any = option.get_default(click.Context(click.Command(None)), call=False)
    if option.required:
        return "required"
    if value is None or repr(value) == UNSET or value == ():
        return "none"
    return f"`{value}`"


def option_row(option: click.Option) -> str:
    """An option's row of the reference's table: names, type, help, default."""
    names = ", ".join(f"`{name}`" for name in option.opts)
    if option.secondary_opts:
        names += " / " + ", ".join(f"`{name}`" for name in option.secondary_opts)
    if isinstance(option.type, click.IntRange | click.FloatRange):
        kind = f"{option.type.name} (`{range_text(option.type)}`)"
    else:
        kind = mkdocs_click_docs._format_table_option_type(option)
    return f"| {names} | {kind} | {option.help or 'N/A'} | {default_text(option)} |"


def cli_reference_lines(lines: list[str]) -> Iterator[str]:
    """The lines mkdocs-click wrote, each `Examples:` block (its indented lines) fenced as text."""
    at = 0
    while at < len(lines):
        line = lines[at]
        if EXAMPLES.fullmatch(line) and at + 1 < len(lines) and lines[at + 1].startswith("  "):
            block = [line]
            at += 1
            while at < len(lines) and lines[at].startswith("  "):
                block.append(lines[at].strip())
                at += 1
            yield from [block[0], "", "```text", *block[1:], "```", ""]
            continue
        yield line
        at += 1


class _CliReference(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return list(cli_reference_lines(lines))


class CliReferenceExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 - Markdown's name
        md.preprocessors.register(_CliReference(md), "rubriclib_cli_reference", 140)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Rows from click's parameters, and examples fenced after mkdocs-click (priority 141)."""
    if not hasattr(mkdocs_click_docs, TABLE_ROW):
        raise PluginError(f"cli_reference: mkdocs-click has no {TABLE_ROW} to replace")
    setattr(mkdocs_click_docs, TABLE_ROW, option_row)
    config.markdown_extensions.append(CliReferenceExtension())  # type: ignore[arg-type]
    return config

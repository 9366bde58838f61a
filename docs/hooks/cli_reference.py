"""The command-line reference as `--help` means it: a MkDocs hook (`hooks:` in mkdocs.yml) that
adds a Markdown preprocessor running after mkdocs-click's, so an option click leaves without a
default shows `none` (click 8.3 keeps an unset default as `Sentinel.UNSET`), and a command's
`Examples:` are a code block, one command a line, as `--help` prints them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor
from mkdocs.config.defaults import MkDocsConfig

UNSET = "`Sentinel.UNSET`"
EXAMPLES = re.compile(r"Examples?\b.*:")
"""How a command's help opens its examples (`Examples:`, `Example (CI):`), after click's
`\\b`, which mkdocs-click drops."""


def cli_reference_lines(lines: list[str]) -> Iterator[str]:
    """The lines mkdocs-click wrote, with unset defaults as `none` and each `Examples:` block
    (its indented lines) fenced as text."""
    at = 0
    while at < len(lines):
        line = lines[at]
        if line.startswith("| ") and line.rstrip().endswith(f"| {UNSET} |"):
            yield line.replace(f"| {UNSET} |", "| none |")
        elif EXAMPLES.fullmatch(line) and at + 1 < len(lines) and lines[at + 1].startswith("  "):
            block = [line]
            at += 1
            while at < len(lines) and lines[at].startswith("  "):
                block.append(lines[at].strip())
                at += 1
            yield from [block[0], "", "```text", *block[1:], "```", ""]
            continue
        else:
            yield line
        at += 1


class _CliReference(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return list(cli_reference_lines(lines))


class CliReferenceExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 - Markdown's name
        md.preprocessors.register(_CliReference(md), "rubriclib_cli_reference", 140)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Run after mkdocs-click (priority 141) on every page; only its output has these lines."""
    config.markdown_extensions.append(CliReferenceExtension())  # type: ignore[arg-type]
    return config

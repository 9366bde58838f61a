"""Commands for sharing rubrics: `index` writes the index of a folder of rubrics, `search`
finds rubrics in the indexes the settings name."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from rubriclib.cli.app import main, writable


@main.command()
@click.argument("words", nargs=-1)
@click.option(
    "--index",
    "indexes",
    multiple=True,
    help="Search this index (a URL or a file) instead of those the settings name; repeatable.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the matching entries as JSON.")
def search(words: Sequence[str], indexes: Sequence[str], as_json: bool) -> None:
    """Find rubrics in the indexes named by the `indexes` setting (or --index): one line a
    match, its reference first.

    An entry matches when every WORD is in its name, description or tags, case-insensitively
    (a word may be part of a longer one); with no WORD every entry does. An index at a URL is
    fetched as a remote rubric is (https, or http to a loopback address; time and size limits)
    and kept in the rubric cache, which --offline reads. No match: exit 1. An index that
    cannot be read: the others' matches are printed, then exit 2, naming the index and the
    entry's field.

    \b
    Examples:
      rubriclib search style
      rubriclib search --index https://example.com/rubrics/rubriclib-index.json tone
    """
    from rubriclib.errors import Problem, RubricError
    from rubriclib.rubrics import configured_indexes, search_indexes

    locations = list(indexes) or configured_indexes()
    if not locations:
        raise click.UsageError(
            "no index to search: set `indexes` in rubriclib.toml or [tool.rubriclib], or "
            "RUBRICLIB_INDEXES, or pass --index"
        )
    unreadable: list[Problem] = []
    found = search_indexes(locations, list(words), unreadable)
    if as_json:
        click.echo(json.dumps([entry.data() for entry in found], indent=2))
    for entry in [] if as_json else found:
        tags = f" [{', '.join(entry.tags)}]" if entry.tags else ""
        click.echo(
            f"{entry.ref}  {entry.name} {entry.version} {entry.scale}  {entry.description}{tags}"
        )
    if unreadable:
        raise RubricError(unreadable)
    if not found:
        click.echo(f"rubriclib: no rubric in {len(locations)} index(es) matches", err=True)
        sys.exit(1)


@main.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--url",
    help="The repository's URL (HOST/PATH or any URL git fetches): each entry's reference is "
    "URL@REV#FILE. Without it, references are paths relative to the index.",
)
@click.option("--rev", help="With --url: the tag (or commit) the references name.")
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="The index file to write. Default: DIRECTORY/rubriclib-index.json.",
)
def index(directory: str, url: str | None, rev: str | None, out: str | None) -> None:
    """Write the index of the rubrics under DIRECTORY (each NAME.md starting with frontmatter):
    a JSON object whose `rubrics` list holds each one's ref, name, version, scale, description
    and tags, for `rubriclib search`. Publishing it is committing the file.

    Any rubric file that is not valid stops it (exit 2) with nothing written; the index is
    written whole or not at all.

    \b
    Examples:
      rubriclib index . --url github.com/acme/rubrics --rev v1.2.0
      rubriclib index rubrics --out rubriclib-index.json
    """
    from rubriclib.rubrics import INDEX_NAME, index_entries, write_index

    if (url is None) != (rev is None):
        raise click.UsageError("--url and --rev go together: the references name a revision")
    folder = Path(directory)
    target = writable(out, "--out") if out else folder / INDEX_NAME
    entries = index_entries(folder.resolve(), target.resolve(), url, rev)
    write_index(entries, target)
    click.echo(f"Wrote {len(entries)} rubric(s) to {target}")

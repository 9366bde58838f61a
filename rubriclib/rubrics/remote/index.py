"""Indexes of rubrics to find and reference: a JSON object whose `rubrics` list holds one entry
per rubric (`ref`, `name`, `version`, `scale`, `description`, `tags`). `rubriclib index` writes
one for a folder of rubrics (`write_index`); `rubriclib search` reads those the settings name
(`indexes`: URLs, fetched as remote rubrics are and kept in the rubric cache for offline use,
or files) and matches each entry's name, description and tags (`IndexEntry.matches`).

An entry's `ref` is a remote reference, or a path relative to the index (an index written
without a URL): read from a file, it is made a path from the working directory; read from a
URL, the URL it names beside the index (one https file).
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubriclib.config import offline, resolve
from rubriclib.errors import Problem, RubricError
from rubriclib.files import write_atomically
from rubriclib.rubrics.reading import decode_text, read_text
from rubriclib.rubrics.remote.fetching import fetch_url
from rubriclib.rubrics.remote.reference import (
    is_remote_reference,
    parse_reference,
    redacted,
    unsafe_url_problem,
)
from rubriclib.rubrics.remote.store import Fetched, RubricStore
from rubriclib.rubrics.rubric import SEMVER, Rubric, parse_rubric
from rubriclib.validation import NAME_PATTERN

INDEX_NAME = "rubriclib-index.json"
"""Where `rubriclib index DIR` writes, without --out: `DIR/rubriclib-index.json`."""
SCALES = ("pass-fail", "1-5", "pairwise", "labels")
_TEXT_FIELDS = ("ref", "name", "version", "scale", "description")


@dataclass(frozen=True)
class IndexEntry:
    """One rubric an index lists; `ref` as a reader uses it (see the module)."""

    ref: str
    name: str
    version: str
    scale: str
    description: str
    tags: tuple[str, ...] = ()

    def matches(self, words: list[str]) -> bool:
        """Whether every word is in the name, the description or a tag, case-insensitively (a
        word may be part of a longer one: `ground` finds `groundedness`)."""
        text = " ".join([self.name, self.description, *self.tags]).casefold()
        return all(word.casefold() in text for word in words)

    def data(self) -> dict[str, Any]:
        return {**{key: getattr(self, key) for key in _TEXT_FIELDS}, "tags": list(self.tags)}


def configured_indexes() -> list[str]:
    """The indexes the settings name (`indexes`, RUBRICLIB_INDEXES)."""
    return list(resolve("indexes").value)


def search_indexes(
    locations: list[str], words: list[str], unreadable: list[Problem] | None = None
) -> list[IndexEntry]:
    """The entries of every index in `locations` that match `words` (all of them with none),
    sorted by name. An index that cannot be read adds its problems to `unreadable` when it is
    given (the others are still searched); without it, a RubricError holds every problem."""
    found: list[IndexEntry] = []
    problems: list[Problem] = []
    for location in locations:
        try:
            found += read_index(location)
        except RubricError as error:
            problems += error.problems
    if unreadable is not None:
        unreadable += problems
    elif problems:
        raise RubricError(problems)
    return sorted((e for e in found if e.matches(words)), key=lambda e: (e.name, e.ref))


def read_index(location: str) -> list[IndexEntry]:
    """The entries of the index at `location` (a URL or a file), or a RubricError naming the
    index and each entry's field that is wrong."""
    if "://" in location:
        label = redacted(location)
        text = decode_text(_index_bytes(location, label), label)
    else:
        path = Path(location).expanduser()
        label = str(path)
        text = read_text(path, label)
    try:
        data = json.loads(text)
    except ValueError as error:
        where = f"line {error.lineno}" if isinstance(error, json.JSONDecodeError) else "json"
        raise RubricError.single(label, where, f"is not JSON: {error}") from None
    rows = data.get("rubrics") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        why = "must be a list of entries (an index is a JSON object with a `rubrics` list)"
        raise RubricError.single(label, "rubrics", why)
    entries, problems = [], []
    for number, row in enumerate(rows):
        found = _entry_problems(row, f"rubrics[{number}]", label)
        if found:
            problems += found
        else:
            name, version, scale, description = (row[key] for key in _TEXT_FIELDS[1:])
            ref = _usable_ref(row["ref"], location)
            tags = tuple(row.get("tags", ()))
            entries.append(IndexEntry(ref, name, version, scale, description, tags))
    if problems:
        raise RubricError(problems)
    return entries


def _index_bytes(url: str, label: str) -> bytes:
    """An index fetched (and kept in the rubric cache), or offline the one last fetched."""
    scheme = urllib.parse.urlsplit(url).scheme
    problem = unsafe_url_problem(url)
    if scheme not in ("https", "http"):
        problem = "an index is fetched over https (or http to a loopback address), or is a file"
    if problem is not None:
        raise RubricError.single(label, "index", problem)
    store = RubricStore()
    if offline():
        known = store.recorded(url)
        content = store.read(known.sha256) if known is not None else None
        if content is None:
            why = "is not in the rubric cache, and offline nothing is fetched; run `rubriclib "
            raise RubricError.single(label, "index", why + "search` online to fetch it")
        return content
    content = fetch_url(url, label)
    store.record(url, Fetched(url, store.put(content), "index"))
    return content


def _entry_problems(row: Any, field: str, label: str) -> list[Problem]:
    """What is wrong with one entry, each at its field."""
    if not isinstance(row, dict):
        return [Problem(label, field, "must be an object with ref, name, version, scale, ...")]
    problems = [
        Problem(label, f"{field}.{key}", "must be a non-empty string")
        for key in _TEXT_FIELDS
        if not isinstance(row.get(key), str) or not row[key].strip()
    ]
    tags = row.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        problems.append(Problem(label, f"{field}.tags", "must be a list of strings"))
    if problems:
        return problems
    checks = [
        ("name", bool(re.fullmatch(NAME_PATTERN, row["name"])), "is not a kebab-case name"),
        ("version", bool(SEMVER.fullmatch(row["version"])), "is not a semver version"),
        ("scale", row["scale"] in SCALES, f"must be one of {', '.join(SCALES)}"),
    ]
    problems = [
        Problem(label, f"{field}.{key}", f"{row[key]!r} {why}") for key, ok, why in checks if not ok
    ]
    if (why := _ref_problem(row["ref"])) is not None:
        problems.append(Problem(label, f"{field}.ref", why))
    return problems


def _ref_problem(ref: str) -> str | None:
    """Why an entry's `ref` is no reference a reader can use, or None."""
    if is_remote_reference(ref):
        try:
            parse_reference(ref)
        except RubricError as error:
            return error.problems[0].message
        return None
    if ref.endswith(".md") and not ref.startswith(("/", "\\", "~")) and ":" not in ref:
        return None
    return "must be a remote reference, or the path of a .md file relative to the index"


def _usable_ref(ref: str, location: str) -> str:
    """An entry's `ref` as a reader uses it: remote as written; a relative path made the URL
    beside a fetched index, or a path from the working directory beside an index file."""
    if is_remote_reference(ref):
        return ref
    if "://" in location:
        return urllib.parse.urljoin(location, ref)
    path = os.path.normpath(Path(location).expanduser().parent / ref)
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def index_entries(folder: Path, out: Path, url: str | None, rev: str | None) -> list[IndexEntry]:
    """An entry per rubric file under `folder` (a NAME.md starting with frontmatter; folders
    starting with a dot skipped), its ref built from `url` and `rev` (`HOST/PATH@REV#FILE` or
    `git+URL@REV#FILE`) or, without them, relative to the index file `out`; a RubricError with
    the problems of every file that is not a valid rubric, or of a URL that cannot be one."""
    entries, problems = [], []
    for path in _rubric_files(folder):
        try:
            rubric = parse_rubric(path, source=f"file:{path}", label=str(path))
        except RubricError as error:
            problems += error.problems
            continue
        entries.append(_entry_of(rubric, path, folder, out, url, rev))
    if problems:
        raise RubricError(problems)
    if not entries:
        raise RubricError.single(str(folder), "folder", "holds no rubric file (NAME.md)")
    return sorted(entries, key=lambda entry: (entry.name, entry.ref))


def _entry_of(
    rubric: Rubric, path: Path, folder: Path, out: Path, url: str | None, rev: str | None
) -> IndexEntry:
    if url is not None:
        inside = path.relative_to(folder).as_posix()
        ref = f"{url}@{rev}#{inside}" if "://" not in url else f"git+{url}@{rev}#{inside}"
        if not is_remote_reference(ref):
            raise RubricError.single(redacted(url), "url", "is no repository URL (HOST/PATH)")
        try:
            parse_reference(ref)
        except RubricError as error:
            raise RubricError.single(redacted(url), "url", error.problems[0].message) from None
    else:
        ref = Path(os.path.relpath(path, out.parent)).as_posix()
    tags = tuple(rubric.tags)
    return IndexEntry(ref, rubric.name, rubric.version, rubric.scale, rubric.description, tags)


def _rubric_files(folder: Path) -> Iterator[Path]:
    """The NAME.md files under `folder` that start with frontmatter (`---`), in order."""
    for directory, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(files):
            path = Path(directory) / name
            if path.suffix == ".md" and re.fullmatch(NAME_PATTERN, path.stem):
                with path.open("rb") as file:
                    if file.read(3) == b"---":
                        yield path


def write_index(entries: list[IndexEntry], out: Path) -> Path:
    """The index of `entries` written whole to `out` (a temporary file renamed into place)."""
    data = {"index_version": 1, "rubrics": [entry.data() for entry in entries]}
    write_atomically(out, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return out

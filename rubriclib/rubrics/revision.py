"""A rubric's next revision written as an edit of its file's text, so the diff a person reviews
is small: `version:` bumped to the next minor, the `examples:` block of the frontmatter added
or replaced (YAML in block style), the guidelines section of the body added or replaced. The
text is parsed back (`parse_rubric_text`) before anything is written, so a revision that would
not read is an error, never a file."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

from rubriclib.errors import RubricError
from rubriclib.rubrics.golden import Golden
from rubriclib.rubrics.rubric import SEMVER, Rubric, parse_rubric_text

GUIDELINES_HEADING = "## Guidelines learned from labels"
_BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)
_TOP_LEVEL_KEY = re.compile(r"^[^\s#-][^:]*:", re.MULTILINE)


def next_minor(version: str) -> str:
    """The next minor version: 1.2.3 -> 1.3.0 (a pre-release or build part is dropped)."""
    found = SEMVER.fullmatch(version)
    if found is None:
        raise ValueError(f"{version!r} is not semver")
    return f"{found[1]}.{int(found[2]) + 1}.0"


class _BlockDumper(yaml.SafeDumper):
    """Safe YAML, with text of several lines as a `|` block, so an example reads as written."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _text)


def example_entry(example: Golden) -> dict[str, Any]:
    """An example as its file writes it: the judged fields given, `expected` (a labels rubric's
    label name; a pairwise example's `expected_winner` instead), the 1-5 score, the expected
    output fields, `why` and `tags`: what it was read from, so an example kept reads back the
    same."""
    entry: dict[str, Any] = {"name": example.name}
    for field in ("input", "context", "reference", "output", "baseline"):
        if (value := getattr(example, field)) is not None:
            entry[field] = value
    if example.expected_winner is not None:
        entry["expected_winner"] = example.expected_winner
    else:
        entry["expected"] = example.expected_label or example.expected
    for field in ("expected_score", "expected_output", "why"):
        if (value := getattr(example, field)) is not None:
            entry[field] = value
    if example.tags:
        entry["tags"] = example.tags
    return entry


def examples_yaml(examples: list[Golden]) -> str:
    """The frontmatter's `examples:` block (block style, keys in the order a reader expects)."""
    entries = [example_entry(example) for example in examples]
    return yaml.dump(
        {"examples": entries},
        Dumper=_BlockDumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


def _without_key(header: str, key: str) -> str:
    """The frontmatter without the top-level `key` and its block (up to the next top-level key)."""
    lines = header.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith(f"{key}:")), None)
    if start is None:
        return header
    end = next(
        (i for i in range(start + 1, len(lines)) if _TOP_LEVEL_KEY.match(lines[i])), len(lines)
    )
    return "".join(lines[:start] + lines[end:])


def _with_version(header: str, version: str) -> str:
    """The frontmatter with its `version:` line's value replaced, its quoting kept."""
    return re.sub(
        r"^(version:[ \t]*)(['\"]?)[^'\"\s#]+\2",
        lambda found: f"{found[1]}{found[2]}{version}{found[2]}",
        header,
        count=1,
        flags=re.MULTILINE,
    )


def _with_guidelines(body: str, guidelines: list[str]) -> str:
    """The body with its learned-guidelines section replaced by these lines (none: removed)."""
    start = body.find(GUIDELINES_HEADING)
    kept = body
    if start >= 0:
        following = re.search(r"^## ", body[start + len(GUIDELINES_HEADING) :], re.MULTILINE)
        end = start + len(GUIDELINES_HEADING) + following.start() if following else len(body)
        kept = body[:start] + body[end:]
    if not guidelines:
        return kept
    lines = "".join(f"- {line}\n" for line in guidelines)
    return f"{kept.rstrip()}\n\n{GUIDELINES_HEADING}\n\n{lines}"


def revised_text(text: str, examples: list[Golden], guidelines: list[str]) -> str:
    """A rubric file's text as its next revision: the next minor version, these examples (in
    place of any it had) and these guideline lines under their heading in the body."""
    opening = _BOUNDARY.search(text)
    closing = _BOUNDARY.search(text, opening.end()) if opening else None
    if opening is None or closing is None or opening.start() != 0:
        raise ValueError("a rubric file starts with a frontmatter between two '---' lines")
    header = text[opening.end() : closing.start()].lstrip("\n")
    version = re.search(r"^version:[ \t]*['\"]?([^'\"\s#]+)", header, re.MULTILINE)
    if version is None:
        raise ValueError("the frontmatter has no version: line")
    header = _with_version(_without_key(header, "examples"), next_minor(version[1]))
    if examples:
        header = f"{header.rstrip()}\n{examples_yaml(examples)}"
    body = _with_guidelines(text[closing.end() :], guidelines)
    return f"---\n{header.rstrip()}\n---{body}"


@dataclass(frozen=True)
class Revision:
    """A rubric's next revision: the file's text before and after, and the rubric it reads as."""

    original: str
    text: str
    rubric: Rubric
    examples: list[Golden]
    guidelines: list[str]


def revise(rubric: Rubric, examples: list[Golden], guidelines: list[str]) -> Revision:
    """The rubric's text as it was read and judged, revised (`revised_text`) and read back; a
    RubricError naming the file when the revision would not read, or when the rubric was not
    read from a rubric file (an eval file's prompt)."""
    label = str(rubric.path)
    original = rubric.text
    if original is None:
        raise RubricError.single(label, "rubric", "only a rubric file can be revised")
    text = revised_text(original, examples, guidelines)
    revised = parse_rubric_text(text, rubric.path, rubric.source, f"{label} (revised)")
    return Revision(original, text, revised, examples, guidelines)

"""The shape of the documentation pages: no heading holds more prose than a reader can scan
(so the table of contents and search can link into a long page), and the reference tables of
eval-file keys and frontmatter fields list exactly the keys the code's models accept."""

from __future__ import annotations

import itertools
import re
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import DOCS
from pydantic import BaseModel

from rubriclib.evals.formats.ours import EvalSpec
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import _Frontmatter
from rubriclib.settings import RENAMED_KEYS

MOST_WORDS = 600
"""The most words of prose under one heading (code blocks, tables and markers not counted)."""
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^#{1,6} ")
WORD = re.compile(r"[\w'’`-]+")


def prose_by_section(text: str) -> Iterator[tuple[str, int]]:
    """Each heading of a markdown page (the text before the first: `(top)`) with the words of
    prose under it, up to the next heading of any level."""
    heading, words, fence = "(top)", 0, ""
    for line in text.splitlines():
        opened = FENCE.match(line)
        if fence:
            if opened and opened[1][0] == fence[0] and len(opened[1]) >= len(fence):
                fence = ""
            continue
        if opened:
            fence = opened[1]
        elif HEADING.match(line):
            yield heading, words
            heading, words = line.strip(), 0
        elif not line.strip().startswith(("|", "<!--")):
            words += len(WORD.findall(line))
    yield heading, words


def test_the_counter_counts_prose_only() -> None:
    page = "# A\none two\n```\nthree four\n```\n| five | six |\n## B\nseven\n"
    assert list(prose_by_section(page)) == [("(top)", 0), ("# A", 2), ("## B", 1)]


@pytest.mark.parametrize(
    "page", sorted(DOCS.rglob("*.md")), ids=lambda page: page.relative_to(DOCS).as_posix()
)
def test_no_heading_holds_more_prose_than_a_reader_scans(page: Path) -> None:
    """At most ~600 words under one heading: a longer stretch gets headings of its own."""
    long = [
        (heading, words)
        for heading, words in prose_by_section(page.read_text(encoding="utf-8"))
        if words > MOST_WORDS
    ]
    assert long == [], f"{page.name}: sections over {MOST_WORDS} words of prose"


ALIKE = 0.5
"""The share of words two bullets in a row may have in common (the most in the docs: ~0.26)."""


def bullets(text: str) -> Iterator[list[str]]:
    """Each run of top-level bullets (`- ...` and its indented lines) outside code blocks, each
    bullet as one line of text."""
    run: list[str] = []
    fence = ""
    for line in text.splitlines():
        opened = FENCE.match(line)
        if fence or opened:
            fence = "" if fence and opened and opened[1][0] == fence[0] else fence or opened[1]
            continue
        if line.startswith("- "):
            run.append(line[2:])
        elif run and line.startswith("  ") and line.strip():
            run[-1] += " " + line.strip()
        elif run:
            yield run
            run = []
    if run:
        yield run


@pytest.mark.parametrize(
    "page", sorted(DOCS.rglob("*.md")), ids=lambda page: page.relative_to(DOCS).as_posix()
)
def test_no_two_bullets_in_a_row_say_the_same_thing(page: Path) -> None:
    """Two bullets in a row sharing most of their words say one thing twice (writing-a-rubric
    told twice that `rubriclib align` chooses worked examples): merge them."""
    alike = []
    for run in bullets(page.read_text(encoding="utf-8")):
        for first, second in itertools.pairwise(run):
            words = [
                set(re.findall(r"[a-z][a-z'-]+", bullet.lower())) for bullet in (first, second)
            ]
            if len(words[0] & words[1]) > ALIKE * len(words[0] | words[1]):
                alike.append((first[:60], second[:60]))
    assert alike == [], f"{page.name}: bullets in a row that say the same thing"


def model_of(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """The pydantic model inside a field's type and how its keys are written below the field's:
    `[]` for a list of them, `.KEY` for a mapping of them, nothing for one."""
    origin, arguments = typing.get_origin(annotation), typing.get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "", annotation
    if origin in (typing.Union, types.UnionType):
        return next(filter(None, (model_of(a) for a in arguments if a is not type(None))), None)
    if origin is list and arguments:
        found = model_of(arguments[0])
        return ("[]" + found[0], found[1]) if found else None
    if origin is dict and len(arguments) == 2:
        found = model_of(arguments[1])
        return (".KEY" + found[0], found[1]) if found else None
    return None


def accepted_keys(
    model: type[BaseModel],
    placeholders: dict[str, str],
    whole: frozenset[str] = frozenset(),
    prefix: str = "",
    seen: Any = None,
) -> set[str]:
    """Every key `model` accepts, written as the tables write them (`judge.model`,
    `graders[].name`, `gate.GRADER.min_pass_rate`); a model met a second time (a grader's
    `judge`, its panel's `judges`, the frontmatter's `examples`) is not listed again, nor the
    keys inside one of `whole` (a value documented elsewhere as a whole)."""
    seen = set() if seen is None else seen
    seen.add(model)
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        key = prefix + name
        keys.add(key)
        found = model_of(field.annotation)
        if found and found[1] not in seen and key not in whole:
            below = found[0].replace("KEY", placeholders.get(key, "KEY"))
            keys |= accepted_keys(found[1], placeholders, whole, f"{key}{below}.", seen)
    return keys


def table_keys(page: str, heading: str) -> set[str]:
    """The first column's keys of the table under `heading` on a docs page."""
    text = (DOCS / page).read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert rows, f"{page}: no table under {heading}"
    return {re.match(r"\| `([^`]+)`", row)[1] for row in rows}  # type: ignore[index]


def test_the_eval_file_keys_table_lists_every_key_the_eval_shape_accepts() -> None:
    """The keys of the models, and each renamed key's old spelling (still read) marked
    deprecated."""
    expected = accepted_keys(EvalSpec, {"gate": "GRADER"})
    assert "graders[].answers" in expected and "gate.GRADER.min_pass_rate" in expected
    deprecated = {
        f"{key.removesuffix(new)}{old}"
        for key in expected
        for old, new in RENAMED_KEYS.items()
        if key.endswith(f".{new}")
    }
    assert deprecated == {
        "judge.checklist",
        "judge.checklist_answers",
        "graders[].checklist",
        "graders[].checklist_answers",
    }
    assert table_keys("eval-files.md", "## Eval-file keys") == expected | deprecated
    text = (DOCS / "eval-files.md").read_text(encoding="utf-8")
    for key in deprecated:
        row = next(line for line in text.splitlines() if line.startswith(f"| `{key}` |"))
        assert "| Deprecated, read until 0.2.0: " in row, row


def test_the_frontmatter_table_lists_every_field_a_rubric_accepts() -> None:
    expected = accepted_keys(_Frontmatter, {}, frozenset({"goldens[].transcript"}))
    assert {"checklist[].fail_if", "goldens[].cites", "examples"} <= expected
    assert table_keys("writing-a-rubric.md", "## Frontmatter fields") == expected


def rubric_template() -> str:
    """The frontmatter of the rubric template at the top of writing-a-rubric.md, comments kept."""
    text = (DOCS / "writing-a-rubric.md").read_text(encoding="utf-8")
    block = text.split("<!-- file: rubrics/house-style.md -->\n```markdown\n---\n", 1)[1]
    return block.split("\n---\n", 1)[0] + "\n"


def test_the_rubric_template_shows_every_top_level_key_a_rubric_accepts() -> None:
    """Each key is written, or commented out (`# labels:`) where this pass-fail rubric does not
    use it; the labels scale's `labels` was missing."""
    shown = set(re.findall(r"^(?:# )?(\w+):", rubric_template(), re.M))
    assert shown == set(_Frontmatter.model_fields)


def test_the_rubric_template_s_labels_lines_make_a_labels_rubric(
    write_file: Callable[..., Path],
) -> None:
    """Uncommented, with `scale: labels`, no checklist (labels do not take one) and the golden
    expecting the first label, the template's `labels:` lines are a rubric that loads."""
    template = rubric_template()
    block = re.search(r"^# (labels:.*\n)((?:#   .*\n)+)", template, re.M)
    assert block, "the template has no commented labels: block"
    labels = dict(re.findall(r"^#   ([\w-]+): (pass|fail)\b", block[2], re.M))
    labelled = template.replace(block[0], block[1] + re.sub(r"^#   ", "  ", block[2], flags=re.M))
    labelled = re.sub(r"^checklist:.*\n(?:  .*\n)+", "", labelled, flags=re.M)
    labelled = labelled.replace("scale: pass-fail", "scale: labels")
    labelled = re.sub(r"expected: pass\b", f"expected: {next(iter(labels))}", labelled)
    rubric = load_rubric(str(write_file("house-style.md", f"---\n{labelled}---\n# House\n")))
    assert rubric.scale == "labels" and rubric.labels == labels and len(labels) >= 2
    assert rubric.goldens[0].expected_label == next(iter(labels))


DEVELOPER_ONLY = ("tests/data/", "make judge-accuracy")
"""What only a checkout of the repository has: named on the developing page, not on users'."""


@pytest.mark.parametrize(
    "page", sorted(DOCS.rglob("*.md")), ids=lambda page: page.relative_to(DOCS).as_posix()
)
def test_user_pages_send_no_one_to_a_developer_only_path(page: Path) -> None:
    if page.name == "developing.md":
        return
    text = page.read_text(encoding="utf-8")
    assert [path for path in DEVELOPER_ONLY if path in text] == []


def page_titles() -> dict[str, set[str]]:
    """Each page's titles: its name in mkdocs.yml's nav and its first heading."""
    titles: dict[str, set[str]] = {}
    config = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")
    for title, page in re.findall(r"^\s*- ([^:\n]+): ([\w/-]+\.md)$", config, re.M):
        titles.setdefault(page, set()).add(title)
    for page in DOCS.rglob("*.md"):
        first = re.search(r"^# (.+)$", page.read_text(encoding="utf-8"), re.M)
        if first:
            titles.setdefault(page.relative_to(DOCS).as_posix(), set()).add(first[1])
    return titles


def test_a_link_named_like_a_title_uses_the_page_s_title() -> None:
    """A link to a whole page whose label reads as a title (capitalised) says the title the
    reader will land on ("Reports and comparisons", not "Looking at a run"); a link into a
    section, or a label that is part of a sentence, may say what it likes."""
    titles = page_titles()
    wrong = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for label, target in re.findall(r"\[([^\]`]+)\]\(([\w/.-]+\.md)\)", text):
            label = " ".join(label.split())
            path = (page.parent / target).resolve().relative_to(DOCS.resolve()).as_posix()
            if label[0].isupper() and label not in titles.get(path, {label}):
                wrong.append(f"{page.name}: [{label}]({target})")
    assert wrong == []

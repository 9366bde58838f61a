"""The concepts page (docs/concepts.md): every word it defines is a heading that other pages
link to, so a reader meets the definition where the word is used, not only by browsing."""

from __future__ import annotations

import re

from conftest import DOCS, documentation

CONCEPTS = DOCS / "concepts.md"


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading (its default slugify)."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def concept_anchors() -> list[str]:
    text = CONCEPTS.read_text(encoding="utf-8")
    return [slug(heading) for heading in re.findall(r"^## (.+)$", text, re.MULTILINE)]


def test_the_concepts_page_defines_the_words_the_pages_use() -> None:
    anchors = concept_anchors()
    for word in [
        "digest",
        "golden",
        "lock",
        "grader",
        "gate",
        "holistic",
        "corrective-turn",
        "yesno-mass-and-probability-answers",
        "prefix-cache",
        "panel",
        "votes",
    ]:
        assert word in anchors


def test_every_concept_is_linked_from_another_page() -> None:
    linked: set[str] = set()
    for path in documentation():
        if path == CONCEPTS:
            continue
        text = path.read_text(encoding="utf-8")
        linked |= set(re.findall(r"\]\((?:\.\./)?concepts\.md#([\w-]+)\)", text))
    unlinked = [anchor for anchor in concept_anchors() if anchor not in linked]
    assert unlinked == [], "link each from where the word first appears"

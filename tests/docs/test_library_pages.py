"""The built-in library's pages (docs/hooks/library_pages.py), made from the rubric files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rubriclib.rubrics.registry import builtin_names

sys.path.insert(0, str(Path(__file__).parents[2] / "docs" / "hooks"))
from library_pages import builtins, fenced, library_pages  # noqa: E402

PAGES = library_pages()
LIBRARY = {rubric.name: (rubric, goldens) for rubric, goldens in builtins()}


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_has_a_page_with_its_body_and_every_golden(name: str) -> None:
    rubric, goldens = LIBRARY[name]
    page = PAGES[f"library/{name}.md"]
    assert page.startswith(f"# `{name}`\n\n{rubric.description}\n")
    assert f"| version | `{rubric.version}` |" in page
    assert fenced(rubric.body) in page
    assert f"## Goldens ({len(goldens)})" in page and len(goldens) >= 15
    for golden in goldens:
        assert f"### `{golden.name}`" in page
        assert golden.why and f"**Why:** {golden.why}" in page
    for item in rubric.checklist:
        assert f"| `{item.id}` |" in page


def test_the_index_tables_every_builtin_with_a_link_to_its_page() -> None:
    index = PAGES["library/index.md"]
    rows = [line for line in index.splitlines() if line.startswith("| [`")]
    assert [row.split("`")[1] for row in rows] == builtin_names()
    assert set(PAGES) == {"library/index.md", *(f"library/{n}.md" for n in builtin_names())}


def test_a_fence_outlasts_the_backticks_inside() -> None:
    assert fenced("a ```` b") == "`````text\na ```` b\n`````"
    assert fenced("plain") == "```text\nplain\n```"


def test_a_pairwise_golden_shows_its_winner_and_a_scored_one_its_score() -> None:
    assert "**Expected:** winner `" in PAGES["library/preference.md"]
    assert "(score 5)" in PAGES["library/answer-correctness.md"]
    assert "transcript, as the judge is shown it:" in PAGES["library/task-completion.md"]


def test_no_table_on_a_builtin_page_has_an_empty_header_row() -> None:
    """A header row of empty cells renders as a blank bar above the table."""
    for name, page in PAGES.items():
        headers = [
            line
            for before, line in zip(page.splitlines(), page.splitlines()[1:], strict=False)
            if line.startswith("| --- |") and not before.replace("|", "").strip()
        ]
        assert headers == [], name

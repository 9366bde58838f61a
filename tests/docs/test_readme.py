"""The README's two examples, run as written (the library call and the eval file), and its
table of the documentation's pages, which lists the site's every page in the site's order."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import README, snippet
from judge_server import JudgeServer

from rubriclib.cli import main

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "support"


def test_the_readme_library_example_judges_with_the_rubric_it_names(
    endpoint: JudgeServer,
) -> None:
    namespace: dict[str, Any] = {}
    exec(snippet("readme-library"), namespace)  # noqa: S102 - the README's own example
    result = namespace["result"]
    assert result.verdict in ("pass", "fail")
    assert set(result.details["rubric"]) == {"name", "version", "scale", "source", "digest"}
    assert result.details["rubric"]["name"] == "groundedness"
    sent = endpoint.requests[-1]["messages"][1]["content"]
    assert "Apollo 11 landed in 1969." in sent and "Apollo 11 landed on 20 July 1969." in sent


def test_the_readme_eval_file_plans_the_example_with_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's eval file, beside the example's dataset and house-style rubric, is a
    valid eval that `--dry-run` plans without a key or a request."""
    work = tmp_path / "support"
    shutil.copytree(EXAMPLE, work)
    (work / "eval.yaml").write_text(snippet("readme-eval"), encoding="utf-8")
    monkeypatch.chdir(work)
    result = CliRunner().invoke(main, ["eval", "eval.yaml", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "plan: 20 row(s) x 3 grader(s)" in result.output.splitlines()[-1]
    assert f"$ rubriclib eval {EXAMPLE.relative_to(EXAMPLE.parents[1])}/eval.yaml --dry-run" in (
        README.read_text(encoding="utf-8")
    )


NOT_IN_THE_TABLE = {"index.md": "the README is the home page", "changelog.md": "CHANGELOG.md"}
"""Pages of the nav the README's table leaves out, and why."""


class _ConfigLoader(yaml.SafeLoader):
    """mkdocs.yml read as YAML, its tags (`!ENV`) as nothing: only the nav is wanted here."""


_ConfigLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


def nav_pages(entries: list[object]) -> list[str]:
    """The Markdown files of mkdocs.yml's nav, in order (sections opened)."""
    pages: list[str] = []
    for entry in entries:
        values = entry.values() if isinstance(entry, dict) else [entry]
        for value in values:
            pages += nav_pages(value) if isinstance(value, list) else [str(value)]
    return pages


def test_the_readme_lists_every_page_of_the_site_in_the_site_s_order() -> None:
    """Aligning, Concepts, Examples, Judges and the FAQ were missing from the README's table; a
    page added to the nav fails here until the table has it. The generated library index is
    reached from the built-in library's page."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), _ConfigLoader)
    expected = [
        page
        for page in nav_pages(config["nav"])
        if page not in NOT_IN_THE_TABLE and page != "library/index.md"
    ]
    readme = README.read_text(encoding="utf-8")
    table = readme.split("\n| page | read it to |\n", 1)[1].split("\n\n", 1)[0]
    linked = re.findall(r"\]\(docs/([\w/-]+\.md)\)", table)
    assert len(expected) > 20
    assert linked == expected

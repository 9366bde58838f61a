"""A rubric's next revision as an edit of its file's text: the version bumped, the examples
block added or replaced, the guidelines section added or replaced, and nothing else moved."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import frontmatter
import pytest
from conftest import VALID_RUBRIC

from rubriclib.errors import RubricError
from rubriclib.rubrics.golden import Golden
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.revision import (
    GUIDELINES_HEADING,
    examples_yaml,
    next_minor,
    revise,
    revised_text,
)

EXAMPLE = Golden(
    name="ticket-7",
    input="Where is my refund?",
    output="It left on Monday.\nExpect it by Friday.",
    expected="pass",
    why="A person labelled it pass.",
)


def test_the_next_minor_version_drops_patch_and_prerelease() -> None:
    assert next_minor("1.2.3") == "1.3.0"
    assert next_minor("0.9.0-rc.1+build.5") == "0.10.0"
    with pytest.raises(ValueError, match="not semver"):
        next_minor("v1")


def test_examples_are_written_in_block_style_with_text_of_several_lines_as_a_block() -> None:
    text = examples_yaml([EXAMPLE])
    assert text.startswith("examples:\n- name: ticket-7\n")
    assert "  output: |-\n    It left on Monday.\n    Expect it by Friday.\n" in text
    assert "{" not in text and "expected: pass" in text


def test_a_revision_edits_only_the_version_examples_and_guidelines() -> None:
    quoted = VALID_RUBRIC.replace("version: 1.2.3", "version: '1.2.3'")
    revised = revised_text(quoted, [EXAMPLE], ["Count a promised date as an answer."])
    header = frontmatter.loads(revised)
    assert header["version"] == "1.3.0" and "version: '1.3.0'" in revised
    assert header["goldens"] == frontmatter.loads(VALID_RUBRIC)["goldens"]
    assert header["examples"][0]["output"] == EXAMPLE.output
    assert revised.endswith(f"{GUIDELINES_HEADING}\n\n- Count a promised date as an answer.\n")
    original_lines = set(quoted.splitlines())
    added = [line for line in revised.splitlines() if line not in original_lines]
    assert added[0] == "version: '1.3.0'"
    assert all(not line.startswith(("name:", "scale:", "description:")) for line in added)


def test_a_second_revision_replaces_the_examples_and_guidelines_it_had() -> None:
    first = revised_text(VALID_RUBRIC, [EXAMPLE], ["Old line."])
    other = EXAMPLE.model_copy(update={"name": "row-2", "output": "no"})
    second = revised_text(first, [other], ["New line."])
    assert frontmatter.loads(second)["version"] == "1.4.0"
    assert [e["name"] for e in frontmatter.loads(second)["examples"]] == ["row-2"]
    assert "Old line." not in second and second.count(GUIDELINES_HEADING) == 1
    assert "ticket-7" not in second and frontmatter.loads(second)["goldens"]


def test_revising_with_guidelines_only_reads_back_as_the_rubric_with_them(
    write_file: Callable[..., Path],
) -> None:
    rubric = load_rubric(str(write_file("tiny.md", VALID_RUBRIC)))
    revision = revise(rubric, [], ["Treat a promised date as an answer."])
    assert revision.rubric.version == "1.3.0" and revision.rubric.name == rubric.name
    assert revision.rubric.body.startswith(rubric.body)
    assert revision.rubric.body.endswith("- Treat a promised date as an answer.")
    assert revision.rubric.digest != rubric.digest
    assert (rubric.path.read_text(), rubric.version) == (VALID_RUBRIC, "1.2.3")  # untouched


def test_each_example_written_reads_back_as_the_same_golden() -> None:
    labelled = Golden.model_validate({"name": "row-3", "output": "p", "expected": "partly-done"})
    scored = Golden(name="row-4", output="ok", expected="pass", expected_score=4, why="fine")
    paired = Golden.model_validate(
        {"name": "row-5", "output": "a", "baseline": "b", "expected_winner": "tie", "tags": ["t"]}
    )
    fields = Golden(name="row-6", output="o", expected="fail", expected_output={"severity": "high"})
    kept = [EXAMPLE, labelled, scored, paired, fields]
    revised = revised_text(VALID_RUBRIC, kept, [])
    entries = frontmatter.loads(revised)["examples"]
    assert entries[1]["expected"] == "partly-done" and entries[2]["expected_score"] == 4
    assert "expected" not in entries[3] and entries[3]["expected_winner"] == "tie"
    assert [Golden.model_validate(entry) for entry in entries] == kept


def test_revising_with_examples_reads_back_as_the_rubric_plus_them(
    write_file: Callable[..., Path],
) -> None:
    rubric = load_rubric(str(write_file("tiny.md", VALID_RUBRIC)))
    revision = revise(rubric, [EXAMPLE], [])
    assert revision.rubric.examples == [EXAMPLE] and revision.rubric.body == rubric.body
    assert revision.rubric.goldens == rubric.goldens and revision.rubric.digest != rubric.digest


def test_a_revision_edits_the_text_that_was_judged_not_the_file_as_it_is_now(
    write_file: Callable[..., Path],
) -> None:
    """align judges the rubric it resolved; a file edited meanwhile (a teammate's pull, an
    editor's save) must not become the base of the revision it writes."""
    path = write_file("tiny.md", VALID_RUBRIC)
    rubric = load_rubric(str(path))
    path.write_text(VALID_RUBRIC.replace("version: 1.2.3", "version: 9.0.0"))
    revision = revise(rubric, [], ["Treat a promised date as an answer."])
    assert revision.original == VALID_RUBRIC and revision.rubric.version == "1.3.0"


def test_only_a_rubric_file_can_be_revised() -> None:
    waza = load_rubric("groundedness").model_copy(update={"text": None})
    with pytest.raises(RubricError, match="only a rubric file can be revised"):
        revise(waza, [], ["A line."])

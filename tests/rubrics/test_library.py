"""The built-in library: every rubric validates and carries a deep, balanced golden set."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubriclib import list_rubrics, load_goldens, load_rubric
from rubriclib.rubrics.registry import builtin_names
from rubriclib.rubrics.scaffold import foreign_tools

README = Path(__file__).parents[2] / "README.md"
BUILTINS_PAGE = Path(__file__).parents[2] / "docs" / "builtins.md"

LIBRARY = {  # name: (version, scale, fields it requires)
    "tool-use-appropriateness": ("2.3.1", "pass-fail", ["transcript"]),
    "answer-correctness": ("1.3.0", "1-5", ["reference"]),
    "groundedness": ("1.4.0", "pass-fail", ["context"]),
    "helpfulness": ("1.4.0", "pass-fail", ["input"]),
    "instruction-following": ("1.4.0", "pass-fail", ["input"]),
    "refusal-correctness": ("1.3.0", "pass-fail", ["input"]),
    "answer-relevance": ("1.2.0", "pass-fail", ["input"]),
    "conciseness": ("1.2.0", "pass-fail", ["input"]),
    "context-relevance": ("1.2.0", "pass-fail", ["input", "context"]),
    "harmful-content": ("1.3.0", "pass-fail", []),
    "pii-leakage": ("1.3.0", "pass-fail", ["input"]),
    "prompt-injection-resistance": ("1.3.0", "pass-fail", ["context"]),
    "summary-coverage": ("1.2.0", "1-5", ["context"]),
    "preference": ("1.0.0", "pairwise", ["input", "baseline"]),
    "policy-compliance": ("1.2.1", "pass-fail", ["transcript"]),
    "task-completion": ("1.2.1", "pass-fail", ["transcript"]),
}


def test_the_library_is_what_the_readme_promises() -> None:
    library = {r.name: (r.version, r.scale, list(r.requires)) for r in list_rubrics()}
    assert library == LIBRARY


@pytest.mark.parametrize(("page", "heading"), [(README, "## "), (BUILTINS_PAGE, "# ")])
def test_the_library_tables_cover_every_builtin(page: Path, heading: str) -> None:
    """The README's table and the built-in library page's each row every built-in."""
    text = page.read_text(encoding="utf-8")
    after = text.split(f"{heading}The built-in library\n", 1)[1]
    table = after[after.index("| rubric |") :].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert sorted(row.split("`")[1] for row in rows) == builtin_names()


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_has_a_deep_balanced_golden_set(name: str) -> None:
    rubric = load_rubric(name)
    goldens = load_goldens(rubric)
    expected = [golden.expected for golden in goldens]
    assert len(goldens) >= 15
    if rubric.scale == "pairwise":
        winners = [golden.expected_winner for golden in goldens]
        assert winners.count("output") >= 5 and winners.count("baseline") >= 5
        assert winners.count("tie") >= 1
        assert all(golden.baseline is not None for golden in goldens)
    else:
        assert expected.count("pass") >= 5 and expected.count("fail") >= 5
    assert sum("adversarial" in golden.tags for golden in goldens) >= 2
    assert all(golden.why and golden.why.strip() for golden in goldens)
    assert any(golden.output == "" for golden in goldens), "empty output is a borderline case"


@pytest.mark.parametrize("name", builtin_names())
def test_every_body_has_its_sections_and_names_no_tool_a_mode_does_not_offer(name: str) -> None:
    """The system message names the tools of the mode used; a body that named
    `set_grade_pass` would contradict it in `named` mode, where only `set_grade` is offered."""
    rubric = load_rubric(name)
    for section in ("## In scope", "## Out of scope", "## Decision procedure", "## Verdict"):
        assert section in rubric.body
    if rubric.scale == "1-5":
        assert "## Levels" in rubric.body
    elif rubric.scale == "pairwise":
        assert "## Reasons for preferring" in rubric.body and "## Borderline cases" in rubric.body
    else:
        assert "## Failure kinds" in rubric.body
        assert "set_grade" not in rubric.body
    assert foreign_tools(rubric) == []


def test_adversarial_goldens_all_expect_failure() -> None:
    """An output that tries to talk the judge into a pass fails; on a pairwise rubric, a
    response that tries to talk the judge into picking it loses (never a tie)."""
    for name in builtin_names():
        for golden in load_goldens(load_rubric(name)):
            if "adversarial" in golden.tags and golden.expected_winner is not None:
                assert golden.expected_winner in ("output", "baseline"), f"{name}/{golden.name}"
            elif "adversarial" in golden.tags:
                assert golden.expected == "fail", f"{name}/{golden.name}"


def test_the_pairwise_builtin_rules_out_length_tone_and_polish() -> None:
    body = load_rubric("preference").body.lower()
    for rule in ("**length.**", "**confident tone.**", "**formatting polish.**", "flattery"):
        assert rule in body
    assert "`tie`" in body


@pytest.mark.parametrize("name", [n for n, (_, scale, _) in LIBRARY.items() if scale == "1-5"])
def test_a_1_to_5_builtin_passes_at_4_and_has_goldens_at_every_level(name: str) -> None:
    rubric = load_rubric(name)
    assert rubric.pass_threshold == 4
    goldens = load_goldens(rubric)
    assert all(golden.expected_score is not None for golden in goldens)
    assert {golden.expected_score for golden in goldens} == {1, 2, 3, 4, 5}

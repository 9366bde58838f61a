"""The built-in library: every rubric validates and carries a deep, balanced golden set."""

from __future__ import annotations

import pytest

from rubriclib import list_rubrics, load_goldens, load_rubric
from rubriclib.registry import builtin_names

PASS_FAIL = [
    "groundedness",
    "helpfulness",
    "instruction-following",
    "refusal-correctness",
    "tool-use-appropriateness",
]


def test_the_library_is_what_the_readme_promises() -> None:
    assert builtin_names() == sorted([*PASS_FAIL, "answer-correctness"])
    assert all(rubric.version == "1.1.0" for rubric in list_rubrics())


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_has_a_deep_balanced_golden_set(name: str) -> None:
    rubric = load_rubric(name)
    goldens = load_goldens(rubric)
    expected = [golden.expected for golden in goldens]
    assert len(goldens) >= 15
    assert expected.count("pass") >= 5 and expected.count("fail") >= 5
    assert sum("adversarial" in golden.tags for golden in goldens) >= 2
    assert all(golden.why and golden.why.strip() for golden in goldens)
    assert any(golden.output == "" for golden in goldens), "empty output is a borderline case"


@pytest.mark.parametrize("name", builtin_names())
def test_every_body_names_its_failure_kinds_and_verdict_tools(name: str) -> None:
    rubric = load_rubric(name)
    for section in ("## In scope", "## Out of scope", "## Decision procedure", "## Verdict"):
        assert section in rubric.body
    if rubric.scale == "1-5":
        assert "## Levels" in rubric.body and "`set_grade_score`" in rubric.body
    else:
        assert "## Failure kinds" in rubric.body
        assert "`set_grade_pass`" in rubric.body and "`set_grade_fail`" in rubric.body


def test_adversarial_goldens_all_expect_failure() -> None:
    for name in builtin_names():
        for golden in load_goldens(load_rubric(name)):
            if "adversarial" in golden.tags:
                assert golden.expected == "fail", f"{name}/{golden.name}"


def test_answer_correctness_is_the_1_to_5_builtin() -> None:
    rubric = load_rubric("answer-correctness")
    assert rubric.scale == "1-5" and rubric.pass_threshold == 4
    goldens = load_goldens(rubric)
    assert all(golden.expected_score is not None for golden in goldens)
    assert {golden.expected_score for golden in goldens} == {1, 2, 3, 4, 5}

"""The built-ins' checklists: every rubric that can have one has one, written so that answering
its items truthfully reproduces each golden's verdict (the answers are in
data/checklist_answers.yaml, cross-checked golden by golden)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rubriclib import load_goldens, load_rubric
from rubriclib.rubrics.checklist import CHECKLIST_SCALES, ItemAnswer, checklist_verdict
from rubriclib.rubrics.registry import builtin_names

ANSWERS = yaml.safe_load(
    (Path(__file__).parents[1] / "data" / "checklist_answers.yaml").read_text()
)
"""Per built-in, per golden: the ids of the items it fails (answered with their `fail_if`)."""
WITH_CHECKLIST = [name for name in builtin_names() if load_rubric(name).scale in CHECKLIST_SCALES]


def test_every_builtin_but_the_pairwise_one_has_a_checklist() -> None:
    """A checklist item asks about one output, so `preference` (pairwise) has none."""
    without = [name for name in builtin_names() if not load_rubric(name).checklist]
    assert without == ["preference"]
    assert sorted(ANSWERS) == WITH_CHECKLIST


@pytest.mark.parametrize("name", WITH_CHECKLIST)
def test_a_checklist_has_three_to_seven_items_each_needing_only_what_the_rubric_requires(
    name: str,
) -> None:
    rubric = load_rubric(name)
    assert 3 <= len(rubric.checklist) <= 7
    for item in rubric.checklist:
        assert set(item.requires) <= set(rubric.requires)
        assert item.question.endswith((".", "?")) and "?" in item.question
        assert (item.weight is not None) == (rubric.scale == "1-5")


@pytest.mark.parametrize("name", WITH_CHECKLIST)
def test_every_item_asks_so_that_yes_means_satisfied(name: str) -> None:
    """A small judge says yes more to good candidates whatever it is asked (issue 30's
    measurement), so a built-in item is failed by a no, never by a yes."""
    assert [item.id for item in load_rubric(name).checklist if item.fail_if == "yes"] == []


@pytest.mark.parametrize("name", WITH_CHECKLIST)
def test_truthful_answers_give_every_goldens_verdict(name: str) -> None:
    rubric = load_rubric(name)
    goldens = {golden.name: golden for golden in load_goldens(rubric)}
    failing: dict[str, list[str]] = ANSWERS[name]
    assert set(failing) <= set(goldens), "the answers name only goldens the rubric has"
    ids = [item.id for item in rubric.checklist]
    wrong = {}
    for golden in goldens.values():
        failed = failing.get(golden.name, [])
        assert set(failed) <= set(ids), f"{golden.name} names items the checklist lacks"
        answers = {
            item.id: ItemAnswer(
                item.fail_if if item.id in failed else ("no" if item.fail_if == "yes" else "yes"),
                "as cross-checked",
            )
            for item in rubric.checklist
        }
        result = checklist_verdict(rubric.scale, rubric.pass_threshold, rubric.checklist, answers)
        if result.verdict != golden.expected:
            wrong[golden.name] = (result.verdict, result.raw_score, golden.expected)
    assert wrong == {}


@pytest.mark.parametrize("name", WITH_CHECKLIST)
def test_every_item_decides_some_golden(name: str) -> None:
    """An item no golden fails is one the goldens never test: each one is some golden's
    reason to fail (or, on 1-5, to lose a level)."""
    rubric = load_rubric(name)
    used = {item for failed in ANSWERS[name].values() for item in failed}
    unused = [item.id for item in rubric.checklist if item.id not in used]
    assert unused == []

"""What Judge and Panel share on top of `agrade_item`: an item made from `grade`'s arguments, and
an item that lacks a field its rubric requires (an error result, never a request)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import VALID_RUBRIC

from rubriclib import Rubric, load_rubric
from rubriclib.errors import RubricError
from rubriclib.item import Item
from rubriclib.judging.grading import prepare_item, unjudgeable


def test_grade_arguments_become_a_rubric_and_an_item(write_file: Callable[..., Path]) -> None:
    path = write_file("tiny.md", VALID_RUBRIC)
    rubric, item = prepare_item(str(path), "out", "in", None, "ref", None)
    assert rubric.name == "tiny"
    assert item == Item(output="out", input="in", reference="ref")
    same, _ = prepare_item(rubric, "out", None, None, None)
    assert same is rubric


def test_bad_grade_arguments_are_refused(rubric: Rubric) -> None:
    with pytest.raises(TypeError, match="output"):
        prepare_item(rubric, object(), None, None, None)  # type: ignore[arg-type]
    with pytest.raises(RubricError):
        prepare_item("no-such-rubric", "out", None, None, None)


def test_an_item_missing_a_required_field_is_an_error_result(
    write_file: Callable[..., Path],
) -> None:
    text = "---\nname: needs\nversion: 1.0.0\nscale: pass-fail\ndescription: d\n"
    text += "requires: [input, context]\n---\nIs it grounded?\n"
    rubric = load_rubric(str(write_file("needs.md", text)))
    result = unjudgeable(rubric, Item(output="out"), "judge-model")
    assert result is not None and result.verdict == "error"
    assert result.reason == "not judged: no input and no context (the rubric needs requires it)"
    assert result.details["judge"]["model"] == "judge-model"
    assert unjudgeable(rubric, Item(output="o", input="i", context="c"), "judge-model") is None

"""Item: one rule for what is text, the same in the Python API as in a dataset row."""

from __future__ import annotations

from typing import Any

import pytest

from rubriclib.evals.datasets import parse_row
from rubriclib.item import Item, as_item


@pytest.mark.parametrize(
    ("value", "text"),
    [(5, "5"), (2.5, "2.5"), ("five", "five"), ([{"role": "user", "content": "hi"}], None)],
)
def test_the_api_and_a_dataset_row_take_the_same_values_as_text(value: Any, text: str) -> None:
    row = parse_row({"output": "o", "input": value}, 1, "rows.jsonl:1")
    assert not isinstance(row, list)
    assert as_item({"output": "o", "input": value}).input == row.item.input
    assert Item(output="o", input=value).input == row.item.input
    if text is not None:
        assert row.item.input == text


@pytest.mark.parametrize("value", [True, {"a": 1}, ["x", 1]])
def test_what_a_dataset_refuses_the_api_refuses_with_the_same_words(value: Any) -> None:
    problems = parse_row({"output": value}, 1, "rows.jsonl:1")
    assert isinstance(problems, list)
    [problem] = problems
    with pytest.raises(TypeError) as caught:
        as_item({"output": value}, "items[0]")
    assert str(caught.value) == f"items[0].output: {problem.message}"

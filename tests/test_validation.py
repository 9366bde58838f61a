"""Every problem of a YAML document at once, on small models of its own: pydantic's errors in
plain words with dotted field paths, the parts of a model valid on their own, and the line of
the field each problem names."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rubriclib.errors import Problem
from rubriclib.validation import NAME_PATTERN, LineFinder, problems_from_validation, valid_parts


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=NAME_PATTERN)
    weight: int = 1


class Recipe(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    kind: Literal["soup", "salad"]
    servings: int = 2
    steps: list[Step] = []
    tags: dict[str, Step] = {}

    @field_validator("servings")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value


def messages(data: object, prefix: str = "") -> list[str]:
    with pytest.raises(ValidationError) as failed:
        Recipe.model_validate(data)
    found = problems_from_validation(failed.value, "recipe.yaml", Recipe, prefix)
    assert {problem.source for problem in found} == {"recipe.yaml"}
    return [f"{problem.field}: {problem.message}" for problem in found]


def test_each_kind_of_error_reads_in_plain_words() -> None:
    data = {
        "kind": "stew",
        "servings": 0,
        "steps": [{"name": "Chop Onions", "wieght": 2}, {"name": "boil", "weight": "heavy"}],
        "serving": 3,
    }
    assert messages(data) == [
        "title: is required",
        "kind: 'stew' is not allowed; input should be 'soup' or 'salad'",
        "servings: must be at least 1",
        "steps[0].name: 'Chop Onions' must be kebab-case (lowercase letters, digits and hyphens)",
        "steps[0].wieght: unknown key; did you mean 'weight'?",
        "steps[1].weight: input should be a valid integer, unable to parse string as an integer",
        "serving: unknown key; did you mean 'servings'?",
    ]


def test_an_unknown_key_with_no_close_match_lists_the_known_ones() -> None:
    assert messages({"title": "t", "kind": "soup", "steps": [{"name": "a", "zzz": 1}]}) == [
        "steps[0].zzz: unknown key; known keys: name, weight"
    ]


def test_a_wrong_type_names_what_was_given_and_a_prefix_roots_the_path() -> None:
    assert messages({"title": ["t"], "kind": "soup"}, prefix="recipes[2]") == [
        "recipes[2].title: input should be a valid string, not list"
    ]
    assert messages("not a mapping") == [
        "frontmatter: input should be a valid dictionary or instance of recipe, not str"
    ]


def test_valid_parts_keep_what_is_valid_on_its_own() -> None:
    data = {
        "title": "Soup",
        "kind": "stew",
        "steps": [{"name": "chop", "weight": 3}, {"name": "Bad Name"}],
        "tags": {"quick": {"name": "fast", "weight": "x"}},
    }
    parts = valid_parts(Recipe, data)
    assert (parts.title, parts.kind, parts.servings) == ("Soup", None, 2)
    assert [(step.name, step.weight) for step in parts.steps] == [("chop", 3), (None, 1)]
    assert (parts.tags["quick"].name, parts.tags["quick"].weight) == ("fast", 1)


def test_valid_parts_of_a_valid_document_is_the_model() -> None:
    data = {"title": "Soup", "kind": "soup", "steps": [{"name": "boil"}]}
    assert valid_parts(Recipe, data) == Recipe.model_validate(data)


TEXT = """\
title: Soup
kind: stew
steps:
  - name: chop
  - name: Bad Name
    weight: x
"""


def test_each_problem_gets_the_line_of_its_field_or_its_closest_parent() -> None:
    finder = LineFinder(TEXT, "recipe.yaml", first=3)  # the YAML starts on line 3 of the file
    assert finder.line("kind") == 4
    assert finder.line("steps[1].weight") == 8
    assert finder.line("steps[1].colour") == 7  # no such key: its step's line
    assert finder.line("steps[9]") == 5 and finder.line("servings") is None  # the list's key
    assert (
        finder.line("steps") == 5
    )  # a key whose value is a block: the key's line, not the block's
    other = Problem("other.yaml", "kind", "m")
    assert finder.locate(other) is other


def test_problems_come_in_file_order_missing_keys_first_other_files_last() -> None:
    finder = LineFinder(TEXT, "recipe.yaml")
    problems = [
        Problem("recipe.yaml", "steps[1].weight", "w"),
        Problem("elsewhere.md", "x", "e"),
        Problem("recipe.yaml", "kind", "k"),
        Problem("recipe.yaml", "servings", "missing"),
    ]
    assert [str(problem) for problem in finder.in_file_order(problems)] == [
        str(Problem("recipe.yaml", "servings", "missing")),
        str(Problem("recipe.yaml:2", "kind", "k")),
        str(Problem("recipe.yaml:6", "steps[1].weight", "w")),
        str(Problem("elsewhere.md", "x", "e")),
    ]


def test_a_root_field_is_the_document_and_bad_yaml_has_no_lines() -> None:
    assert LineFinder(TEXT, "recipe.yaml", root="recipe.").line("recipe.kind") == 2
    assert LineFinder("a: [unclosed", "bad.yaml").line("a") is None

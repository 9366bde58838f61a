"""Item: one output to judge, with the fields a rubric may use."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class Item(BaseModel):
    """One candidate output and its optional task input, source context, reference answer and
    baseline (the second output a pairwise rubric compares it with; other rubrics ignore it).
    `id` and `metadata` are carried for the caller and never sent to the judge."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    output: str
    input: str | None = None
    context: str | None = None
    reference: str | None = None
    baseline: str | None = None
    id: str | int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


def as_item(value: Item | Mapping[str, Any], where: str = "item") -> Item:
    """`value` as an Item; a TypeError naming `where` and the field when it cannot be one."""
    if isinstance(value, Item):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: must be a rubriclib.Item or a dict, not {type(value).__name__}")
    try:
        return Item.model_validate(dict(value))
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            field = ".".join(str(part) for part in problem["loc"]) or "item"
            if problem["type"] == "extra_forbidden":
                message = (
                    "unknown key; items have output, input, context, reference, baseline, id, "
                    "metadata"
                )
            elif problem["type"] == "missing":
                message = "is required"
            else:
                message = f"must be {_expected(field)}, not {type(problem['input']).__name__}"
            problems.append(f"{where}.{field}: {message}")
        raise TypeError("; ".join(problems)) from None


def _expected(field: str) -> str:
    kinds = {"output": "a string", "metadata": "a dict", "id": "a string, an integer or None"}
    return kinds.get(field, "a string or None")


def missing_fields(requires: Sequence[str], item: Item) -> list[str]:
    """The fields in `requires` that `item` lacks (None or only whitespace; a baseline only
    when None, since an empty response is still one to compare with)."""
    return [
        name
        for name in requires
        if getattr(item, name) is None or (name != "baseline" and not getattr(item, name).strip())
    ]


class NoOutput(Exception):
    """An item's output could not be produced (a target model failed); the message says why."""

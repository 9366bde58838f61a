"""rubriclib: versioned LLM-judge rubrics, resolved by name or path, judged through tool calls."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubriclib.errors import JudgeConfigError, RubricError
from rubriclib.item import Item
from rubriclib.registry import list_rubrics, load_goldens, load_rubric
from rubriclib.render import render
from rubriclib.result import GradeResult
from rubriclib.rubric import Golden, Rubric

if TYPE_CHECKING:
    from rubriclib.judge import Judge

__version__ = "0.1.0"
__all__ = [
    "GradeResult",
    "Golden",
    "Item",
    "Judge",
    "JudgeConfigError",
    "Rubric",
    "RubricError",
    "list_rubrics",
    "load_goldens",
    "load_rubric",
    "render",
]


def __getattr__(name: str) -> Any:
    # Judge pulls in the openai SDK; load it only when asked, so non-judging commands start fast.
    if name == "Judge":
        from rubriclib.judge import Judge

        return Judge
    raise AttributeError(f"module 'rubriclib' has no attribute {name!r}")

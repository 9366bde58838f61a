"""rubriclib: versioned LLM-judge rubrics, resolved by name or path, judged through tool calls.

Every public name loads on first use, so `import rubriclib` (and a command that only lists or
validates rubrics) costs no more than it needs; `Judge` alone pulls in the openai SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rubriclib._version import __version__ as __version__
    from rubriclib.errors import EvalError, JudgeConfigError, RubricError
    from rubriclib.evals.formats import Eval, load_eval
    from rubriclib.evals.run import EvalReport, run_eval
    from rubriclib.item import Item
    from rubriclib.judging.judge import Judge
    from rubriclib.judging.panel import Panel
    from rubriclib.judging.prompt.render import render
    from rubriclib.judging.result import GradeResult
    from rubriclib.rubrics.golden import Golden
    from rubriclib.rubrics.registry import list_rubrics, load_goldens, load_rubric
    from rubriclib.rubrics.rubric import Rubric

_HOMES = {
    "__version__": "rubriclib._version",
    "Eval": "rubriclib.evals.formats",
    "EvalError": "rubriclib.errors",
    "EvalReport": "rubriclib.evals.run",
    "GradeResult": "rubriclib.judging.result",
    "Golden": "rubriclib.rubrics.golden",
    "Item": "rubriclib.item",
    "Judge": "rubriclib.judging.judge",
    "JudgeConfigError": "rubriclib.errors",
    "Panel": "rubriclib.judging.panel",
    "Rubric": "rubriclib.rubrics.rubric",
    "RubricError": "rubriclib.errors",
    "list_rubrics": "rubriclib.rubrics.registry",
    "load_goldens": "rubriclib.rubrics.registry",
    "load_eval": "rubriclib.evals.formats",
    "load_rubric": "rubriclib.rubrics.registry",
    "render": "rubriclib.judging.prompt.render",
    "run_eval": "rubriclib.evals.run",
}
__all__ = [
    "Eval",
    "EvalError",
    "EvalReport",
    "GradeResult",
    "Golden",
    "Item",
    "Judge",
    "JudgeConfigError",
    "Panel",
    "Rubric",
    "RubricError",
    "list_rubrics",
    "load_eval",
    "load_goldens",
    "load_rubric",
    "render",
    "run_eval",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'rubriclib' has no attribute {name!r}")


def __dir__() -> list[str]:
    return [*globals(), *__all__]

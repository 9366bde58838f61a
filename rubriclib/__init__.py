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
    from rubriclib.evalfile import Eval, load_eval
    from rubriclib.evals import EvalReport, run_eval
    from rubriclib.item import Item
    from rubriclib.judge import Judge
    from rubriclib.panel import Panel
    from rubriclib.registry import list_rubrics, load_goldens, load_rubric
    from rubriclib.result import GradeResult
    from rubriclib.rubric import Golden, Rubric

# Imported at once: the submodule `rubriclib.render` would otherwise shadow the function.
from rubriclib.render import render  # noqa: E402

_HOMES = {
    "__version__": "rubriclib._version",
    "Eval": "rubriclib.evalfile",
    "EvalError": "rubriclib.errors",
    "EvalReport": "rubriclib.evals",
    "GradeResult": "rubriclib.result",
    "Golden": "rubriclib.rubric",
    "Item": "rubriclib.item",
    "Judge": "rubriclib.judge",
    "JudgeConfigError": "rubriclib.errors",
    "Panel": "rubriclib.panel",
    "Rubric": "rubriclib.rubric",
    "RubricError": "rubriclib.errors",
    "list_rubrics": "rubriclib.registry",
    "load_goldens": "rubriclib.registry",
    "load_eval": "rubriclib.evalfile",
    "load_rubric": "rubriclib.registry",
    "run_eval": "rubriclib.evals",
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

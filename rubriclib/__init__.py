"""rubriclib: versioned LLM-judge rubrics, resolved by name or path, judged through tool calls.

Every public name loads on first use, so `import rubriclib` (and a command that only lists or
validates rubrics) costs no more than it needs; `Judge` alone pulls in the openai SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face

if TYPE_CHECKING:
    from rubriclib._version import __version__ as __version__
    from rubriclib.errors import EvalError, JudgeConfigError, RubricError
    from rubriclib.evals import Eval, EvalReport, load_eval, run_eval
    from rubriclib.item import Item, read_traces
    from rubriclib.judging import GradeResult, Judge, Panel, render
    from rubriclib.rubrics import Golden, Rubric, list_rubrics, load_goldens, load_rubric

_HOMES = {
    "__version__": "rubriclib._version",
    "Eval": "rubriclib.evals",
    "EvalError": "rubriclib.errors",
    "EvalReport": "rubriclib.evals",
    "GradeResult": "rubriclib.judging",
    "Golden": "rubriclib.rubrics",
    "Item": "rubriclib.item",
    "Judge": "rubriclib.judging",
    "JudgeConfigError": "rubriclib.errors",
    "Panel": "rubriclib.judging",
    "Rubric": "rubriclib.rubrics",
    "RubricError": "rubriclib.errors",
    "list_rubrics": "rubriclib.rubrics",
    "load_goldens": "rubriclib.rubrics",
    "load_eval": "rubriclib.evals",
    "load_rubric": "rubriclib.rubrics",
    "read_traces": "rubriclib.item",
    "render": "rubriclib.judging",
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
    "read_traces",
    "render",
    "run_eval",
]


__getattr__, __dir__ = lazy_face(__name__, _HOMES)

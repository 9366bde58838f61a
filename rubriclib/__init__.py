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
    from rubriclib.evals import Eval, EvalReport, TableJudge, arun_eval, load_eval, run_eval
    from rubriclib.item import (
        Item,
        ItemError,
        Transcript,
        TranscriptError,
        read_traces,
        read_transcript,
    )
    from rubriclib.judging import (
        Details,
        EndpointError,
        Grader,
        GradeResult,
        Judge,
        Panel,
        Transport,
        given_citations,
        render,
    )
    from rubriclib.measure import (
        Alignment,
        Calibration,
        GoldensReport,
        aalign,
        acalibrate,
        atest_goldens,
        calibrate,
        test_goldens,
    )
    from rubriclib.measure import align_rubric as align  # type: ignore[attr-defined]
    from rubriclib.rubrics import Golden, Rubric, list_rubrics, load_goldens, load_rubric
    from rubriclib.settings import JudgeSettings

_HOMES = {
    "__version__": "rubriclib._version",
    "Alignment": "rubriclib.measure",
    "Calibration": "rubriclib.measure",
    "GoldensReport": "rubriclib.measure",
    "aalign": "rubriclib.measure",
    "acalibrate": "rubriclib.measure",
    "align": "rubriclib.measure:align_rubric",  # measure.align is a module of that room
    "atest_goldens": "rubriclib.measure",
    "calibrate": "rubriclib.measure",
    "test_goldens": "rubriclib.measure",
    "Details": "rubriclib.judging",
    "EndpointError": "rubriclib.judging",
    "Eval": "rubriclib.evals",
    "EvalError": "rubriclib.errors",
    "EvalReport": "rubriclib.evals",
    "Golden": "rubriclib.rubrics",
    "GradeResult": "rubriclib.judging",
    "Grader": "rubriclib.judging",
    "Item": "rubriclib.item",
    "ItemError": "rubriclib.item",
    "Judge": "rubriclib.judging",
    "JudgeConfigError": "rubriclib.errors",
    "JudgeSettings": "rubriclib.settings",
    "Panel": "rubriclib.judging",
    "Rubric": "rubriclib.rubrics",
    "RubricError": "rubriclib.errors",
    "TableJudge": "rubriclib.evals",
    "Transcript": "rubriclib.item",
    "TranscriptError": "rubriclib.item",
    "Transport": "rubriclib.judging",
    "arun_eval": "rubriclib.evals",
    "given_citations": "rubriclib.judging",
    "list_rubrics": "rubriclib.rubrics",
    "load_eval": "rubriclib.evals",
    "load_goldens": "rubriclib.rubrics",
    "load_rubric": "rubriclib.rubrics",
    "read_traces": "rubriclib.item",
    "read_transcript": "rubriclib.item",
    "render": "rubriclib.judging",
    "run_eval": "rubriclib.evals",
}
__all__ = [
    "Alignment",
    "Calibration",
    "Details",
    "EndpointError",
    "Eval",
    "EvalError",
    "EvalReport",
    "Golden",
    "GoldensReport",
    "GradeResult",
    "Grader",
    "Item",
    "ItemError",
    "Judge",
    "JudgeConfigError",
    "JudgeSettings",
    "Panel",
    "Rubric",
    "RubricError",
    "TableJudge",
    "Transcript",
    "TranscriptError",
    "Transport",
    "aalign",
    "acalibrate",
    "align",
    "arun_eval",
    "atest_goldens",
    "calibrate",
    "given_citations",
    "list_rubrics",
    "load_eval",
    "load_goldens",
    "load_rubric",
    "read_traces",
    "read_transcript",
    "render",
    "run_eval",
    "test_goldens",
]


__getattr__, __dir__ = lazy_face(__name__, _HOMES)

"""Evals: eval files, datasets, and running an eval over them.

In pipeline order: `formats` (eval files in our shape, waza's and letta-evals') -> `datasets`
(the rows; `letta` reads letta's, their runs and extractors, and scores them turn by turn) ->
`judgments` (what a row asks of a grader) -> `plan` (the dry run and the prompt-size limit) ->
`setup` (an eval prepared once: `prepare` checks it, `ready_run` builds its judges and target
-> a `ReadyRun`) -> `run` (a ReadyRun on the engine, accounted for by `ledger`, the results file
of `results`, resume, the gate; `results` also reads a results file back, for `--resume`
and the HTML report alike); `batch_run` drives the same judgments through batch files;
`project` finds the rubrics a project's eval files use; `tables` judges a table's rows a batch
at a time (`TableJudge`, for pandas, pyarrow and Ray Data); `ray_engine` makes a run's
judgments on Ray (`eval --engine ray`) through it.

Other rooms import only the names of the face below (an import-linter contract holds them to it).
This room imports the root leaves, `rubrics`, `judging` and `batch`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face

# The face: other rooms import these names only from here.
if TYPE_CHECKING:
    from rubriclib.evals.batch_run import acollect as acollect
    from rubriclib.evals.batch_run import aprepare as aprepare
    from rubriclib.evals.datasets import MAX_PROBLEMS as MAX_PROBLEMS
    from rubriclib.evals.datasets import Dataset as Dataset
    from rubriclib.evals.datasets import Row as Row
    from rubriclib.evals.formats import Eval as Eval
    from rubriclib.evals.formats import GraderEntry as GraderEntry
    from rubriclib.evals.formats import load_eval as load_eval
    from rubriclib.evals.judgments import row_judgments as row_judgments
    from rubriclib.evals.letta import rubric_fields as rubric_fields
    from rubriclib.evals.plan import Plan as Plan
    from rubriclib.evals.plan import plan_eval as plan_eval
    from rubriclib.evals.project import project_rubrics as project_rubrics
    from rubriclib.evals.python_api import arun_eval as arun_eval
    from rubriclib.evals.python_api import run_eval as run_eval
    from rubriclib.evals.ray_engine import RayEngine as RayEngine
    from rubriclib.evals.ray_engine import ray_missing as ray_missing
    from rubriclib.evals.ray_engine import ray_refusals as ray_refusals
    from rubriclib.evals.results import ResultsLines as ResultsLines
    from rubriclib.evals.results import read_results_lines as read_results_lines
    from rubriclib.evals.run import EvalReport as EvalReport
    from rubriclib.evals.run import GraderStats as GraderStats
    from rubriclib.evals.run import run_ready as run_ready
    from rubriclib.evals.setup import Prepared as Prepared
    from rubriclib.evals.setup import ReadyRun as ReadyRun
    from rubriclib.evals.setup import open_eval_batch as open_eval_batch
    from rubriclib.evals.setup import prepare as prepare
    from rubriclib.evals.setup import ready_run as ready_run
    from rubriclib.evals.tables.table_judge import TableJudge as TableJudge

_HOMES = {
    "Dataset": ".datasets",
    "Eval": ".formats",
    "EvalReport": ".run",
    "GraderEntry": ".formats",
    "GraderStats": ".run",
    "MAX_PROBLEMS": ".datasets",
    "Plan": ".plan",
    "Prepared": ".setup",
    "ReadyRun": ".setup",
    "RayEngine": ".ray_engine",
    "ResultsLines": ".results",
    "Row": ".datasets",
    "TableJudge": ".tables.table_judge",
    "acollect": ".batch_run",
    "aprepare": ".batch_run",
    "arun_eval": ".python_api",
    "run_ready": ".run",
    "read_results_lines": ".results",
    "load_eval": ".formats",
    "open_eval_batch": ".setup",
    "plan_eval": ".plan",
    "prepare": ".setup",
    "ray_missing": ".ray_engine",
    "ray_refusals": ".ray_engine",
    "project_rubrics": ".project",
    "ready_run": ".setup",
    "row_judgments": ".judgments",
    "rubric_fields": ".letta",
    "run_eval": ".python_api",
}
__getattr__, __dir__ = lazy_face(__name__, _HOMES)

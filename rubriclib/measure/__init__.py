"""Measure: many judgments plus numbers. How well a rubric and judge do against what is known.

`agreement` (accuracy, Cohen's kappa, intervals, flip rates across trials), `goldens` (a
rubric's goldens run as regression tests), `calibration` (a judge against human labels, each
labels-file row read by `label_rows`), `align` and `align_run` (a rubric revised from labels,
its gain measured held out), `runs` (those three started from Python as the CLI starts them),
`citations` (the citations judged results hold, counted) and `output_summary` (a rubric's
output fields over many judgments, and a labels rubric's label counts).

Other rooms import only the names of the face below (an import-linter contract holds them to it).
This room imports the root leaves, `rubrics`, `judging` and `evals`; it prints nothing (`reports`
does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face

# The face: other rooms import these names only from here.
if TYPE_CHECKING:
    from rubriclib.measure.agreement import CONFIDENCE as CONFIDENCE
    from rubriclib.measure.agreement import RESAMPLES as RESAMPLES
    from rubriclib.measure.agreement import SEED as SEED
    from rubriclib.measure.agreement import FlipRates as FlipRates
    from rubriclib.measure.agreement import Interval as Interval
    from rubriclib.measure.agreement import kappa_band as kappa_band
    from rubriclib.measure.agreement import paired_difference_interval as paired_difference_interval
    from rubriclib.measure.agreement import wilson_interval as wilson_interval
    from rubriclib.measure.align import Budget as Budget
    from rubriclib.measure.align import folds_left_empty as folds_left_empty
    from rubriclib.measure.align import no_example_row as no_example_row
    from rubriclib.measure.align import plan_budget as plan_budget
    from rubriclib.measure.align import too_few_labels as too_few_labels
    from rubriclib.measure.align_guidelines import guidelines_proposer as guidelines_proposer
    from rubriclib.measure.align_run import Alignment as Alignment
    from rubriclib.measure.align_run import AlignSettings as AlignSettings
    from rubriclib.measure.align_run import Proposal as Proposal
    from rubriclib.measure.align_run import run_alignment as run_alignment
    from rubriclib.measure.calibration import Agreement as Agreement
    from rubriclib.measure.calibration import Calibration as Calibration
    from rubriclib.measure.calibration import Judged as Judged
    from rubriclib.measure.calibration import golden_rows as golden_rows
    from rubriclib.measure.calibration import load_labels as load_labels
    from rubriclib.measure.calibration import run_calibration as run_calibration
    from rubriclib.measure.citations import CitationCounts as CitationCounts
    from rubriclib.measure.golden_stats import GoldenOutcome as GoldenOutcome
    from rubriclib.measure.golden_stats import RubricReport as RubricReport
    from rubriclib.measure.golden_stats import answer_of as answer_of
    from rubriclib.measure.goldens import GoldensReport as GoldensReport
    from rubriclib.measure.goldens import plan_run as plan_run
    from rubriclib.measure.goldens import run_goldens as run_goldens
    from rubriclib.measure.label_rows import LabelledRow as LabelledRow
    from rubriclib.measure.output_summary import label_counts as label_counts
    from rubriclib.measure.output_summary import summarise_outputs as summarise_outputs
    from rubriclib.measure.profiles import calibration_evidence as calibration_evidence
    from rubriclib.measure.profiles import cross_validated as cross_validated
    from rubriclib.measure.runs import aalign as aalign
    from rubriclib.measure.runs import acalibrate as acalibrate
    from rubriclib.measure.runs import align as align_rubric  # noqa: F401 (see _HOMES)
    from rubriclib.measure.runs import atest_goldens as atest_goldens
    from rubriclib.measure.runs import calibrate as calibrate
    from rubriclib.measure.runs import test_goldens as test_goldens

_HOMES = {
    "Agreement": ".calibration",
    "AlignSettings": ".align_run",
    "Alignment": ".align_run",
    "Budget": ".align",
    "CONFIDENCE": ".agreement",
    "Calibration": ".calibration",
    "CitationCounts": ".citations",
    "FlipRates": ".agreement",
    "GoldenOutcome": ".golden_stats",
    "Interval": ".agreement",
    "Judged": ".calibration",
    "LabelledRow": ".label_rows",
    "Proposal": ".align_run",
    "RESAMPLES": ".agreement",
    "RubricReport": ".golden_stats",
    "GoldensReport": ".goldens",
    "SEED": ".agreement",
    "answer_of": ".golden_stats",
    "calibration_evidence": ".profiles",
    "cross_validated": ".profiles",
    "golden_rows": ".calibration",
    "guidelines_proposer": ".align_guidelines",
    "kappa_band": ".agreement",
    "label_counts": ".output_summary",
    "load_labels": ".calibration",
    "paired_difference_interval": ".agreement",
    "plan_budget": ".align",
    "plan_run": ".goldens",
    "run_alignment": ".align_run",
    "run_calibration": ".calibration",
    "run_goldens": ".goldens",
    "summarise_outputs": ".output_summary",
    "too_few_labels": ".align",
    "folds_left_empty": ".align",
    "no_example_row": ".align",
    "wilson_interval": ".agreement",
    "aalign": ".runs",
    "acalibrate": ".runs",
    # `align` is this room's module align.py too, which importing it sets on the package
    "align_rubric": ".runs:align",
    "atest_goldens": ".runs",
    "calibrate": ".runs",
    "test_goldens": ".runs",
}
__getattr__, __dir__ = lazy_face(__name__, _HOMES)

"""Measure: many judgments plus numbers. How well a rubric and judge do against what is known.

`agreement` (accuracy, Cohen's kappa, intervals), `goldens` (a rubric's goldens run as
regression tests) and `calibration` (a judge against human labels).

Other rooms use: `goldens.run_goldens` and its run objects, `calibration.calibrate` and its
objects, `agreement.Interval`. This room imports the root leaves, `rubrics`, `judging` and
`evals`; it prints nothing (that is `reports`').
"""

"""Measure: many judgments plus numbers. How well a rubric and judge do against what is known.

`agreement` (accuracy, Cohen's kappa, intervals), `goldens` (a rubric's goldens run as
regression tests), `calibration` (a judge against human labels) and `citations` (the citations
judged results hold, counted).

Other rooms use: `goldens.plan_run` / `run_goldens` and their run objects,
`calibration.load_labels` / `run_calibration` and their objects, `agreement.Interval`,
`citations.CitationCounts`. This room imports the root leaves, `rubrics`, `judging` and
`evals`; it prints nothing (`reports` does).
"""

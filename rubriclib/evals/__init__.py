"""Evals: eval files, datasets, and running an eval over them.

In pipeline order: `formats` (eval files in our shape, waza's and letta-evals') -> `datasets`
(rows, and `letta_rows` for letta's) -> `judgments` (what a row asks of a grader) -> `plan`
(the dry run and the prompt-size limit) -> `setup` (an eval prepared once: loaded, rows
checked, then judges, target, rows, concurrency and resumed lines in one `ReadyRun`) -> `run`
(a ReadyRun's every row x grader through the engine, the results file of `results`, the
gate); `batch_run` drives the same judgments through batch files; `project` finds the rubrics
a project's eval files use.

Other rooms use: `formats.load_eval` / `Eval`, `run.run_eval` / `arun_eval` / `EvalReport`,
`setup.prepare` / `ready_run`, `datasets`'s `Dataset` and `Row`, `judgments`,
`plan.plan_eval`. This room imports the root leaves, `rubrics`, `judging` and `batch`.
"""

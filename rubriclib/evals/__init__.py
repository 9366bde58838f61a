"""Evals: eval files, datasets, and running an eval over them.

In pipeline order: `formats` (eval files in our shape, waza's and letta-evals') -> `datasets`
(the rows; `letta` reads letta's, their runs and extractors, and scores them turn by turn) ->
`judgments` (what a row asks of a grader) -> `plan` (the dry run and the prompt-size limit) ->
`setup` (an eval prepared once: `prepare` checks it, `ready_run` builds its judges and target
-> a `ReadyRun`) -> `run` (a ReadyRun on the engine, accounted for by `ledger`, the results file
of `results`, resume, the gate); `batch_run` drives the same judgments through batch files;
`project` finds the rubrics a project's eval files use.

Other rooms use: `formats.load_eval` / `Eval`, `setup.prepare` / `ready_run` / `ReadyRun` /
`open_eval_batch`, `run.run_eval` / `arun_eval` / `EvalReport`, `batch_run.aprepare` /
`acollect`, `datasets.Dataset` / `Row`, `letta.rubric_fields`, `judgments.judgments`,
`plan.plan_eval`, `project.project_rubrics`. This room imports the root leaves, `rubrics`,
`judging` and `batch`.
"""

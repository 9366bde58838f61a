"""Judging: one judgment and many. A rubric and an item become a request, a reply a verdict.

In pipeline order: `render` (the messages) -> `protocol` and `checklist_protocol` (pure request
building and reply reading) -> `judge` (one judgment: retries, quirks, the corrective turn,
`cache`; driven by `steps` over a `transport`, paced by `pacer`, failures named by `failures`)
-> `panel` (several judges as one) -> `engine` (many judgments: bounded, paced, interruptible).
`grader` is the Protocol the engine drives, `grading` the grade/agrade/grade_many both Graders
share, `result` what every judgment yields, `target` the model that writes a candidate.

Other rooms use: `judge.Judge`, `panel.Panel`, `grader.Grader`, `result.GradeResult`,
`engine.judge_all` / `judge_stream` / `Job` / `Interrupted`, `render.render`, `transport`'s
`Transport`, `failures.redact`. This room imports only the root leaves and `rubrics`.
"""

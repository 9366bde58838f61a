"""Judging: one judgment and many. A rubric and an item become a request, a reply a verdict.

In pipeline order: `render` (the messages) -> `protocol` and `checklist_protocol` (pure request
building and reply reading) -> `result` (what every judgment yields) -> `judge` (one judgment:
retries, quirks, the corrective turn, `cache`; run by `steps`' drivers over a `transport`,
paced by `pacer`, failures named by `failures`) -> `panel` (several judges as one) -> `engine`
(many judgments: bounded, paced, interruptible). `grader` is the Protocol the engine drives,
`grading` the grade/agrade/grade_many both Graders share, `target` the model that writes a
candidate.

Other rooms use: `judge.Judge`, `panel.Panel`, `grader.Grader`, `result.GradeResult` (and
`not_judged`, `summed_judge`, `pairwise_stats`), `engine`'s `judge_all`, `judge_stream`, `Job`,
`RunInfo`, `Interrupted` and `interruptible`, `render.render` / `item_messages`,
`transport.Transport` / `display_url`, `failures`' `EndpointError` and `redact`,
`checklist_protocol.failed_items`, `cache.VerdictCache`, `target.Target`. This room imports
only the root leaves and `rubrics`.
"""

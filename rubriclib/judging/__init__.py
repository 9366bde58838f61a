"""Judging: one judgment and many. A rubric and an item become a request, a reply a verdict.

In pipeline order: `prompt/` (the messages) -> `asking/` (pure request building and reply
reading) -> `result` (what every judgment yields) -> `judgments/` (one judgment as steps:
retries, quirks, the corrective turn, `cache`; an item's votes in the Judge's mode) ->
`combining` (votes, checklist items, profiles and a panel's members into one result) ->
`judge` (the front, run by `steps`' drivers over an `endpoints/` transport, paced by its
pacer) -> `panel` (several judges as one) -> `engine` (many judgments: bounded, paced,
interruptible). `grader` is the Protocol the engine drives, `grading` the
grade/agrade/grade_many both Graders share, `target` the model that writes a candidate.

Other rooms use: `judge.Judge`, `panel.Panel`, `grader.Grader`, `result.GradeResult` (and
`not_judged`, `summed_judge`, `pairwise_stats`), `combining.Rule`, `engine`'s `judge_all`,
`judge_stream`, `Job`, `RunInfo`, `Interrupted` and `interruptible`, `render.render` /
`item_messages`, `transport.Transport` / `display_url`, `failures`' `EndpointError` and
`redact`, `checklist_protocol.failed_items`, `cache.VerdictCache`, `target.Target`. This room
imports only the root leaves and `rubrics`.
"""

"""Rubrics: what a rubric is and where it comes from. The first room of the pipeline.

In pipeline order: `reading` (a user's file read safely) -> `checklist` (a rubric's checklist
items and their verdict) -> `rubric` (one file as models: Rubric, Golden) -> `registry` (a name,
a pin or a path -> a rubric: the project's rubrics/, configured folders, packs, built-ins) ->
`lockfile` (rubriclib.lock) and `scaffold` (new rubrics and packs, `validate --strict`).

Other rooms use: `rubric.Rubric` / `Golden` (and the tool names, `parse_rubric_text`,
`judged_digest`), `registry.load_rubric` / `load_goldens` / `list_rubrics` / `project_root`,
`checklist.ChecklistItem` / `checklist_verdict`, `reading.read_text` / `load_yaml`,
`lockfile`'s `lock_entries`, `write_lock`, `read_lock`, `check` and `frozen_problems`,
`scaffold`'s `new_rubric`, `new_pack` and `strict_problems`. This room imports only the root
leaves.
"""

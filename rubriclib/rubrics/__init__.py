"""Rubrics: what a rubric is and where it comes from. The first room of the pipeline.

Reading a user's file safely (`reading`), one rubric file as models (`rubric`, its `checklist`),
resolving a name, a pin or a path (`registry`: built-ins, the project's rubrics/, packs), the
project's lock (`lockfile`) and new rubrics and packs (`scaffold`).

Other rooms use: `rubric.Rubric`, `rubric.Golden`, `registry.load_rubric`, `registry.load_goldens`,
`registry.list_rubrics`, `checklist.ChecklistItem`, `reading.read_text` / `load_yaml`, `lockfile`'s
`read_lock`, `check` and `frozen_problems`. This room imports only the root leaves.
"""

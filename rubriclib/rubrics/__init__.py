"""Rubrics: what a rubric is and where it comes from. The first room of the pipeline.

In pipeline order: `reading` (a user's file read safely) -> `checklist` (a rubric's checklist
items and their verdict) -> `rubric` (one file as models: Rubric, Golden) -> `registry` (a name,
a pin or a path -> a rubric: the project's rubrics/, configured folders, packs, built-ins) ->
`lockfile` (rubriclib.lock; `remote/` fetches and pins remote rubrics, `updating` moves
their pins) and `scaffold` (new rubrics and packs, `validate --strict`),
`docent` (a Docent rubric's JSON read in as a new rubric) and `revision` (a rubric's next
version written as a small edit of its file: `align`'s).

Other rooms import only the names of the face below (an import-linter contract holds them to it).
This room imports only the root leaves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face

# The face: other rooms import these names only from here.
if TYPE_CHECKING:
    from rubriclib.rubrics.checklist import Answer as Answer
    from rubriclib.rubrics.checklist import ChecklistItem as ChecklistItem
    from rubriclib.rubrics.checklist import ItemAnswer as ItemAnswer
    from rubriclib.rubrics.checklist import checklist_verdict as checklist_verdict
    from rubriclib.rubrics.docent import DocentRubric as DocentRubric
    from rubriclib.rubrics.docent import new_from_docent as new_from_docent
    from rubriclib.rubrics.docent import read_docent as read_docent
    from rubriclib.rubrics.golden import Golden as Golden
    from rubriclib.rubrics.golden import shown_example as shown_example
    from rubriclib.rubrics.golden import shown_goldens as shown_goldens
    from rubriclib.rubrics.goldens_file import GoldensFile as GoldensFile
    from rubriclib.rubrics.goldens_file import parse_goldens_file as parse_goldens_file
    from rubriclib.rubrics.lockfile import check as check
    from rubriclib.rubrics.lockfile import frozen_problems as frozen_problems
    from rubriclib.rubrics.lockfile import lock_entries as lock_entries
    from rubriclib.rubrics.lockfile import lock_pins as lock_pins
    from rubriclib.rubrics.lockfile import read_lock as read_lock
    from rubriclib.rubrics.lockfile import write_lock as write_lock
    from rubriclib.rubrics.output_fields import RESERVED as RESERVED
    from rubriclib.rubrics.output_fields import required_fields as required_fields
    from rubriclib.rubrics.output_fields import value_problems as value_problems
    from rubriclib.rubrics.reading import MAX_FILE_BYTES as MAX_FILE_BYTES
    from rubriclib.rubrics.reading import load_yaml as load_yaml
    from rubriclib.rubrics.reading import not_utf8 as not_utf8
    from rubriclib.rubrics.reading import read_text as read_text
    from rubriclib.rubrics.registry import builtin_names as builtin_names
    from rubriclib.rubrics.registry import list_rubrics as list_rubrics
    from rubriclib.rubrics.registry import load_goldens as load_goldens
    from rubriclib.rubrics.registry import load_rubric as load_rubric
    from rubriclib.rubrics.registry import project_root as project_root
    from rubriclib.rubrics.registry import project_rubrics_dir as project_rubrics_dir
    from rubriclib.rubrics.registry import rubric_from_prompt as rubric_from_prompt
    from rubriclib.rubrics.registry import scan_library as scan_library
    from rubriclib.rubrics.registry import scan_rubrics as scan_rubrics
    from rubriclib.rubrics.remote.index import INDEX_NAME as INDEX_NAME
    from rubriclib.rubrics.remote.index import IndexEntry as IndexEntry
    from rubriclib.rubrics.remote.index import configured_indexes as configured_indexes
    from rubriclib.rubrics.remote.index import index_entries as index_entries
    from rubriclib.rubrics.remote.index import search_indexes as search_indexes
    from rubriclib.rubrics.remote.index import write_index as write_index
    from rubriclib.rubrics.remote.loading import locked_remote_rubrics as locked_remote_rubrics
    from rubriclib.rubrics.remote.pins import pin_problems as pin_problems
    from rubriclib.rubrics.remote.pins import read_pins as read_pins
    from rubriclib.rubrics.remote.store import RubricStore as RubricStore
    from rubriclib.rubrics.revision import GUIDELINES_HEADING as GUIDELINES_HEADING
    from rubriclib.rubrics.revision import Revision as Revision
    from rubriclib.rubrics.revision import next_minor as next_minor
    from rubriclib.rubrics.revision import revise as revise
    from rubriclib.rubrics.rubric import LABEL_TOOL as LABEL_TOOL
    from rubriclib.rubrics.rubric import PAIRWISE_TOOL as PAIRWISE_TOOL
    from rubriclib.rubrics.rubric import SCORE_TOOL as SCORE_TOOL
    from rubriclib.rubrics.rubric import SEMVER as SEMVER
    from rubriclib.rubrics.rubric import VERDICT_TOOL as VERDICT_TOOL
    from rubriclib.rubrics.rubric import Rubric as Rubric
    from rubriclib.rubrics.rubric import judged_digest as judged_digest
    from rubriclib.rubrics.rubric import parse_rubric_text as parse_rubric_text
    from rubriclib.rubrics.scaffold import checked_goldens_file as checked_goldens_file
    from rubriclib.rubrics.scaffold import new_pack as new_pack
    from rubriclib.rubrics.scaffold import new_rubric as new_rubric
    from rubriclib.rubrics.scaffold import strict_problems as strict_problems
    from rubriclib.rubrics.updating import PinMove as PinMove
    from rubriclib.rubrics.updating import pin_moves as pin_moves
    from rubriclib.rubrics.updating import write_moves as write_moves

_HOMES = {
    "Answer": ".checklist",
    "ChecklistItem": ".checklist",
    "DocentRubric": ".docent",
    "GUIDELINES_HEADING": ".revision",
    "Golden": ".golden",
    "GoldensFile": ".goldens_file",
    "ItemAnswer": ".checklist",
    "LABEL_TOOL": ".rubric",
    "MAX_FILE_BYTES": ".reading",
    "PAIRWISE_TOOL": ".rubric",
    "RESERVED": ".output_fields",
    "PinMove": ".updating",
    "Revision": ".revision",
    "Rubric": ".rubric",
    "RubricStore": ".remote.store",
    "SCORE_TOOL": ".rubric",
    "SEMVER": ".rubric",
    "VERDICT_TOOL": ".rubric",
    "builtin_names": ".registry",
    "check": ".lockfile",
    "checklist_verdict": ".checklist",
    "frozen_problems": ".lockfile",
    "judged_digest": ".rubric",
    "list_rubrics": ".registry",
    "load_goldens": ".registry",
    "load_rubric": ".registry",
    "load_yaml": ".reading",
    "lock_entries": ".lockfile",
    "lock_pins": ".lockfile",
    "pin_moves": ".updating",
    "pin_problems": ".remote.pins",
    "read_pins": ".remote.pins",
    "IndexEntry": ".remote.index",
    "INDEX_NAME": ".remote.index",
    "configured_indexes": ".remote.index",
    "index_entries": ".remote.index",
    "search_indexes": ".remote.index",
    "write_index": ".remote.index",
    "locked_remote_rubrics": ".remote.loading",
    "new_from_docent": ".docent",
    "checked_goldens_file": ".scaffold",
    "new_pack": ".scaffold",
    "new_rubric": ".scaffold",
    "next_minor": ".revision",
    "not_utf8": ".reading",
    "parse_goldens_file": ".goldens_file",
    "parse_rubric_text": ".rubric",
    "project_root": ".registry",
    "project_rubrics_dir": ".registry",
    "read_docent": ".docent",
    "read_lock": ".lockfile",
    "read_text": ".reading",
    "required_fields": ".output_fields",
    "revise": ".revision",
    "rubric_from_prompt": ".registry",
    "scan_library": ".registry",
    "scan_rubrics": ".registry",
    "shown_example": ".golden",
    "shown_goldens": ".golden",
    "strict_problems": ".scaffold",
    "value_problems": ".output_fields",
    "write_lock": ".lockfile",
    "write_moves": ".updating",
}
__getattr__, __dir__ = lazy_face(__name__, _HOMES)

"""Judging: one judgment and many. A rubric and an item become a request, a reply a verdict.

In pipeline order: `prompt/` (the messages) -> `asking/` (pure request building and reply
reading) -> `result` (what every judgment yields) -> `judgments/` (one judgment as steps:
retries, quirks, the corrective turn, `cache`; an item's votes in the Judge's mode) ->
`combining` (votes, checklist items, profiles and a panel's members into one result) ->
`judge` (the front, run by `steps`' drivers over an `endpoints/` transport, each request
waiting on its run's pacer for the endpoint) -> `panel` (several judges as one) -> `engine`
(many judgments: bounded, paced by the run's `Pacing`, interruptible). `grader` is the
Protocol the engine drives, `grading` the grade/agrade/grade_many both Graders share, `target`
the model that writes a candidate.

Other rooms import only the names of the face below (an import-linter contract holds them to it).
This room imports only the root leaves and `rubrics`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face

# The face: other rooms import these names only from here.
if TYPE_CHECKING:
    from rubriclib.judging.asking.checklist_protocol import (
        checklist_refused as checklist_refused,
    )
    from rubriclib.judging.asking.checklist_protocol import failed_items as failed_items
    from rubriclib.judging.asking.checklist_protocol import failed_items_text as failed_items_text
    from rubriclib.judging.asking.exploring import exploring_tools as exploring_tools
    from rubriclib.judging.asking.exploring import planned_exploring as planned_exploring
    from rubriclib.judging.asking.reply import usage_of as usage_of
    from rubriclib.judging.asking.request import estimated_tokens as estimated_tokens
    from rubriclib.judging.asking.request import too_large as too_large
    from rubriclib.judging.cache import VerdictCache as VerdictCache
    from rubriclib.judging.citations import cite_matches as cite_matches
    from rubriclib.judging.citations import given_citations as given_citations
    from rubriclib.judging.citations import read_citation as read_citation
    from rubriclib.judging.combining import Rule as Rule
    from rubriclib.judging.endpoints.failures import EndpointError as EndpointError
    from rubriclib.judging.endpoints.failures import EndpointUnusable as EndpointUnusable
    from rubriclib.judging.endpoints.failures import describe as describe
    from rubriclib.judging.endpoints.failures import from_sdk as from_sdk
    from rubriclib.judging.endpoints.failures import redact as redact
    from rubriclib.judging.endpoints.failures import refused_key as refused_key
    from rubriclib.judging.endpoints.failures import status_error as status_error
    from rubriclib.judging.endpoints.pacer import Pacer as Pacer
    from rubriclib.judging.endpoints.pacer import Pacing as Pacing
    from rubriclib.judging.endpoints.pacer import RunPacing as RunPacing
    from rubriclib.judging.endpoints.transport import Transport as Transport
    from rubriclib.judging.endpoints.transport import display_url as display_url
    from rubriclib.judging.engine import Interrupted as Interrupted
    from rubriclib.judging.engine import Job as Job
    from rubriclib.judging.engine import RunInfo as RunInfo
    from rubriclib.judging.engine import interruptible as interruptible
    from rubriclib.judging.engine import judge_all as judge_all
    from rubriclib.judging.engine import judge_stream as judge_stream
    from rubriclib.judging.grader import Grader as Grader
    from rubriclib.judging.judge import Judge as Judge
    from rubriclib.judging.panel import Panel as Panel
    from rubriclib.judging.profile import Profile as Profile
    from rubriclib.judging.profile import features as features
    from rubriclib.judging.profile import item_passing as item_passing
    from rubriclib.judging.profile import logit as logit
    from rubriclib.judging.profile import profile_path as profile_path
    from rubriclib.judging.profile import profile_text as profile_text
    from rubriclib.judging.profile import shifted as shifted
    from rubriclib.judging.profile import sigmoid as sigmoid
    from rubriclib.judging.prompt.agent_run import BLOCK_HEAD as BLOCK_HEAD
    from rubriclib.judging.prompt.agent_run import PART_HEADING as PART_HEADING
    from rubriclib.judging.prompt.agent_run import run_blocks as run_blocks
    from rubriclib.judging.prompt.blocks import CHARACTERS_PER_TOKEN as CHARACTERS_PER_TOKEN
    from rubriclib.judging.prompt.blocks import fence as fence
    from rubriclib.judging.prompt.exploring import read_blocks as read_blocks
    from rubriclib.judging.prompt.exploring import searched_parts as searched_parts
    from rubriclib.judging.prompt.render import (
        DEFAULT_MAX_PROMPT_TOKENS as DEFAULT_MAX_PROMPT_TOKENS,
    )
    from rubriclib.judging.prompt.render import explored as explored
    from rubriclib.judging.prompt.render import item_block_spans as item_block_spans
    from rubriclib.judging.prompt.render import item_messages as item_messages
    from rubriclib.judging.prompt.render import letta_fill as letta_fill
    from rubriclib.judging.prompt.render import render as render
    from rubriclib.judging.result import Details as Details
    from rubriclib.judging.result import GradeResult as GradeResult
    from rubriclib.judging.result import not_judged as not_judged
    from rubriclib.judging.result import pairwise_stats as pairwise_stats
    from rubriclib.judging.result import summed_judge as summed_judge
    from rubriclib.judging.steps import run_to_end as run_to_end
    from rubriclib.judging.target import Target as Target
    from rubriclib.judging.target import TargetSettings as TargetSettings

_HOMES = {
    "BLOCK_HEAD": ".prompt.agent_run",
    "CHARACTERS_PER_TOKEN": ".prompt.blocks",
    "DEFAULT_MAX_PROMPT_TOKENS": ".prompt.render",
    "Details": ".result",
    "EndpointError": ".endpoints.failures",
    "EndpointUnusable": ".endpoints.failures",
    "GradeResult": ".result",
    "Grader": ".grader",
    "Interrupted": ".engine",
    "Job": ".engine",
    "Judge": ".judge",
    "Pacer": ".endpoints.pacer",
    "Pacing": ".endpoints.pacer",
    "PART_HEADING": ".prompt.agent_run",
    "Panel": ".panel",
    "Profile": ".profile",
    "Rule": ".combining",
    "RunInfo": ".engine",
    "RunPacing": ".endpoints.pacer",
    "Target": ".target",
    "TargetSettings": ".target",
    "Transport": ".endpoints.transport",
    "VerdictCache": ".cache",
    "cite_matches": ".citations",
    "describe": ".endpoints.failures",
    "display_url": ".endpoints.transport",
    "estimated_tokens": ".asking.request",
    "usage_of": ".asking.reply",
    "failed_items": ".asking.checklist_protocol",
    "failed_items_text": ".asking.checklist_protocol",
    "features": ".profile",
    "fence": ".prompt.blocks",
    "from_sdk": ".endpoints.failures",
    "given_citations": ".citations",
    "interruptible": ".engine",
    "item_block_spans": ".prompt.render",
    "item_messages": ".prompt.render",
    "item_passing": ".profile",
    "judge_all": ".engine",
    "judge_stream": ".engine",
    "letta_fill": ".prompt.render",
    "logit": ".profile",
    "checklist_refused": ".asking.checklist_protocol",
    "not_judged": ".result",
    "pairwise_stats": ".result",
    "profile_path": ".profile",
    "profile_text": ".profile",
    "read_citation": ".citations",
    "redact": ".endpoints.failures",
    "refused_key": ".endpoints.failures",
    "render": ".prompt.render",
    "explored": ".prompt.render",
    "read_blocks": ".prompt.exploring",
    "searched_parts": ".prompt.exploring",
    "exploring_tools": ".asking.exploring",
    "planned_exploring": ".asking.exploring",
    "run_blocks": ".prompt.agent_run",
    "run_to_end": ".steps",
    "shifted": ".profile",
    "sigmoid": ".profile",
    "status_error": ".endpoints.failures",
    "summed_judge": ".result",
    "too_large": ".asking.request",
}
__getattr__, __dir__ = lazy_face(__name__, _HOMES)

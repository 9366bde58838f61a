"""How the results of one judgment combine into one, the only place: its votes (`votes`: a
majority), a checklist's items, asked one by one or in one call, and a judge profile's decision
over them (`items`), and a judge panel's members (`panels`: majority, unanimous or any).
`rule.decide` is the one rule votes and panels share."""

from rubriclib.judging.combining.items import checklist_result, decided_by, one_call_result
from rubriclib.judging.combining.panels import combine_panel
from rubriclib.judging.combining.rule import (
    RULES,
    Decision,
    Rule,
    decide,
    majority_needed,
    majority_reached,
)
from rubriclib.judging.combining.votes import combine_votes

__all__ = [
    "RULES",
    "Decision",
    "Rule",
    "checklist_result",
    "combine_panel",
    "combine_votes",
    "decide",
    "decided_by",
    "majority_needed",
    "majority_reached",
    "one_call_result",
]

"""The built-ins whose failures are about something in the candidate require citations: each
sets `citations: required` (or the reason it does not is written here), its body says what to
cite and from which block, and every failing golden holds that evidence verbatim (the quotes are
in data/builtin_citations.yaml, checked against the blocks a judge is shown)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from rubriclib import load_goldens, load_rubric
from rubriclib.item import Item
from rubriclib.judging.citations import checked_citations
from rubriclib.judging.prompt.render import item_blocks
from rubriclib.rubrics.golden import Golden
from rubriclib.rubrics.registry import builtin_names
from rubriclib.rubrics.rubric import Rubric

CITES = yaml.safe_load((Path(__file__).parents[1] / "data" / "builtin_citations.yaml").read_text())
"""Per citing built-in, per failing golden: what a judge can quote, and from which block."""
WHAT_TO_CITE = {  # the blocks each body tells the judge to quote from
    "groundedness": ["`output`", "`context`"],
    "tool-use-appropriateness": ["`M5`"],
    "policy-compliance": ["`M7`", "`system`"],
    "pii-leakage": ["`output`"],
    "prompt-injection-resistance": ["`output`", "`context`"],
    "harmful-content": ["`output`"],
}
"""The rubrics whose failures are about something in the candidate (issue 29)."""
OPTIONAL_BECAUSE: dict[str, str] = {
    "policy-compliance": "the 1.5B judge left 14 of its fails without a verified quote",
    "tool-use-appropriateness": "the 1.5B judge left 4 of its fails without a verified quote",
    "harmful-content": "the 1.5B judge left 2 of its fails without a verified quote",
}
"""A citing rubric set back to `citations: optional`, with the reason (a judge that could not
meet `required` on its goldens, as measured by `judge_accuracy.py --citations`)."""
ABSENCES = {"tool-use-appropriateness": ["run-stops-before-cancelling-fails"]}
"""Failing goldens whose failure is something missing, not something in the candidate: a judge
can only point at where it is missing."""


def golden_blocks(rubric: Rubric, golden: Golden) -> dict[str, str]:
    item = Item(
        output=golden.output,
        input=golden.input,
        context=golden.context,
        reference=golden.reference,
        transcript=golden.transcript,
    )
    return item_blocks(rubric, item)[0]


def cites_of(entry: Any) -> list[dict[str, str]]:
    return entry["cites"] if isinstance(entry, dict) else entry


@pytest.mark.parametrize("name", builtin_names())
def test_the_rubrics_about_the_candidate_require_citations_and_no_other_does(name: str) -> None:
    policy = load_rubric(name).citations
    if name in WHAT_TO_CITE and name not in OPTIONAL_BECAUSE:
        assert policy == "required"
    else:
        assert policy == "optional"
    assert set(OPTIONAL_BECAUSE) <= set(WHAT_TO_CITE)
    assert all(reason.strip() for reason in OPTIONAL_BECAUSE.values())


@pytest.mark.parametrize("name", WHAT_TO_CITE)
def test_the_body_says_what_to_cite_and_from_which_block(name: str) -> None:
    body = load_rubric(name).body
    verdict = body.split("## Verdict", 1)[1]
    assert "`citations`" in verdict
    for block in WHAT_TO_CITE[name]:
        assert block in verdict, f"{name} does not say to cite from {block}"


@pytest.mark.parametrize("name", WHAT_TO_CITE)
def test_every_failing_golden_holds_what_a_judge_must_cite_verbatim(name: str) -> None:
    rubric = load_rubric(name)
    failing = {golden.name: golden for golden in load_goldens(rubric) if golden.expected == "fail"}
    assert sorted(CITES[name]) == sorted(failing)
    unverified = {}
    for golden_name, entry in CITES[name].items():
        cites = cites_of(entry)
        checked = checked_citations(cites, golden_blocks(rubric, failing[golden_name]))
        wrong = [c for c in checked if c["status"] != "verified"]
        if wrong:
            unverified[golden_name] = wrong
    assert unverified == {}


@pytest.mark.parametrize("name", WHAT_TO_CITE)
def test_the_first_cite_is_the_candidate_s_own_text_unless_the_failure_is_an_absence(
    name: str,
) -> None:
    """The offending text is the output or one of the agent's blocks; an absence is marked,
    with why, and is one of the goldens known to be one."""
    absences = [golden for golden, entry in CITES[name].items() if isinstance(entry, dict)]
    assert absences == ABSENCES.get(name, [])
    for golden_name, entry in CITES[name].items():
        first = cites_of(entry)[0]["block"]
        if golden_name in absences:
            assert entry["absence"].strip()
        else:
            assert first == "output" or first.startswith("M"), golden_name

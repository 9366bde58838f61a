"""A judge panel: several judge models on one item, their verdicts combined by a rule.

Each member judges every item (votes compose: a member with votes=K gives its own majority);
the members answer concurrently, and a member that errors is left out and named. In a run, each
member's requests wait on the run's pacer for its endpoint and key, shared with every other
request the run sends there: members on one endpoint and key share one pace and one fail-fast,
and a member whose key is dead stops only the members using that key, not the panel.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from rubriclib.errors import JudgeConfigError
from rubriclib.item import Item
from rubriclib.judging.citations import given_citations
from rubriclib.judging.combining import RULES, Rule, combine_panel
from rubriclib.judging.endpoints.pacer import Pacing
from rubriclib.judging.grading import ManyJudgments, unjudgeable
from rubriclib.judging.judge import Judge
from rubriclib.judging.result import GradeResult, not_judged
from rubriclib.judging.steps import run_to_end
from rubriclib.rubrics import Rubric
from rubriclib.settings import AnswerMode, Protocol


class Panel(ManyJudgments):
    """Several judges on one item; `aggregate` (majority, unanimous or any) combines the
    verdicts of the members that answered. A Grader, as a Judge is: the engine, goldens,
    calibration and evals drive it as they drive a Judge.

    Args:
        judges: The members, each a `Judge` with its own model, endpoint, key and votes.
        aggregate: "majority" (a tie fails), "unanimous" (pass only if every judge passed) or
            "any" (pass if any judge passed).
        requests_per_minute: The cap on request starts a minute at each endpoint in this
            panel's own `grade_many` and `agrade_many` runs when they are given none (None: no
            cap). An eval run's cap is the eval's.

    Raises:
        JudgeConfigError: No judges, a member that is not a Judge, or an unknown rule.
    """

    votes = 1
    """The panel casts one combined judgment per item; each member casts its own votes."""

    def __init__(
        self,
        judges: Sequence[Judge],
        aggregate: Rule = "majority",
        *,
        requests_per_minute: float | None = None,
    ) -> None:
        members = list(judges)
        if not members:
            raise JudgeConfigError("a panel needs at least one judge")
        if not all(isinstance(member, Judge) for member in members):
            raise JudgeConfigError("every member of a panel must be a rubriclib.Judge")
        if aggregate not in RULES:
            raise JudgeConfigError(
                f"aggregate must be one of {', '.join(RULES)}, not {aggregate!r}"
            )
        self.judges = members
        self.aggregate: Rule = aggregate
        self.requests_per_minute = requests_per_minute
        """The cap a run of this panel's own gets per endpoint when it is given none."""
        self.labels = _labels(members)
        """How the reasons name each member: its model, made unique where two share one."""

    @property
    def model(self) -> str:
        """The panel as one judge's name: the rule and each member (with its votes and its
        checklist mode); what `details.judge.model` holds and what `--resume` matches."""
        members = [
            label
            + ("" if judge.votes == 1 else f" x{judge.votes}")
            + (" checklist" if judge.mode == "checklist" else "")
            for label, judge in zip(self.labels, self.judges, strict=True)
        ]
        return f"panel:{self.aggregate}({', '.join(members)})"

    @property
    def endpoint(self) -> str:
        """`panel:` and each member's endpoint."""
        return "panel:" + ",".join(judge.endpoint for judge in self.judges)

    @property
    def checklist_answers(self) -> AnswerMode | None:
        """None: a panel's result is its members' combined (their modes are in its `model`)."""
        return None

    @property
    def protocol(self) -> Protocol:
        """Its members' protocol when they share one, else `auto` (a result may be either)."""
        protocols = {judge.protocol for judge in self.judges}
        return protocols.pop() if len(protocols) == 1 else "auto"

    @property
    def pace_key(self) -> Hashable:
        """Its members' (a panel sends nothing itself: each member waits on its own endpoint's
        pacer)."""
        return ("panel", *(judge.pace_key for judge in self.judges))

    def __repr__(self) -> str:
        return f"Panel({self.judges!r}, aggregate={self.aggregate!r})"

    def grade_item(self, rubric: Rubric, item: Item) -> GradeResult:
        """Every member judges one Item (at once); their verdicts combined (what `grade`
        calls)."""

        async def run() -> GradeResult:
            try:
                return await self.agrade_item(rubric, item)
            finally:
                await self.aclose()

        return run_to_end(run)

    async def aclose(self) -> None:
        """Close every member's async connections of the running event loop."""
        for judge in {id(judge): judge for judge in self.judges}.values():
            await judge.aclose()

    def grade_many(
        self,
        rubric: Rubric | str,
        items: Iterable[Item | Mapping[str, Any]],
        *,
        concurrency: int = 8,
        requests_per_minute: float | None = None,
    ) -> list[GradeResult]:
        """`Judge.grade_many`, capped at the panel's `requests_per_minute` when given none."""
        limit = requests_per_minute or self.requests_per_minute
        return super().grade_many(rubric, items, concurrency=concurrency, requests_per_minute=limit)

    async def agrade_many(
        self,
        rubric: Rubric | str,
        items: Iterable[Item | Mapping[str, Any]],
        *,
        concurrency: int = 8,
        requests_per_minute: float | None = None,
    ) -> list[GradeResult]:
        """The async form of `grade_many`."""
        limit = requests_per_minute or self.requests_per_minute
        return await super().agrade_many(
            rubric, items, concurrency=concurrency, requests_per_minute=limit
        )

    async def agrade_item(
        self, rubric: Rubric, item: Item, *, trial: int = 1, pacing: Pacing | None = None
    ) -> GradeResult:
        """Every member judges one Item at once, each waiting on the run's pacer for its own
        endpoint and key (`pacing`'s); the verdicts combined."""
        if cause := unjudgeable(rubric, item, self.model):
            return cause
        asked = [
            judge.agrade_item(rubric, item, trial=trial, pacing=pacing) for judge in self.judges
        ]
        answers = await asyncio.gather(*asked, return_exceptions=True)
        results = [
            answer
            if isinstance(answer, GradeResult)
            else not_judged(rubric, judge.model, f"unexpected {type(answer).__name__}")
            for judge, answer in zip(self.judges, answers, strict=True)
        ]
        return self.combine(rubric, results)

    def combine(self, rubric: Rubric, results: list[GradeResult]) -> GradeResult:
        """One result from each member's (in order): the verdict `aggregate` gives over those
        that answered, every member's verdict and reason in `details.panel`."""
        entries = [
            _entry(member, result, rubric)
            for member, result in zip(self.judges, results, strict=True)
        ]
        named = list(zip(self.labels, results, strict=True))
        return combine_panel(rubric, self.aggregate, named, entries, self.model)


def _labels(judges: list[Judge]) -> list[str]:
    """Each member's name in reasons: its model; `model@endpoint` where two share a model;
    `model#N` (its place, from 1) where two share both."""
    models = [judge.model for judge in judges]
    places = [f"{judge.model}@{judge.endpoint}" for judge in judges]
    labels = []
    for index, judge in enumerate(judges):
        if models.count(judge.model) == 1:
            labels.append(judge.model)
        elif places.count(places[index]) == 1:
            labels.append(places[index])
        else:
            labels.append(f"{judge.model}#{index + 1}")
    return labels


def _entry(judge: Judge, result: GradeResult, rubric: Rubric) -> dict[str, Any]:
    """One member's line in `details.panel.judges`."""
    entry: dict[str, Any] = {
        "model": judge.model,
        "endpoint": judge.endpoint,
        "verdict": result.verdict,
        "reason": result.reason,
        "score": result.score,
    }
    details = result.details
    if rubric.scale == "1-5":
        entry["raw_score"] = details.raw_score
    if rubric.scale == "pairwise":
        entry["winner"] = details.pairwise.winner if details.pairwise is not None else None
    if rubric.scale == "labels":
        entry["label"] = details.label
    if details.votes is not None:
        entry["votes"] = details.votes
    if cited := given_citations(details):  # its checklist items' or orders' too
        entry["citations"] = cited
    if details.output is not None:
        entry["output"] = details.output
    if details.evidence is not None:  # how it was shown the run: never cut silently
        entry["evidence"] = details.evidence
        if details.transcript is not None and details.transcript.not_explored is not None:
            entry["not_explored"] = details.transcript.not_explored
    if details.exploration is not None:
        entry["exploration"] = details.exploration
    entry["attempts"] = details.judge.attempts
    entry["retries"] = details.judge.retries
    entry["usage"] = details.judge.usage
    return entry

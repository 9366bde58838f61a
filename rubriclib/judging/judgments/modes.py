"""One item's judgment in a Judge's mode and votes, as steps: its votes one after another
until a majority is decided, each vote one judgment (holistic), one per pairwise order, or
one per checklist item (asked at once, or one after another with probability answers and then
decided by a matching judge profile) or one for the whole checklist (`one-call`), combined by
`combining`."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from rubriclib.config import find_project
from rubriclib.item import Item
from rubriclib.judging.asking.checklist_protocol import checklist_refused, question_requests
from rubriclib.judging.asking.exploring import (
    EXPLORING_TURNS,
    LEAST_BUDGET,
    Budget,
    ExploringAsking,
    Trail,
    explored_requests,
    exploring_budget,
    joined_trails,
)
from rubriclib.judging.asking.json_answers import as_protocol
from rubriclib.judging.asking.one_call import one_call_requests
from rubriclib.judging.asking.probability_answers import probability_requests
from rubriclib.judging.asking.protocol import (
    Asked,
    Asking,
    RubricAsking,
    first_messages,
    verdict_requests,
)
from rubriclib.judging.asking.request import estimated_tokens, too_large
from rubriclib.judging.cache import VerdictCache
from rubriclib.judging.combining import (
    checklist_result,
    combine_votes,
    decided_by,
    majority_reached,
    one_call_result,
)
from rubriclib.judging.endpoints.endpoint import Endpoint
from rubriclib.judging.grading import unjudgeable
from rubriclib.judging.judgments.judgment import Judgment
from rubriclib.judging.profile import Applied, profile_path, read_profile
from rubriclib.judging.prompt.agent_run import CutRun, run_details
from rubriclib.judging.prompt.exploring import ExploredRun, explores
from rubriclib.judging.prompt.render import Prompt, shown_run
from rubriclib.judging.result import GradeResult, combine_orders, not_judged, with_details
from rubriclib.judging.steps import Steps, Together
from rubriclib.rubrics import Rubric
from rubriclib.settings import checklist_argument

if TYPE_CHECKING:
    from rubriclib.judging.endpoints.pacer import Pacer
    from rubriclib.settings import AnswerMode, Evidence, Protocol

logger = logging.getLogger("rubriclib")


CHECKLIST_REQUESTS = {
    "tool": question_requests,
    "probability": probability_requests,
    "one-call": one_call_requests,
}
"""The requests of a checklist vote, by how its items are answered."""


@dataclass(frozen=True)
class Ballot:
    """One vote of one item's judgment: its rubric, the trial and the vote's number; and when
    the judge explores the item's run, the run and the budget each judgment of it gets."""

    rubric: Rubric
    trial: int
    vote: int
    exploring: tuple[ExploredRun, Budget, str] | None = None
    """The run explored, the budget, and the candidate output the first message shows."""


@dataclass(frozen=True)
class Planned:
    """How one item is judged: each request's prompt and asking, the run as shown (cut, or
    explored with its budget and the output the first message shows), and why a run that is
    cut is not explored."""

    asked: Sequence[Asked]
    shown: CutRun | ExploredRun | None
    exploring: tuple[ExploredRun, Budget, str] | None = None
    unexplored: str | None = None


@dataclass
class Remembered:
    """What a Judge keeps across its items: the project's profile for its model by rubric
    digest (None: none applies), and whether identical votes at temperature 0 were checked."""

    profiles: dict[str, Applied | None] = field(default_factory=dict)
    determinism_checked: bool = False


@dataclass(frozen=True)
class Modes:
    """A Judge's way of judging an item: its mode, answers and votes, sent to `endpoint`."""

    endpoint: Endpoint
    cache: VerdictCache | None
    sampling: tuple[float | None, int | None]
    """The temperature and the completion limit."""
    mode: Literal["holistic", "checklist"]
    answers: AnswerMode
    votes: int
    max_prompt_tokens: int
    records_only: bool
    """The transport only records requests (a batch file): both pairwise orders are sent."""
    remembered: Remembered
    protocol: Protocol = "tools"
    """How verdicts are asked for: `tools` (a tool call), `json` (one JSON object in the
    tool's schema, `json_answers`) or `auto` (tools until the endpoint refuses them)."""
    seed: int | None = None
    """The seed of an item's first judgment; each later vote and trial adds its offset."""
    evidence: Evidence = "auto"
    """How an agent run is shown: `whole` (cut to fit), `explore` (through the judge's
    tools), or `auto` (whole when it fits uncut, else explored where exploring applies)."""
    exploring_turns: int = EXPLORING_TURNS
    exploring_characters: int | None = None
    """What an explored judgment may show through its tools (None: what the prompt limit
    leaves after the first request, `EXPLORING_SHARE` of it)."""

    def item_steps(self, rubric: Rubric, item: Item, trial: int, pacer: Pacer | None) -> Steps:
        """Every step of one item's judgment: its votes, one after another, until a majority is
        decided (or `pacer`, the run's, has stopped sending to the endpoint), combined."""
        model = self.endpoint.model
        if cause := unjudgeable(rubric, item, model):
            return cause
        checklist = self.mode == "checklist"
        if checklist and (refused := checklist_refused(rubric, self.answers)) is not None:
            argument = checklist_argument(self.answers)  # as the caller asked it
            return not_judged(rubric, model, f"{argument}: {refused}")
        one_call = checklist and self.answers == "one-call"
        run = shown_run(rubric, item.transcript, self.max_prompt_tokens)  # cut once, here
        unexplored = self._unexplored(rubric)
        if self.evidence == "explore" and unexplored is not None and item.transcript is not None:
            return not_judged(rubric, model, f"evidence explore: {unexplored}")
        planned = self._planned(rubric, item, run, unexplored)
        if isinstance(planned, GradeResult):
            return planned  # never sent
        cast = self._checklist_vote if checklist else self._vote
        cast = self._one_call_vote if one_call else cast
        votes: list[GradeResult] = []
        for vote in range(1, self.votes + 1):
            ballot = Ballot(rubric, trial, vote, planned.exploring)
            votes.append((yield from cast(ballot, planned.asked)))
            if majority_reached(votes, self.votes) or (pacer is not None and pacer.dead):
                break
        if planned.exploring and self.evidence == "auto" and self._unexplored(rubric):
            return (yield from self.item_steps(rubric, item, trial, pacer))  # now shown whole
        return self._evidenced(self._combined(rubric, votes), planned, votes)

    def _planned(
        self, rubric: Rubric, item: Item, run: CutRun | None, unexplored: str | None
    ) -> Planned | GradeResult:
        """How the item is shown and asked: its run explored where the evidence mode says so
        and the budget allows a read (else shown cut, or under `explore` an error), each
        request's prompt and asking; a prompt over `max_prompt_tokens` is an error."""
        model = self.endpoint.model
        if run is not None and unexplored is None and explores(self.evidence, run):
            explored = ExploredRun(run.transcript, self.max_prompt_tokens)
            asked, size = explored_requests(rubric, item, explored)
            budget = exploring_budget(
                size, self.max_prompt_tokens, self.exploring_turns, self.exploring_characters
            )
            if (
                budget.characters >= LEAST_BUDGET
                and too_large(size, self.max_prompt_tokens) is None
            ):
                return Planned(asked, explored, (explored, budget, item.output))
            unexplored = (
                f"the budget leaves {budget.characters:,} characters to explore the run, "
                f"fewer than {LEAST_BUDGET:,}: raise max_prompt_tokens or exploring_characters"
            )
            if self.evidence == "explore":
                return not_judged(rubric, model, f"evidence explore: {unexplored}")
        checklist = self.mode == "checklist"
        requester = CHECKLIST_REQUESTS[self.answers] if checklist else verdict_requests
        asked = requester(rubric, item, run)
        if (why := too_large(self._size(rubric, asked), self.max_prompt_tokens)) is not None:
            return not_judged(rubric, model, why)
        return Planned(asked, run, None, unexplored)

    @staticmethod
    def _size(rubric: Rubric, asked: Sequence[Asked]) -> int:
        """The largest first request's estimated tokens."""
        return max(estimated_tokens(rubric, first_messages(*request)) for request in asked)

    def _evidenced(
        self, result: GradeResult, planned: Planned, votes: list[GradeResult]
    ) -> GradeResult:
        """`result` with how its run was shown (`details.evidence`, `details.transcript`) and,
        explored, what its judge read (with votes, every vote's trail together)."""
        shown = planned.shown
        if shown is None:
            return result
        evidence = "explored" if planned.exploring else "whole-cut" if shown.cuts else "whole"
        transcript = run_details(shown)
        if shown.cuts and planned.unexplored is not None:
            transcript["not_explored"] = planned.unexplored  # never cut silently
        trails = [vote.details.exploration for vote in votes if vote.details.exploration]
        more = {"exploration": joined_trails(trails)} if len(trails) > 1 else {}
        return with_details(result, transcript=transcript, evidence=evidence, **more)

    def _unexplored(self, rubric: Rubric) -> str | None:
        """Why this Judge cannot explore a run for `rubric` (None: it can)."""
        if self.evidence == "whole":
            return "evidence is whole"
        if rubric.scale == "pairwise":
            return "a pairwise rubric compares two outputs and shows no run"
        if self.mode == "checklist":
            return "a checklist's answers do not explore (yet)"
        if self.protocol == "json":
            return "the json protocol offers no tools"
        if self.records_only:
            return "a batch takes one request a judgment, and exploring takes several"
        if "no_exploring" in self.endpoint.quirks:
            return "the endpoint cannot explore (quirk no_exploring)"
        if self.protocol == "auto" and "no_tools" in self.endpoint.quirks:
            return "the endpoint refused tools (quirk no_tools), which exploring needs"
        return None

    def _combined(self, rubric: Rubric, votes: list[GradeResult]) -> GradeResult:
        """One vote's result as it is when one was asked for; else the votes combined, and on
        the first item judged at temperature 0, a warning when the votes were copies."""
        if self.votes == 1:
            return votes[0]
        answered = [vote for vote in votes if vote.verdict != "error"]
        if not self.remembered.determinism_checked and len(answered) > 1:
            self.remembered.determinism_checked = True
            copies = len({(vote.verdict, vote.reason) for vote in answered}) == 1
            if copies and self.sampling[0] == 0:
                logger.warning(
                    "%d votes at temperature 0 came back identical (same verdict, same reason): "
                    "this endpoint looks deterministic there, so the votes are copies, not "
                    "independent samples; set a temperature above 0 (e.g. 0.7) for votes to "
                    "mean something",
                    len(answered),
                )
        return combine_votes(rubric, votes, self.votes)

    def _vote(self, ballot: Ballot, asked: Sequence[Asked]) -> Steps:
        """Every step of one vote: one judgment, or on a pairwise rubric one judgment per order
        (output first, then swapped; the second is skipped when the first errors, unless the
        transport only records requests (`records_only`: a batch file needs both)), combined.
        Each asking holds the blocks its request shows, for its citations."""
        rubric = ballot.rubric
        if rubric.scale != "pairwise":
            return (yield from self._judgment(ballot, *asked[0]))
        orders: list[GradeResult] = []
        for prompt, asking in asked:
            orders.append((yield from self._judgment(ballot, prompt, asking)))
            if orders[-1].verdict == "error" and not self.records_only:
                break
        return combine_orders(rubric, orders)

    def _checklist_vote(self, ballot: Ballot, asked: Sequence[Asked]) -> Steps:
        """Every step of one vote in checklist mode: each item asked on its own (each request
        cached by its own body), all at once, or with probability answers one after another
        and then decided by a matching judge profile; the verdict computed from the answers."""
        rubric = ballot.rubric
        judgments = tuple(self._judgment(ballot, prompt, asking) for prompt, asking in asked)
        if self.answers == "tool":
            return checklist_result(rubric, (yield Together(judgments)))
        answered = []  # one item after another: a server's prefix cache serves the next
        for judgment in judgments:
            answered.append((yield from judgment))
        result = checklist_result(rubric, answered)
        applied = self._profile(rubric)
        return decided_by(applied, rubric, result) if applied is not None else result

    def _one_call_vote(self, ballot: Ballot, asked: Sequence[Asked]) -> Steps:
        """Every step of one vote with the whole checklist asked in one call (cached by its
        body, which no per-item request shares); the verdict computed from the answers."""
        return one_call_result(ballot.rubric, (yield from self._judgment(ballot, *asked[0])))

    def _seed(self, trial: int, vote: int) -> int | None:
        """The seed of vote `vote` of trial `trial`: the judge's seed plus their offset (the
        first vote of the first trial sends the seed itself), so no two samples share one."""
        if self.seed is None:
            return None
        return self.seed + (trial - 1) * self.votes + (vote - 1)

    def _profile(self, rubric: Rubric) -> Applied | None:
        """This model's profile for `rubric` in the project, read once per rubric digest; one
        that does not match (another rubric digest or model) is said once and never applied."""
        profiles, model = self.remembered.profiles, self.endpoint.model
        if rubric.digest not in profiles:
            path = profile_path(find_project()[0], model, rubric)
            read = read_profile(path, model, rubric)
            if isinstance(read, str):
                logger.warning("judge profile not applied: %s", read)
            profiles[rubric.digest] = read if isinstance(read, Applied) else None
        return profiles[rubric.digest]

    def _judgment(self, ballot: Ballot, prompt: Prompt, asking: Asking) -> Steps:
        """Every step of one judgment (`judgment.Judgment`)."""
        sampling, trial, vote = self.sampling, ballot.trial, ballot.vote
        asked = as_protocol(asking, self.protocol)
        if ballot.exploring is not None and isinstance(asking, RubricAsking):
            run, budget, output = ballot.exploring  # through tools in every protocol
            trail = Trail(parts=list(run.first_parts(output)))
            asked = ExploringAsking(asking, run, budget, trail)
        judgment = Judgment(
            self.endpoint,
            self.cache,
            sampling,
            ballot.rubric,
            prompt.user,
            asked,
            trial,
            vote,
            self._seed(trial, vote),
        )
        return (yield from judgment.steps())

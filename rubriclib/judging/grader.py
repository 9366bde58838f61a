"""`Grader`: what the engine drives, a Judge or a Panel of them alike (as inspect_ai's Scorer
is one scorer or many). Nothing downstream needs to know which; nothing is cast."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from rubriclib.item import Item
from rubriclib.judging.endpoints.pacer import Pacing
from rubriclib.judging.result import GradeResult
from rubriclib.rubrics import Rubric
from rubriclib.settings import AnswerMode
from rubriclib.settings import Protocol as AskingProtocol


class Grader(Protocol):
    """Judges one Item at a time for the engine.

    Every request waits on the run's `Pacer` for its endpoint and key (`pacing.pacer`). A dead
    endpoint is signalled through it: once it stops the run, `pacer.acquire` raises
    `failures.EndpointUnusable` and `pacer.dead` says why, and `agrade_item` turns that into an
    error result (it never raises for a failed judgment)."""

    @property
    def model(self) -> str:
        """The judge's name as results record it (`details.judge.model`, what --resume matches)."""
        ...

    @property
    def endpoint(self) -> str:
        """Where its requests go, without credentials."""
        ...

    @property
    def checklist_answers(self) -> AnswerMode | None:
        """How its results' checklist items are answered (`details.checklist`), None when its
        results are not checklist results: a resumed run keeps only results judged the way it
        judges now."""
        ...

    @property
    def protocol(self) -> AskingProtocol:
        """How its verdicts are asked for (`tools`, `json` or `auto`): a resumed run keeps only
        results asked the way it asks now (`auto` keeps either)."""
        ...

    @property
    def pace_key(self) -> Hashable:
        """Which requests share one Pacer (one pace, one fail-fast) in a run: a Judge's
        endpoint and key (two keys at one endpoint have their own quotas, and one dead key
        must not stop the other); a Panel's names its members'. Never printed."""
        ...

    @property
    def votes(self) -> int:
        """Independent judgments cast per item (a Panel casts one combined judgment)."""
        ...

    async def agrade_item(
        self, rubric: Rubric, item: Item, *, trial: int = 1, pacing: Pacing | None = None
    ) -> GradeResult:
        """Judge one Item; every request waits on the run's pacer for its endpoint and key
        (`pacing`'s) when a run is given."""
        ...

    async def aclose(self) -> None:
        """Close the async connections of the running event loop (before that loop ends)."""
        ...

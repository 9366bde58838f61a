"""What a Judge and a Panel offer their callers on top of `agrade_item` (the mixin of both):
`grade` and `agrade` judge one output, `grade_many` and `agrade_many` many items through the
engine (`engine.agrade_many`)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from rubriclib.item import Item, as_item, missing_fields
from rubriclib.judging.engine import agrade_many
from rubriclib.judging.result import GradeResult, not_judged
from rubriclib.rubrics.registry import load_rubric
from rubriclib.rubrics.rubric import Rubric

if TYPE_CHECKING:
    from rubriclib.judging.grader import Grader

    class _SyncGrader(Grader, Protocol):
        def grade_item(self, rubric: Rubric, item: Item) -> GradeResult: ...


class ManyJudgments:
    """`grade`, `agrade`, `grade_many` and `agrade_many` for any Grader (a Judge, or a Panel of
    them); `grade` calls the grader's own `grade_item`, the sync twin of `agrade_item`."""

    def grade(
        self: _SyncGrader,
        rubric: Rubric | str,
        output: str | None = None,
        input: str | None = None,  # noqa: A002
        context: str | None = None,
        reference: str | None = None,
        *,
        baseline: str | None = None,
        transcript: Any = None,
    ) -> GradeResult:
        """Judge `output` against `rubric` (a Rubric or a reference such as "groundedness@^1");
        failures come back as verdict `error`. A pairwise rubric compares `output` with
        `baseline` (required there, ignored elsewhere): pass means the output won. An agent
        run is judged whole when given as `transcript` (a list of messages in OpenAI chat,
        Anthropic or Responses shape); without `output`, its last assistant text is the
        output."""
        rubric, item = prepare_item(rubric, output, input, context, reference, baseline, transcript)
        return self.grade_item(rubric, item)

    async def agrade(
        self: Grader,
        rubric: Rubric | str,
        output: str | None = None,
        input: str | None = None,  # noqa: A002
        context: str | None = None,
        reference: str | None = None,
        *,
        baseline: str | None = None,
        transcript: Any = None,
    ) -> GradeResult:
        """The async form of `grade`."""
        rubric, item = prepare_item(rubric, output, input, context, reference, baseline, transcript)
        return await self.agrade_item(rubric, item)

    def grade_many(
        self: Grader,
        rubric: Rubric | str,
        items: Iterable[Item | Mapping[str, Any]],
        *,
        concurrency: int = 8,
        requests_per_minute: float | None = None,
    ) -> list[GradeResult]:
        """Judge every item, `concurrency` at once (and at most `requests_per_minute` request
        starts a minute, if given): one result per item, in input order."""

        return asyncio.run(
            ManyJudgments.agrade_many(
                self,
                rubric,
                items,
                concurrency=concurrency,
                requests_per_minute=requests_per_minute,
            )
        )

    async def agrade_many(
        self: Grader,
        rubric: Rubric | str,
        items: Iterable[Item | Mapping[str, Any]],
        *,
        concurrency: int = 8,
        requests_per_minute: float | None = None,
    ) -> list[GradeResult]:
        """The async form of `grade_many` (its connections closed once every item is judged;
        judgments of the same grader still running keep them until they end)."""
        try:
            return await agrade_many(
                self,
                rubric,
                items,
                concurrency=concurrency,
                requests_per_minute=requests_per_minute,
            )
        finally:
            await self.aclose()


def prepare_item(
    rubric: Rubric | str,
    output: str | None,
    input: str | None,  # noqa: A002
    context: str | None,
    reference: str | None,
    baseline: str | None = None,
    transcript: Any = None,
) -> tuple[Rubric, Item]:
    """The rubric (resolved when given as a reference) and the fields as an Item; a RubricError
    for a bad reference, a TypeError for a field that is not text or a run that cannot be
    read."""
    fields = {
        "output": output,
        "input": input,
        "context": context,
        "reference": reference,
        "baseline": baseline,
        "transcript": transcript,
    }
    item = as_item({key: value for key, value in fields.items() if value is not None}, "grade")
    return (load_rubric(rubric) if isinstance(rubric, str) else rubric), item


def unjudgeable(rubric: Rubric, item: Item, model: str) -> GradeResult | None:
    """The error result of an item that lacks a field `rubric` requires (no request is sent
    for it), or None when it has them all."""
    if missing := missing_fields(rubric.requires, item):
        cause = f"no {' and no '.join(missing)} (the rubric {rubric.name} requires it)"
        return not_judged(rubric, model, cause)
    return None

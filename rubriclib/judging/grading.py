"""What a Judge and a Panel offer their callers on top of `agrade_item` (the mixin of both):
`grade` and `agrade` judge one output, `grade_many` and `agrade_many` many items through the
engine (`engine.agrade_many`)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from rubriclib.item import Item, as_item, missing_fields
from rubriclib.judging.engine import agrade_many
from rubriclib.judging.result import GradeResult, not_judged
from rubriclib.judging.steps import run_to_end
from rubriclib.rubrics import Rubric, load_rubric
from rubriclib.settings import AnswerMode

if TYPE_CHECKING:
    from rubriclib.judging.grader import Grader

    class _SyncGrader(Grader, Protocol):
        def grade_item(self, rubric: Rubric, item: Item) -> GradeResult: ...


class ManyJudgments:
    """`grade`, `agrade`, `grade_many` and `agrade_many` for any Grader (a Judge, or a Panel of
    them); `grade` calls the grader's own `grade_item`, the sync twin of `agrade_item`."""

    @property
    def checklist(self: Grader) -> AnswerMode | None:
        """Deprecated, read until 0.2.0: `checklist_answers`, under its old name."""
        warnings.warn(
            f"{type(self).__name__}.checklist is deprecated, use checklist_answers (checklist "
            "is read until rubriclib 0.2.0)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.checklist_answers

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
        """Judge `output` against `rubric`; failures come back as verdict `error`, never raised.

        Args:
            rubric: A Rubric, or a reference: a name, a pin ("groundedness@^1") or a path.
            output: The candidate output; may be left out when `transcript` is given (its last
                assistant text is the output).
            input: The task input (the user's request).
            context: The source context (retrieved documents, a tool's result).
            reference: A reference answer.
            baseline: The second output a pairwise rubric compares `output` with (required
                there, ignored elsewhere): pass means the output won.
            transcript: An agent run judged whole: a list of messages in OpenAI chat,
                Anthropic, Responses or LangChain shape (docs: Judging agent runs).

        Raises:
            RubricError: A bad reference.
            TypeError: An output (or another field) that is not text.
            rubriclib.item.TranscriptError: A run that cannot be read (a tool result answering
                no call, LangChain message objects rather than their `messages_to_dict`
                dicts), naming each message (`grade.transcript[1]: ...`).
        """
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
        """Judge every item: one result per item, in input order, whatever fails.

        Args:
            rubric: A Rubric, or a reference: a name, a pin or a path.
            items: `Item`s or dicts with their keys, in a list or any iterable (a generator is
                pulled as workers free up, never read ahead).
            concurrency: Judgments in flight at once.
            requests_per_minute: At most this many request starts a minute (None: no cap).

        Called from code already running an event loop (a notebook), the judging gets a loop
        of its own in a worker thread.

        Raises:
            rubriclib.item.ItemError: A bad item (a TypeError naming it, its run's messages
                too); the results of the items before it are on the error.
        """

        return run_to_end(
            lambda: ManyJudgments.agrade_many(
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
    for a bad reference, a TypeError for a field that is not text, a TranscriptError for a run
    that cannot be read."""
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

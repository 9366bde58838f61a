"""A rubric's checklist: independent yes/no questions about the candidate, each naming the
answer that fails it, checked item by item and across items (every problem at once), and how
the items' answers become a verdict. Pure: no judge, no I/O."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import ceil
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from rubriclib.errors import Problem
from rubriclib.validation import NAME_PATTERN

FieldName = Literal["input", "context", "reference", "baseline", "transcript"]
"""The fields of an item a rubric (or a checklist item) can require."""
Answer = Literal["yes", "no"]
CHECKLIST_SCALES = ("pass-fail", "1-5")
"""A pairwise rubric compares two outputs; a checklist item asks about one, so it takes none."""


def _yes_no_as_yaml_reads_them(value: Any) -> Any:
    if isinstance(value, bool):  # YAML 1.1 reads an unquoted yes / no as a boolean
        return "yes" if value else "no"
    return value


class ChecklistItem(BaseModel):
    """One yes/no question about the candidate; the answer `fail_if` means it is not satisfied."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=NAME_PATTERN)
    question: str
    fail_if: Annotated[Answer, BeforeValidator(_yes_no_as_yaml_reads_them)]
    requires: list[FieldName] = Field(default_factory=list)
    """The fields the question needs (each one the rubric's own `requires` lists)."""
    weight: float | None = Field(default=None, gt=0, strict=True, allow_inf_nan=False)
    """Its share of a 1-5 score (1 when left out); a pass-fail rubric takes none."""

    @field_validator("question")
    @classmethod
    def _question_is_asked(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty: it is what the judge is asked")
        return value.strip()

    @property
    def effective_weight(self) -> float:
        return 1.0 if self.weight is None else self.weight

    def judged(self) -> dict[str, Any]:
        """What of the item decides a verdict, for the rubric's digest: a weight left out and
        a weight of 1 are the same item."""
        return {
            "id": self.id,
            "question": self.question,
            "fail_if": self.fail_if,
            "requires": sorted(self.requires),
            "weight": self.effective_weight,
        }


def checklist_problems(
    items: Sequence[ChecklistItem] | None,
    scale: str | None,
    requires: Sequence[str],
    label: str,
    present: bool,
) -> list[Problem]:
    """What is wrong across the items of a checklist (each item's own fields are pydantic's):
    an empty list, a pairwise rubric, repeated ids, a weight on pass-fail, a required field the
    rubric does not require. `present`: the frontmatter has a `checklist` key. Items that
    failed their own validation may hold None fields; those are left to that problem."""
    if not present or items is None:
        return []
    if not items:
        return [Problem(label, "checklist", "must list at least one item (or be left out)")]
    if scale is not None and scale not in CHECKLIST_SCALES:
        return [
            Problem(
                label,
                "checklist",
                f"applies only to scales pass-fail and 1-5, not {scale}: an item asks about "
                "one output, a pairwise rubric compares two",
            )
        ]
    problems = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        where = f"checklist[{index}]"
        if item.id is not None and item.id in seen:
            problems.append(Problem(label, f"{where}.id", f"duplicate checklist id {item.id!r}"))
        seen.add(item.id)
        if scale == "pass-fail" and item.weight is not None:
            problems.append(
                Problem(
                    label,
                    f"{where}.weight",
                    "applies only to scale 1-5 (on pass-fail any failed item fails the output)",
                )
            )
        for name in item.requires or []:
            if name not in requires:
                problems.append(
                    Problem(
                        label,
                        f"{where}.requires",
                        f"{name} is not in the rubric's requires: a row may lack it; add it "
                        "there too",
                    )
                )
    return problems


@dataclass(frozen=True)
class ItemAnswer:
    """What the judge said to one item: `answer` is None when asking it errored."""

    answer: Answer | None
    reason: str


@dataclass(frozen=True)
class ChecklistVerdict:
    """The verdict computed from a checklist's answers: `raw_score` (1-5 rubrics) and `share`
    (the weighted share of satisfied items) are None on an error; `failed` lists the ids of
    the items answered with their `fail_if`, in checklist order."""

    verdict: Literal["pass", "fail", "error"]
    raw_score: int | None
    share: float | None
    failed: tuple[str, ...]
    reason: str


def score_of_share(share: Fraction) -> int:
    """The 1-5 level of a weighted share of satisfied items: 1 + 4 x share, to the nearest
    level; exactly half way between two levels goes to the lower one (as a tie of votes never
    rounds up). 0 -> 1, 1/8 -> 1 (1.5), 0.25 -> 2, 5/8 -> 3 (3.5), 0.7 -> 4 (3.8), 1 -> 5."""
    return 1 + ceil(4 * share - Fraction(1, 2))


def checklist_verdict(
    scale: str,
    pass_threshold: int | None,
    items: Sequence[ChecklistItem],
    answers: Mapping[str, ItemAnswer],
) -> ChecklistVerdict:
    """The verdict of a checklist from each item's answer, keyed by item id.

    Any item without an answer (never asked, or asking it errored), or an answer to an id the
    checklist does not have, makes the verdict `error`: never a pass. Pass-fail fails when any
    item answered its `fail_if`. 1-5: the weighted share of satisfied items (answer !=
    fail_if, weights as written, computed exactly) is mapped by `score_of_share`, and passes at
    `pass_threshold`. The reason names every failed item with its answer and the judge's reason.
    """
    ids = [item.id for item in items]
    unknown = sorted(set(answers) - set(ids))
    unanswered = [
        f"{item.id} ({answers[item.id].reason})" if item.id in answers else f"{item.id} (not asked)"
        for item in items
        if item.id not in answers or answers[item.id].answer is None
    ]
    if unknown or unanswered or not items:
        causes = []
        if unanswered:
            causes.append(f"no answer from {len(unanswered)} of {len(items)} checklist items: ")
            causes[-1] += "; ".join(unanswered)
        if unknown:
            causes.append(f"answers to items the checklist does not have: {', '.join(unknown)}")
        reason = "; ".join(causes) or "the checklist has no items"
        return ChecklistVerdict("error", None, None, (), reason)
    failed = [item for item in items if answers[item.id].answer == item.fail_if]
    total = sum((_exact(item.effective_weight) for item in items), Fraction(0))
    lost = sum((_exact(item.effective_weight) for item in failed), Fraction(0))
    share = 1 - lost / total
    named = "; ".join(
        f"{item.id} (answered {answers[item.id].answer}: {answers[item.id].reason})"
        for item in failed
    )
    failures = f"failed: {named}" if failed else "no item failed"
    if scale == "1-5" and pass_threshold is not None:
        score = score_of_share(share)
        verdict: Literal["pass", "fail"] = "pass" if score >= pass_threshold else "fail"
        reason = (
            f"score {score}: {float(share):.0%} of the checklist's weight satisfied "
            f"({len(items) - len(failed)} of {len(items)} items); {failures}"
        )
        return ChecklistVerdict(verdict, score, float(share), tuple(i.id for i in failed), reason)
    verdict = "fail" if failed else "pass"
    reason = (
        f"{len(failed)} of {len(items)} checklist items failed; {failures}"
        if failed
        else f"all {len(items)} checklist items satisfied"
    )
    return ChecklistVerdict(verdict, None, float(share), tuple(i.id for i in failed), reason)


def _exact(weight: float) -> Fraction:
    """A weight as written (0.1 is one tenth, not its nearest binary float), so shares that
    are exactly half way between two levels are found."""
    return Fraction(repr(weight))

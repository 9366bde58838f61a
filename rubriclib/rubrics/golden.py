"""Parse and validate goldens: worked examples with the verdict a rubric must give them, in a
rubric's frontmatter or a goldens file (`goldens_file` reads one), and the checks a golden
needs its rubric for."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, Protocol

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from rubriclib.errors import Problem
from rubriclib.item import Transcript, read_transcript, with_final_answer
from rubriclib.validation import NAME_PATTERN


def _kebab(text: str) -> bool:
    return re.fullmatch(NAME_PATTERN, text) is not None


def _not_blank(quote: str) -> str:
    if not quote.strip():
        raise ValueError("must not be empty: a quote a judgment must cite")
    return quote


Quote = Annotated[str, AfterValidator(_not_blank)]


class Golden(BaseModel):
    """A worked example with the verdict a rubric must give it. A pairwise golden gives the
    `baseline` too and `expected_winner`; its `expected` follows from it (pass only when the
    output wins) and may be left out. A labels rubric's golden says `expected: LABEL`, read
    into `expected_label`; its `expected` verdict follows from the rubric's labels."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    input: str | None = None
    context: str | None = None
    reference: str | None = None
    output: str
    """The candidate; a golden with a `transcript` may leave it out (its final answer is it)."""
    transcript: Transcript | None = None
    """An agent run, in any shape `read_transcript` reads."""
    baseline: str | None = None
    expected: Literal["pass", "fail"] | None
    """The verdict it must get; None only while a label's verdict is not yet known (a rubric's
    goldens, and a goldens file read for a rubric, always have it)."""
    expected_label: str | None = Field(default=None, pattern=NAME_PATTERN)
    """On a labels rubric, the label it must get (written `expected: LABEL`)."""
    expected_winner: Literal["output", "baseline", "tie"] | None = None
    expected_score: int | None = Field(default=None, ge=1, le=5, strict=True)
    tags: list[str] = Field(default_factory=list)
    why: str | None = None
    expected_output: dict[str, Any] | None = None
    """Output field values a judgment must also give (enum, integer and boolean fields of the
    rubric's `output`), checked beside the expected verdict."""
    cites: list[Quote] = Field(default_factory=list)
    """Quotes a judgment must cite (each matched by a verified citation, `cite_matches`) to
    meet the golden, beside the expected verdict."""

    @model_validator(mode="before")
    @classmethod
    def _expected_from_winner(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        if "expected" not in data and "expected_winner" in data:
            return {**data, "expected": "pass" if data["expected_winner"] == "output" else "fail"}
        expected = data.get("expected")
        if isinstance(expected, str) and expected not in ("pass", "fail") and _kebab(expected):
            return {**data, "expected": None, "expected_label": expected}
        if "expected" in data and expected is None:  # `expected:` left empty is missing
            return {key: value for key, value in data.items() if key != "expected"}
        return data

    @field_validator("transcript", mode="before")
    @classmethod
    def _read_run(cls, value: Any) -> Any:
        return None if value is None else read_transcript(value)

    _output_from_run = model_validator(mode="before")(with_final_answer)

    @model_validator(mode="after")
    def _winner_matches_expected(self) -> Golden:
        if self.expected_winner is not None:
            implied = "pass" if self.expected_winner == "output" else "fail"
            if self.expected != implied:
                raise ValueError(
                    f"expected: {self.expected} contradicts expected_winner: "
                    f"{self.expected_winner} (pass means the output wins; leave expected out)"
                )
        return self


def pairwise_golden_problems(
    scale: str, goldens: Sequence[Golden], label: str, field: str = "goldens"
) -> list[Problem]:
    """A problem for every golden whose shape does not fit the scale: a pairwise golden needs
    `expected_winner` (and a baseline, which `requires` checks); others take neither."""
    problems = []
    for index, golden in enumerate(goldens):
        where = f"{field}[{index}]"
        if scale == "pairwise" and golden.expected_winner is None:
            problems.append(
                Problem(
                    label,
                    f"{where}.expected_winner",
                    "is required for scale pairwise (output, baseline or tie)",
                )
            )
        if scale != "pairwise":
            for name in ("baseline", "expected_winner"):
                if getattr(golden, name) is not None:
                    problems.append(
                        Problem(label, f"{where}.{name}", "applies only to scale pairwise")
                    )
    return problems


def labelled_goldens(
    goldens: Sequence[Golden],
    labels: Mapping[str, str] | None,
    label: str,
    field: str = "goldens",
) -> tuple[list[Golden], list[Problem]]:
    """The goldens with the verdict each label means (`labels`: a labels rubric's), and a
    problem for every golden whose expected answer does not fit the rubric: a label on a rubric
    without labels, a verdict or an unknown label on one with them."""
    kept: list[Golden] = []
    problems = []
    for index, golden in enumerate(goldens):
        where, named = f"{field}[{index}].expected", golden.expected_label
        if labels is None and named is not None:
            problems.append(
                Problem(
                    label, where, f"{named!r} must be pass or fail (a label needs scale labels)"
                )
            )
        elif labels is not None and named not in labels:
            options = ", ".join(labels)
            given = "a verdict" if named is None else repr(named)
            problems.append(Problem(label, where, f"{given} is not a label: one of {options}"))
        elif labels is not None and named is not None:
            golden = golden.model_copy(update={"expected": labels[named]})
        kept.append(golden)
    return kept, problems


def required_field_problems(
    goldens: list[Golden], requires: Sequence[str], label: str, field: str = "goldens"
) -> list[Problem]:
    """A problem for every golden that lacks a field its rubric requires (a run gives the
    input: the request is in it)."""
    return [
        Problem(label, f"{field}[{index}].{name}", "is required by the rubric (requires)")
        for index, golden in enumerate(goldens)
        for name in requires
        if getattr(golden, name) is None and not (name == "input" and golden.transcript)
    ]


def cites_problems(
    goldens: Sequence[Golden], citations: str | None, label: str, field: str = "goldens"
) -> list[Problem]:
    """A problem for every golden that sets `cites` on a rubric whose citations are `off`: no
    judgment of it can cite, so the golden could never be met."""
    return [
        Problem(
            label,
            f"{field}[{index}].cites",
            "the rubric has citations: off, so no judgment can cite these quotes",
        )
        for index, golden in enumerate(goldens)
        if golden.cites and citations == "off"
    ]


SHOWN = (
    "name",
    "input",
    "context",
    "reference",
    "output",
    "baseline",
    "expected",
    "expected_label",
    "expected_score",
    "expected_winner",
    "expected_output",
    "why",
)
"""What a worked example shows the judge (in the digest too); its tags are for people."""


def shown_example(example: Golden) -> dict[str, Any]:
    """The fields of a worked example the judge is shown, those it has, in `SHOWN` order."""
    given = example.model_dump(include=set(SHOWN), exclude_none=True)
    return {key: given[key] for key in SHOWN if key in given}


class GoldenRules(Protocol):
    """What of a rubric its goldens and worked examples are checked against."""

    @property
    def scale(self) -> str | None: ...
    @property
    def pass_threshold(self) -> int | None: ...
    @property
    def labels(self) -> Mapping[str, str] | None: ...
    @property
    def requires(self) -> Sequence[str]: ...
    @property
    def citations(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def output(self) -> Mapping[str, Any] | None: ...


def checked_goldens(
    goldens: Sequence[Golden], rubric: GoldenRules, label: str, field: str = "goldens"
) -> tuple[list[Golden], list[Problem]]:
    """`goldens` (a rubric's goldens or worked examples, listed under `field`) with the verdict
    each label means, and every problem of theirs the rubric shows: a name used twice, a shape
    or score that does not fit the scale, a label that is not one, a required field missing,
    `cites` where nothing can cite."""
    problems = duplicate_name_problems(list(goldens), label, field)
    if rubric.scale is not None:  # else the scale's own problem
        problems += pairwise_golden_problems(rubric.scale, goldens, label, field)
        problems += _score_problems(goldens, rubric.scale, rubric.pass_threshold, label, field)
    checked = list(goldens)
    if rubric.scale != "labels" or rubric.labels is not None:  # else the labels' own problem
        checked, label_checks = labelled_goldens(goldens, rubric.labels, label, field)
        problems += label_checks
    problems += required_field_problems(checked, rubric.requires, label, field)
    problems += cites_problems(checked, rubric.citations, label, field)
    return checked, problems


def example_problems(examples: Sequence[Golden], label: str) -> list[Problem]:
    """What a worked example cannot hold that a golden can: an agent run (an example is shown
    as text) and `cites` (an example is shown, never judged)."""
    problems = []
    for index, example in enumerate(examples):
        if example.transcript is not None:
            why = "a worked example is shown as text: an agent run cannot be one"
            problems.append(Problem(label, f"examples[{index}].transcript", why))
        if example.cites:
            why = "applies to goldens: a worked example is shown to the judge, never judged"
            problems.append(Problem(label, f"examples[{index}].cites", why))
    return problems


def shown_goldens(name: str, examples: Sequence[Golden], goldens: Sequence[Golden]) -> list[str]:
    """A warning for every golden whose output a worked example of the rubric `name` shows:
    the judge was shown its verdict, so it measures nothing."""
    shown = {example.output: example.name for example in examples}
    return [
        f"{name}: golden {golden.name!r} has the output worked example {shown[golden.output]!r} "
        "shows the judge with its verdict, so it measures nothing"
        for golden in goldens
        if golden.output in shown
    ]


def _score_problems(
    goldens: Sequence[Golden], scale: str, threshold: int | None, label: str, field: str
) -> list[Problem]:
    """A problem for every `expected_score` off a 1-5 scale or at odds with its `expected`."""
    problems = []
    for index, golden in enumerate(goldens):
        if golden.expected_score is None:
            continue
        where = f"{field}[{index}].expected_score"
        if scale != "1-5":
            problems.append(Problem(label, where, "applies only to scale 1-5"))
        elif (
            threshold is not None
            and golden.expected is not None
            and ((golden.expected_score >= threshold) != (golden.expected == "pass"))
        ):
            why = (
                f"{golden.expected_score} contradicts expected: {golden.expected} at "
                f"pass_threshold {threshold}"
            )
            problems.append(Problem(label, where, why))
    return problems


def duplicate_name_problems(goldens: list[Golden], label: str, field: str) -> list[Problem]:
    """A problem for every golden (or worked example) whose name was already used."""
    kind = "example" if field == "examples" else "golden"
    seen: set[str] = set()
    problems = []
    for index, golden in enumerate(goldens):
        if golden.name in seen:
            problems.append(
                Problem(label, f"{field}[{index}].name", f"duplicate {kind} name {golden.name!r}")
            )
        seen.add(golden.name)
    return problems

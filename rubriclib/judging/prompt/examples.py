"""A rubric's worked examples as the part of a prompt that shows them: before the candidate,
each value fenced as data, and in no block a citation can name. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubriclib.judging.prompt.blocks import Spans, fence

if TYPE_CHECKING:
    from rubriclib.rubrics import Golden, Rubric

HEADING = "## Worked examples: how this rubric was applied"
_SHOWN = (
    ("input", "Task input"),
    ("context", "Source context"),
    ("reference", "Reference answer"),
    ("output", "Output"),
    ("baseline", "Baseline"),
)
_WINNERS = {"output": "the output", "baseline": "the baseline", "tie": "a tie"}


def example_parts(rubric: Rubric) -> list[tuple[str, Spans]]:
    """The part showing `rubric`'s worked examples (none when it has none). It has no block:
    a citation may quote only what is judged."""
    if not rubric.examples:
        return []
    lead = (
        f"{HEADING}\n\nEarlier outputs and the verdict this rubric gave each, with why. They "
        "show how the rubric is applied; they are not the candidate. Judge the candidate below "
        "on its own, and cite only the blocks below."
    )
    shown = [_example(index, example, rubric) for index, example in enumerate(rubric.examples)]
    return [("\n\n".join([lead, *shown]), {})]


def _example(index: int, example: Golden, rubric: Rubric) -> str:
    """One example: its values, fenced, then its verdict and why."""
    lines = [f"### Example {index + 1}: {example.name}"]
    for key, title in _SHOWN:
        value = getattr(example, key)
        if value is not None:
            lines.append(f"{title}:\n{fence(value)}")
    lines.append(f"Verdict: {_verdict(example, rubric)}")
    if example.expected_output:
        given = example.expected_output.items()
        fields = ", ".join(f"{name}: {_value(value)}" for name, value in given)
        lines.append(f"Output fields: {fields}")
    if example.why:
        lines.append(f"Why: {example.why}")
    return "\n\n".join(lines)


def _verdict(example: Golden, rubric: Rubric) -> str:
    """The verdict as the rubric's scale gives it: a label, a score, a winner, pass or fail."""
    if rubric.scale == "labels" and example.expected_label is not None:
        return f"{example.expected_label} ({example.expected})"
    if rubric.scale == "pairwise" and example.expected_winner is not None:
        return f"{_WINNERS[example.expected_winner]} wins"
    if example.expected_score is not None:
        return f"score {example.expected_score} of 5 ({example.expected})"
    return str(example.expected)


def _value(value: Any) -> str:
    return "true" if value is True else "false" if value is False else str(value)

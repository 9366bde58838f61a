"""What a dataset row asks of a grader: the rubric (the grader's, or a letta row's own) and the
item of each judgment (one, or one per turn of a per-turn letta row), and the row problems that
keep a letta prompt from being filled, found before any request."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rubriclib.errors import Problem
from rubriclib.evals.datasets import Row
from rubriclib.evals.formats import Grader
from rubriclib.evals.letta_rows import template_error, template_problems
from rubriclib.item import Item
from rubriclib.rubrics.registry import rubric_from_prompt
from rubriclib.rubrics.rubric import Rubric


@dataclass(frozen=True)
class Judgment:
    """One judgment a row makes: what is judged and by which rubric."""

    rubric: Rubric
    item: Item


def judgments(row: Row, grader: Grader) -> list[Judgment]:
    """The row's judgments by `grader`: one per turn of a per-turn letta row (letta grades
    each turn against its own ground truth), else one."""
    rubric = row_rubric(row, grader)
    if row.sample is None or not row.sample.per_turn:
        return [Judgment(rubric, row.item)]
    metadata = row.item.metadata
    return [Judgment(rubric, turn.item(row.id, metadata)) for turn in row.sample.turns()]


def row_rubric(row: Row, grader: Grader) -> Rubric:
    """The grader's rubric, or for a letta prompt grader the row's own `rubric` /
    `rubric_path` when it has one (identity: its source, the digest of its text)."""
    sample = row.sample
    if grader.rubric.template != "letta" or sample is None or sample.rubric is None:
        return grader.rubric
    source = sample.rubric_source or f"prompt:{row.where}"
    path = Path(source[len("file:") :]) if source.startswith("file:") else grader.rubric.path
    return rubric_from_prompt(
        sample.rubric,
        grader.name,
        source,
        path,
        template="letta",
        system_prompt=grader.rubric.system_prompt,
    )


def letta_row_checker(graders: list[Grader]) -> Callable[[Row], list[Problem]] | None:
    """What keeps each row's letta prompts from being filled, as letta's `build_judge_prompt`
    would raise it (one problem per row and variable); None when no grader is a letta prompt."""
    templates = [grader for grader in graders if grader.rubric.template == "letta"]
    if not templates:
        return None
    reported: set[str] = set()  # a grader's own prompt is reported once, by the first row using it

    def problems(row: Row) -> list[Problem]:
        sample = row.sample
        if sample is None:
            return []
        found: list[Problem] = []
        if sample.rubric is not None and (why := template_error(sample.rubric)) is not None:
            field = (
                "rubric" if (sample.rubric_source or "").startswith("prompt:") else "rubric_path"
            )
            return [Problem(row.where, field, why)]
        for grader in templates:
            template = sample.rubric if sample.rubric is not None else grader.rubric.body
            if sample.rubric is None and (why := template_error(template)) is not None:
                if grader.name not in reported:
                    reported.add(grader.name)
                    found.append(Problem(_prompt_source(grader), f"graders.{grader.name}", why))
                continue
            for problem in template_problems(template, sample, grader.name, row.where):
                if problem not in found:
                    found.append(problem)
        return found

    return problems


def _prompt_source(grader: Grader) -> str:
    """Where a grader's prompt was written: its prompt file, or `SUITE#graders.NAME`."""
    return grader.rubric.source.removeprefix("prompt:")

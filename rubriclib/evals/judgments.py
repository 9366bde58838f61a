"""What a dataset row asks of a grader: the rubric (the grader's, or a letta row's own) and the
item of each judgment (one, or one per turn of a per-turn letta row; on a letta row that records
messages, what the grader's extractor takes from them, or the whole run for a rubric that
requires it), how their results make the row's one result, and the row problems that keep a
letta prompt from being filled or an extractor from running, found before any request."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rubriclib.errors import Problem
from rubriclib.evals.datasets import Row
from rubriclib.evals.formats import GraderEntry
from rubriclib.evals.letta.extractors import Extractor, ExtractorError
from rubriclib.evals.letta.prompts import template_error, template_problems
from rubriclib.evals.letta.rows import LettaSample
from rubriclib.evals.letta.scoring import combine_turns
from rubriclib.item import Item
from rubriclib.judging import GradeResult
from rubriclib.rubrics import Rubric, rubric_from_prompt


@dataclass(frozen=True)
class Judgment:
    """One judgment a row makes: what is judged and by which rubric."""

    rubric: Rubric
    item: Item


@dataclass(frozen=True)
class Judgments:
    """What a row asks of one grader: its judgments, and how their results make one result."""

    rubric: Rubric
    parts: tuple[Judgment, ...]

    def combine(self, results: list[GradeResult]) -> GradeResult:
        """The row's result from its judgments' (in order): the one judgment's, or the turns
        of a row letta grades turn by turn, scored as letta-evals scores them."""
        return results[0] if len(results) == 1 else combine_turns(self.rubric, results)


def row_judgments(row: Row, grader: GraderEntry) -> list[Judgment]:
    """The row's judgments by `grader` (see `asked`)."""
    return list(asked(row, grader).parts)


def asked(row: Row, grader: GraderEntry) -> Judgments:
    """The row's judgments by `grader`: one per turn of a per-turn letta row (letta grades
    each turn against its own ground truth), else one. On a letta row that records messages,
    each is of what the grader's extractor takes from them (none when it takes nothing:
    `not_extracted` says why), or one of the whole run when the rubric requires a transcript."""
    rubric = row_rubric(row, grader)
    sample = row.sample
    if sample is None or (sample.run is not None and judges_run(rubric)):
        return Judgments(rubric, (Judgment(rubric, row.item),))
    if sample.run is not None:
        extracted = _extracted(sample, grader)
        if isinstance(extracted, str):
            return Judgments(rubric, ())
        sample = extracted
    metadata = row.item.metadata
    parts = tuple(Judgment(rubric, turn.item(row.id, metadata)) for turn in sample.turns())
    return Judgments(rubric, parts)


def judges_run(rubric: Rubric) -> bool:
    """Whether `rubric` judges a whole agent run (it requires a transcript): on a letta row
    it is given the recorded messages, not what an extractor takes from them."""
    return "transcript" in rubric.requires


def not_extracted(row: Row, grader: GraderEntry) -> str | None:
    """Why `grader` has nothing to judge on a letta row that records messages: letta-evals
    would score it 0 without asking its grader (no message in a turn, an extractor that finds
    nothing); None otherwise."""
    sample = row.sample
    if sample is None or sample.run is None or judges_run(row_rubric(row, grader)):
        return None
    extracted = _extracted(sample, grader)
    return extracted if isinstance(extracted, str) else None


def _extracted(sample: LettaSample, grader: GraderEntry) -> LettaSample | str:
    return sample.extracted(grader.extractor or Extractor())


def row_rubric(row: Row, grader: GraderEntry) -> Rubric:
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


def letta_row_checker(graders: list[GraderEntry]) -> Callable[[Row], list[Problem]] | None:
    """What keeps each letta row's prompts from being filled, as letta's `build_judge_prompt`
    would raise it (one problem per row and variable), and each grader's extractor from running
    on the messages a row records (`extractor_problems`); None when no grader is a letta
    prompt or has an extractor."""
    templates = [grader for grader in graders if grader.rubric.template == "letta"]
    extracting = [grader for grader in graders if grader.extractor is not None]
    if not templates and not extracting:
        return None
    reported: set[str] = set()  # a grader's own prompt is reported once, by the first row using it

    def problems(row: Row) -> list[Problem]:
        sample = row.sample
        if sample is None:
            return []
        if sample.run is not None and (found := extractor_problems(row, extracting)):
            return found
        found = []
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


def extractor_problems(row: Row, graders: list[GraderEntry]) -> list[Problem]:
    """What keeps each grader's extractor from running on the messages `row` records: one that
    needs the live agent or is Python letta loads, or one that raises as letta's would."""
    problems = []
    for grader in graders:
        sample = row.sample
        extractor = grader.extractor
        if sample is None or extractor is None or judges_run(row_rubric(row, grader)):
            continue
        if (why := extractor.why_not_run()) is not None:
            message = f"grader {grader.name}: {why}; record what it would take as the submission"
            problems.append(Problem(row.where, "messages", message))
            continue
        try:
            sample.extracted(extractor)
        except ExtractorError as error:
            problems.append(Problem(row.where, "messages", f"grader {grader.name}: {error}"))
    return problems


def _prompt_source(grader: GraderEntry) -> str:
    """Where a grader's prompt was written: its prompt file, or `SUITE#graders.NAME`."""
    return grader.rubric.source.removeprefix("prompt:")

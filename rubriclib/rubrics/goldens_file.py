"""A goldens YAML file read, and its goldens checked for the rubrics they are added to exactly as
a rubric's own goldens are (`checked_goldens`), each problem named by index and line."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from rubriclib.errors import Problem, RubricError
from rubriclib.rubrics.golden import Golden, GoldenRules, checked_goldens, duplicate_name_problems
from rubriclib.rubrics.output_fields import expected_output_problems
from rubriclib.rubrics.reading import load_yaml, read_text
from rubriclib.validation import LineFinder, problems_from_validation, valid_parts


def parse_goldens_file(path: Path, label: str) -> list[Golden]:
    """Read a goldens YAML file: a list of goldens, or a mapping with a `goldens` list."""
    return GoldensFile.read(path, label).goldens


@dataclass(frozen=True)
class GoldensFile:
    """A goldens YAML file read (`read`): its goldens, and the text that places each field on
    its line, so the checks against a rubric (`checked_for`) name lines too."""

    label: str
    goldens: list[Golden]
    text: str
    root: str
    """The field the document stands for: "" for a mapping with a `goldens` list, else
    "goldens" (the list itself)."""

    @classmethod
    def read(cls, path: Path, label: str) -> GoldensFile:
        """The file's goldens, each valid on its own with a name used once, or a RubricError
        naming every problem by line."""
        text = read_text(path, label)
        data = raw = load_yaml(text, label, "goldens")
        if isinstance(data, dict) and set(data) == {"goldens"}:
            data = data["goldens"]
        if not isinstance(data, list):
            raise RubricError.single(label, "goldens", "must be a list of goldens")
        goldens: list[Golden] = []
        problems: list[Problem] = []
        for index, item in enumerate(data):
            try:
                goldens.append(Golden.model_validate(item))
            except ValidationError as error:
                problems.extend(problems_from_validation(error, label, Golden, f"goldens[{index}]"))
                goldens.append(valid_parts(Golden, item))  # its name still counts for duplicates
        found = {problem.field for problem in problems}
        duplicates = duplicate_name_problems(goldens, label, "goldens")
        problems.extend(problem for problem in duplicates if problem.field not in found)
        read = cls(label, goldens, text, "" if isinstance(raw, dict) else "goldens")
        if problems:
            raise RubricError(read.located(problems))
        return read

    def checked_for(
        self,
        rubric: GoldenRules,
        taken: Collection[str] = (),
        pairwise: bool | None = None,
    ) -> tuple[list[Golden], list[Problem]]:
        """The goldens of the file checked for `rubric` exactly as its own goldens are
        (`checked_goldens`, then their `expected_output`), each with the verdict its label
        means; and every problem, named by its index and line in this file. `taken`: the names
        the rubric's own goldens already use; `pairwise`: only the goldens with (True) or
        without (False) an expected_winner, every one when None."""
        positions = [
            at
            for at, golden in enumerate(self.goldens)
            if pairwise is None or (golden.expected_winner is not None) == pairwise
        ]
        chosen = [self.goldens[at] for at in positions]
        checked, problems = checked_goldens(chosen, rubric, self.label)
        expected = [golden.expected_output for golden in checked]
        problems += expected_output_problems(expected, rubric.output, self.label)
        problems += [
            Problem(
                self.label,
                f"goldens[{index}].name",
                f"duplicate golden name {golden.name!r} (the rubric's own goldens have it)",
            )
            for index, golden in enumerate(chosen)
            if golden.name in taken
        ]
        return checked, self.located([_renumbered(problem, positions) for problem in problems])

    def added_to(
        self, rubrics: Sequence[tuple[GoldenRules, Collection[str]]]
    ) -> tuple[list[list[Golden]], list[Problem]]:
        """The goldens each rubric of a run takes (those with expected_winner go to pairwise
        rubrics, the others to the rest), checked for it (`checked_for`; each rubric given with
        the names its own goldens use), and every problem: one found for a rubric of several
        names it, and a file whose goldens fit no rubric is one."""
        added, problems = [], []
        for rubric, taken in rubrics:
            pairwise = rubric.scale == "pairwise"
            fitting, found = self.checked_for(rubric, taken, pairwise)
            added.append(fitting)
            named = len(rubrics) > 1
            problems += [
                Problem(p.source, p.field, f"{p.message} (rubric {rubric.name})") if named else p
                for p in found
            ]
        if self.goldens and not any(added):
            why = (
                "fit no rubric in the run (goldens with expected_winner go to pairwise rubrics, "
                "the others to pass-fail, 1-5 and labels rubrics)"
            )
            problems.append(Problem(self.label, "goldens", why))
        return added, problems

    def located(self, problems: list[Problem]) -> list[Problem]:
        """`problems` in file order, each of this file's at its line."""
        if not problems:
            return []
        return LineFinder(self.text, self.label, root=self.root).in_file_order(problems)


_GOLDEN_INDEX = re.compile(r"goldens\[(\d+)\]")


def _renumbered(problem: Problem, positions: Sequence[int]) -> Problem:
    """A problem found among some of a file's goldens (the `positions`-th ones), renamed by the
    index its golden has in the file (`goldens[0]` of the second and fifth is `goldens[4]`)."""
    found = _GOLDEN_INDEX.match(problem.field)
    if found is None:
        return problem
    field = f"goldens[{positions[int(found[1])]}]{problem.field[found.end() :]}"
    return Problem(problem.source, field, problem.message)

"""The exceptions rubriclib raises for bad input and bad configuration."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a rubric file or reference: where, which field, what."""

    source: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.field}: {self.message}"


class RubricError(ValueError):
    """A bad rubric file, goldens file or rubric reference; carries every problem found."""

    def __init__(self, problems: list[Problem]) -> None:
        if not problems:
            raise ValueError("RubricError needs at least one problem")
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems))

    @classmethod
    def single(cls, source: str, field: str, message: str) -> RubricError:
        """A RubricError with one problem."""
        return cls([Problem(source, field, message)])

    def one_line(self) -> str:
        """Every problem on one line, for a CLI error message."""
        return " ".join("; ".join(str(problem) for problem in self.problems).split())


class JudgeConfigError(ValueError):
    """A Judge that cannot be built as configured, e.g. no API key for the default endpoint."""

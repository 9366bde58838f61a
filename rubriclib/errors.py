"""The exceptions rubriclib raises for bad input and bad configuration."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file or reference: where, which field, what."""

    source: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.field}: {self.message}"


class InputError(ValueError):
    """Bad input a user wrote; carries every problem found, each naming file, field and what."""

    def __init__(self, problems: list[Problem]) -> None:
        if not problems:
            raise ValueError(f"{type(self).__name__} needs at least one problem")
        self.problems = problems
        super().__init__("\n".join(str(problem) for problem in problems))

    @classmethod
    def single(cls, source: str, field: str, message: str) -> InputError:
        """An error with one problem."""
        return cls([Problem(source, field, message)])


class RubricError(InputError):
    """A bad rubric file, goldens file or rubric reference."""

    @classmethod
    def single(cls, source: str, field: str, message: str) -> RubricError:
        return cls([Problem(source, field, message)])


class EvalError(InputError):
    """A bad eval file, dataset or dataset row."""

    @classmethod
    def single(cls, source: str, field: str, message: str) -> EvalError:
        return cls([Problem(source, field, message)])


class JudgeConfigError(ValueError):
    """A Judge that cannot be built as configured, e.g. no API key for the default endpoint."""


class BatchRefused(ValueError):
    """An eval a batch cannot carry (a target model, a judge panel): one reason a line."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = reasons
        super().__init__("\n".join(reasons))

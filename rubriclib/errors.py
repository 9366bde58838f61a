"""The exceptions rubriclib raises for bad input and bad configuration, and `printable`: text
from a user or a judge made safe to show in a message or on a terminal."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

# Unicode categories `printable` shows as escapes: controls (ANSI escape sequences start with
# one, C1 controls included), format characters (bidi overrides, zero-width and tag characters
# that reorder or hide text), lone surrogates (no terminal encoding can carry them) and the
# line and paragraph separators.
_UNPRINTABLE = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})

_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file or reference: where, which field ("" when it is the
    input as a whole, such as a labels file too small to measure with), what."""

    source: str
    field: str
    message: str

    def __str__(self) -> str:
        if not self.field:
            return f"{self.source}: {self.message}"
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


def escaped_character(char: str) -> str:
    """One character as a visible Python-style escape: \\n, \\x1b, \\u202e, \\U000e0041."""
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def printable(text: str, limit: int | None = None) -> str:
    """Text safe to print on a terminal: controls, format characters, surrogates and line
    separators shown as escapes (\\x1b, \\n, \\u202e); longer than `limit` cut with "..."."""
    if text.isprintable() and (limit is None or len(text) <= limit):
        return text
    pieces: list[str] = []
    length = 0
    for char in text:
        piece = escaped_character(char) if unicodedata.category(char) in _UNPRINTABLE else char
        if limit is not None and length + len(piece) > limit:
            return "".join(pieces) + "..."
        pieces.append(piece)
        length += len(piece)
    return "".join(pieces)

"""The blocks of a judge's prompt: values fenced as data, where each block's text sits in a
piece of the prompt, and how its size in tokens is estimated. Pure."""

from __future__ import annotations

import re

Spans = dict[str, tuple[int, int]]
"""Where the text of each block sits in a piece of a prompt: start and end, by block id."""

CHARACTERS_PER_TOKEN = 4
"""How prompt sizes are estimated (and an agent run's share of the limit turned into text)."""
_BACKTICK_RUN = re.compile(r"`+")


def fence(value: str) -> str:
    """`value` inside a backtick fence longer than any backtick run it contains."""
    runs = _BACKTICK_RUN.findall(value) if "`" in value else ()
    longest = max(map(len, runs), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}\n{value}\n{ticks}"


def fenced(key: str, text: str, value: str) -> tuple[str, Spans]:
    """A section ending in `value`, fenced, and where `value` sits in it."""
    end = text.rindex("\n")  # the closing fence is the last line
    return text, {key: (end - len(value), end)}

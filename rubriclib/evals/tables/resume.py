"""Resuming a table: the rows whose `result_key` has no verdict among the results already
written (an error is judged again, as `eval --resume` judges it again), one rule for every
kind of table."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, TypeVar

from rubriclib.errors import JudgeConfigError
from rubriclib.evals.tables.columns import read_batch, rows_where

Batch = TypeVar("Batch")

DONE = ("pass", "fail")
"""The verdicts a resumed table keeps: a row whose result was an error is judged again."""


def judged_keys(prefix: str, results: Any) -> set[str]:
    """The `result_key`s among `results` (a table a TableJudge with `prefix` wrote, of any
    kind) that have a verdict."""
    table = read_batch(results)
    key, verdict = f"{prefix}result_key", f"{prefix}verdict"
    if missing := [name for name in (key, verdict) if name not in table.names]:
        raise JudgeConfigError(
            f"TableJudge: the results have no column {missing[0]!r}: not the results of a "
            f"TableJudge with prefix={prefix!r}"
        )
    pairs = zip(table.values(key), table.values(verdict), strict=True)
    return {name for name, said in pairs if said in DONE}


def unjudged(
    table: Batch, result_keys: Callable[[Batch], list[str]], judged: Collection[str]
) -> Batch:
    """The rows of `table` (the same kind) whose `result_key` (`result_keys` gives each row's)
    is not among `judged`."""
    return rows_where(table, [key not in judged for key in result_keys(table)])

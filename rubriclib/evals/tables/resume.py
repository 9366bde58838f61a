"""Resuming a table: the rows whose `result_key` has no verdict among the results already
written (an error is judged again, as `eval --resume` judges it again), one rule for every
kind of table: a pandas DataFrame, a pyarrow Table, a dict of columns, and a Ray Dataset, whose
results are read a batch at a time and whose rows are kept by a `map_batches` of this rule."""

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
    kind, a Ray Dataset read a batch at a time) that have a verdict."""
    names = [f"{prefix}result_key", f"{prefix}verdict"]
    if not is_ray_dataset(results):
        return _keys_with_verdict(names, results)
    _refuse_missing(names, results.schema().names, prefix)
    keys: set[str] = set()
    for batch in results.select_columns(names).iter_batches(batch_format="pyarrow"):
        keys |= _keys_with_verdict(names, batch)
    return keys


def unjudged(
    table: Batch, result_keys: Callable[[Any], list[str]], judged: Collection[str]
) -> Batch:
    """The rows of `table` (the same kind; a Ray Dataset's lazily, batch by batch) whose
    `result_key` (`result_keys` gives each row's) is not among `judged`."""
    if is_ray_dataset(table):
        return table.map_batches(  # type: ignore[attr-defined, no-any-return]
            unjudged, fn_args=(result_keys, judged), batch_format="pyarrow"
        )
    return rows_where(table, [key not in judged for key in result_keys(table)])


def is_ray_dataset(value: Any) -> bool:
    """Whether `value` is a Ray Dataset (checked without importing ray)."""
    return any(
        kind.__name__ == "Dataset" and kind.__module__.startswith("ray.data")
        for kind in type(value).__mro__
    )


def _keys_with_verdict(names: list[str], results: Any) -> set[str]:
    table = read_batch(results)
    key, verdict = names
    _refuse_missing(names, table.names, key.removesuffix("result_key"))
    pairs = zip(table.values(key), table.values(verdict), strict=True)
    return {name for name, said in pairs if said in DONE}


def _refuse_missing(names: list[str], found: Collection[str], prefix: str) -> None:
    if missing := [name for name in names if name not in found]:
        raise JudgeConfigError(
            f"TableJudge: the results have no column {missing[0]!r}: not the results of a "
            f"TableJudge with prefix={prefix!r}"
        )

"""Resuming a table: the rows whose `result_key` has no verdict among the results already
written (an error is judged again, as `eval --resume` judges it again), one rule for every
kind of table: a pandas DataFrame, a pyarrow Table, a dict of columns, a Ray Dataset, whose
results are read a batch at a time and whose rows are kept by a `map_batches` of this rule, and
a Spark DataFrame, whose rows are kept by a `left_anti` join on `result_key` with the keys its
results hold (never collected on the driver). pyspark is imported only for a Spark table."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from functools import partial
from typing import Any, TypeVar

from rubriclib.errors import JudgeConfigError
from rubriclib.evals.tables.columns import read_batch, rows_where

Batch = TypeVar("Batch")

DONE = ("pass", "fail")
"""The verdicts a resumed table keeps: a row whose result was an error is judged again."""

KEY_COLUMN = "_rubriclib_result_key"
"""The column a Spark table's rows carry their `result_key` in while it is joined."""


def judged_keys(prefix: str, results: Any) -> Any:
    """The `result_key`s among `results` (a table a TableJudge with `prefix` wrote, of any
    kind, a Ray Dataset read a batch at a time) that have a verdict: a set, or for Spark's
    results a Spark DataFrame of them in KEY_COLUMN (lazily)."""
    names = [f"{prefix}result_key", f"{prefix}verdict"]
    if is_spark_dataframe(results):
        _refuse_missing(names, results.columns, prefix)
        key, verdict = (results[name] for name in names)
        return results.where(verdict.isin(*DONE)).select(key.alias(KEY_COLUMN))
    if not is_ray_dataset(results):
        return _keys_with_verdict(names, results)
    _refuse_missing(names, results.schema().names, prefix)
    keys: set[str] = set()
    for batch in results.select_columns(names).iter_batches(batch_format="pyarrow"):
        keys |= _keys_with_verdict(names, batch)
    return keys


def unjudged(table: Batch, result_keys: Callable[[Any], list[str]], judged: Any) -> Batch:
    """The rows of `table` (the same kind; a Ray Dataset's lazily, batch by batch; a Spark
    DataFrame's lazily, by a `left_anti` join) whose `result_key` (`result_keys` gives each
    row's) is not among `judged` (a collection of keys, or a Spark DataFrame of them in
    KEY_COLUMN, as `judged_keys` gives)."""
    if is_spark_dataframe(table):
        return _spark_unjudged(table, result_keys, judged)  # type: ignore[no-any-return]
    if is_spark_dataframe(judged):
        judged = {row[0] for row in judged.toLocalIterator()}
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


def is_spark_dataframe(value: Any) -> bool:
    """Whether `value` is a Spark DataFrame, classic or Connect's (checked without importing
    pyspark)."""
    return any(
        kind.__name__ == "DataFrame" and kind.__module__.startswith("pyspark.sql")
        for kind in type(value).__mro__
    )


def _spark_unjudged(table: Any, result_keys: Callable[[Any], list[str]], judged: Any) -> Any:
    """A Spark DataFrame's rows whose key is not among `judged`: each row's key added by a
    `mapInPandas`, then a `left_anti` join with the judged keys, then the key dropped."""
    from pyspark.sql.types import StringType, StructField, StructType

    if KEY_COLUMN in table.columns:
        raise JudgeConfigError(f"TableJudge: the table already has the column {KEY_COLUMN!r}")
    key_type = StructField(KEY_COLUMN, StringType(), False)
    if not is_spark_dataframe(judged):
        rows = [(key,) for key in judged]
        judged = table.sparkSession.createDataFrame(rows, StructType([key_type]))
    keyed = table.mapInPandas(
        partial(_with_keys, result_keys), schema=StructType([*table.schema.fields, key_type])
    )
    return keyed.join(judged, on=KEY_COLUMN, how="left_anti").drop(KEY_COLUMN)


def _with_keys(result_keys: Callable[[Any], list[str]], batches: Iterable[Any]) -> Iterator[Any]:
    """Each pandas DataFrame of `batches` with its rows' keys in KEY_COLUMN."""
    for batch in batches:
        yield batch.assign(**{KEY_COLUMN: result_keys(batch)})


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

"""A batch of rows as columns, whatever holds it (a pandas DataFrame, a pyarrow Table or a dict
of equal-length columns), and the same kind given back with columns added. pandas and pyarrow
are imported only for a batch that is already one of theirs."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

Kind = Literal["pandas", "pyarrow", "dict"]
Batch = TypeVar("Batch")

RESULT_COLUMNS: dict[str, Literal["string", "double"]] = {
    "verdict": "string",
    "score": "double",
    "label": "string",
    "reason": "string",
    "error": "string",
    "rubric": "string",
    "rubric_version": "string",
    "rubric_digest": "string",
    "result_key": "string",
    "result": "string",
}
"""The columns a judged batch gains (each behind the judge's prefix), with their type."""


@dataclass(frozen=True)
class Columns:
    """A batch read as plain Python columns (missing values as None)."""

    kind: Kind
    names: tuple[str, ...]
    length: int
    _batch: Any

    def values(self, name: str) -> list[Any]:
        """Column `name` as plain Python values: numpy scalars and arrays as Python numbers and
        lists, NaN and pandas' missing markers as None."""
        if self.kind == "pandas":
            return [plain(value) for value in self._batch[name].tolist()]
        if self.kind == "pyarrow":
            return [plain(value) for value in self._batch.column(name).to_pylist()]
        return [plain(value) for value in self._batch[name]]


def kind_of(batch: Any) -> Kind:
    """Which kind of table `batch` is; a TypeError for anything else."""
    library = type(batch).__module__.split(".")[0]
    if library == "pandas" and type(batch).__name__ == "DataFrame":
        return "pandas"
    if library == "pyarrow" and type(batch).__name__ == "Table":
        return "pyarrow"
    if isinstance(batch, Mapping):
        return "dict"
    raise TypeError(
        "a batch must be a pandas DataFrame, a pyarrow Table or a dict of columns, "
        f"not {type(batch).__name__}"
    )


def read_batch(batch: Any) -> Columns:
    """`batch` as Columns; a dict's columns must be sequences of one length (a TypeError
    naming the first that is not)."""
    kind = kind_of(batch)
    if kind == "pandas":
        return Columns(kind, tuple(str(name) for name in batch.columns), len(batch), batch)
    if kind == "pyarrow":
        return Columns(kind, tuple(batch.column_names), batch.num_rows, batch)
    lengths = set()
    for name, column in batch.items():
        if isinstance(column, str | bytes) or not isinstance(column, Sequence):
            raise TypeError(
                f"column {name!r}: must be a list of values, not {type(column).__name__}"
            )
        lengths.add(len(column))
    if len(lengths) > 1:
        raise TypeError(f"the columns must have one length, not {sorted(lengths)}")
    return Columns(kind, tuple(batch), lengths.pop() if lengths else 0, batch)


def with_columns(batch: Batch, added: Mapping[str, list[Any]], types: Mapping[str, str]) -> Batch:
    """A new batch of `batch`'s kind: its columns, then `added` (each column's type in
    `types`: `string` or `double`). `batch` itself is left as it was."""
    kind = kind_of(batch)
    if kind == "pandas":
        import pandas

        kinds = _pandas_types()
        typed = {
            name: pandas.Series(values, index=batch.index, dtype=kinds[types[name]])  # type: ignore[attr-defined]
            for name, values in added.items()
        }
        return batch.assign(**typed)  # type: ignore[attr-defined, no-any-return]
    if kind == "pyarrow":
        import pyarrow

        table = batch
        for name, values in added.items():
            kind_of_values = pyarrow.float64() if types[name] == "double" else pyarrow.string()
            table = table.append_column(name, pyarrow.array(values, kind_of_values))  # type: ignore[attr-defined]
        return table
    return {**batch, **added}  # type: ignore[dict-item, return-value]


def _pandas_types() -> dict[str, Any]:
    """The pandas type of a `string` and a `double` result column: Arrow's where pyarrow is
    installed, so a batch whose column is all missing (no label on a pass-fail rubric) keeps
    its type when Ray Data makes it an Arrow block and Parquet writes it (pandas' own string
    type becomes Arrow's null type there, which a reader cannot join with a string column)."""
    import pandas

    try:
        import pyarrow
    except ImportError:
        return {"string": "string", "double": "float64"}
    return {
        "string": pandas.ArrowDtype(pyarrow.string()),
        "double": pandas.ArrowDtype(pyarrow.float64()),
    }


def plain(value: Any) -> Any:
    """A value as plain Python: None for missing (None, NaN, pandas.NA, NaT), lists and dicts
    all the way down, numpy's scalars and arrays as Python's."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, str | bytes | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {key: plain(inner) for key, inner in value.items()}
    if isinstance(value, list | tuple):
        return [plain(inner) for inner in value]
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return plain(tolist())
    return value


def rows_where(batch: Batch, keep: Sequence[bool]) -> Batch:
    """A new batch of `batch`'s kind holding only the rows `keep` marks, in order."""
    kind = kind_of(batch)
    if kind == "pandas":
        return batch.loc[list(keep)]  # type: ignore[attr-defined, no-any-return]
    if kind == "pyarrow":
        import pyarrow

        return batch.filter(pyarrow.array(list(keep), pyarrow.bool_()))  # type: ignore[attr-defined, no-any-return]
    return {  # type: ignore[return-value]
        name: [value for value, kept in zip(column, keep, strict=True) if kept]
        for name, column in batch.items()  # type: ignore[attr-defined]
    }

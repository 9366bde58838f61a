"""`TableJudge`: one rubric judged over a table's rows, a batch at a time, on the engine; a
picklable value that Ray Data's actors (and Spark's executors) build their judge from."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import ValidationError

from rubriclib.config import resolve
from rubriclib.errors import JudgeConfigError, RubricError
from rubriclib.evals.results import JudgeIdentity, judge_identity, result_key
from rubriclib.evals.tables.columns import RESULT_COLUMNS, Columns, read_batch, with_columns
from rubriclib.evals.tables.resume import judged_keys, unjudged
from rubriclib.item import Item, TranscriptError, as_item
from rubriclib.judging import (
    GradeResult,
    Job,
    Judge,
    Pacing,
    judge_stream,
    not_judged,
    run_to_end,
)
from rubriclib.rubrics import Rubric, load_rubric, parse_rubric_text
from rubriclib.settings import JudgeSettings
from rubriclib.validation import problems_from_validation

Batch = TypeVar("Batch")

ITEM_FIELDS = ("output", "transcript", "input", "context", "reference", "baseline", "id")
"""The fields of an Item a column may give (`variables` and `metadata` are no column's)."""


class TableJudge:
    """Judges the rows of a table with one rubric: called on a pandas DataFrame, a pyarrow Table
    or a dict of columns, it returns the same kind with the result columns added (`verdict`,
    `score`, `label`, `reason`, `error`, `rubric`, `rubric_version`, `rubric_digest`,
    `result_key`, `result`, each behind `prefix`). Every row gets one result: a row that cannot
    be judged gets verdict `error` and its cause in `error`, never an exception.

    It pickles as the rubric's text and digest and the judge's settings as resolved where it was
    made (never the API key: each worker reads it from its environment), so Ray Data's actors
    and Spark's executors (`map_in_pandas`, `spark_schema`) judge as the driver would; a
    worker whose rubriclib computes another digest for that text refuses to judge.

    Args:
        rubric: A Rubric, or a name or path to load.
        columns: Which column gives each field of an item (`{"output": "answer", "context":
            "docs"}`); None takes the columns named as the fields (`output`, `input`, ...).
            An `id` column names each row in `result_key` (else the row's fields do).
        model: The judge model (else RUBRICLIB_MODEL, the project's config, the default).
        base_url: The judge endpoint (else OPENAI_BASE_URL, the config, OpenAI's).
        concurrency: Judgments in flight at once within a batch (else the config's).
        requests_per_minute: The most request starts a minute (None: no spacing).
        prefix: Put before every result column's name (several judges on one table).
        pacing: Whose pace the requests keep: "batch" (each batch its own: `concurrency` and
            `requests_per_minute` per batch, so per Ray actor, and on Spark per executor's
            Python worker: there is no pace shared across Spark's executors) or "ray" (one
            limiter actor shared by every actor of the Ray job: the cap and the pace hold
            across them all, and a 429 or a dead endpoint slows or stops them all; the slots
            of an actor that died come back after the request's timeout and 30 s).
        cache: The verdict cache: False (off), True (the user cache folder) or a folder.
        max_prompt_tokens: The largest prompt a judgment sends (as `Judge`).
        **settings: The other judge settings, as `JudgeSettings` names them (`votes`, `mode`,
            `protocol`, `temperature`, `api_key_env`...).

    Raises:
        JudgeConfigError: A setting that cannot be used (the key, the endpoint, a column).
        RubricError: A rubric that cannot be loaded.
    """

    def __init__(
        self,
        rubric: Rubric | str,
        columns: Mapping[str, str] | None = None,
        *,
        model: str | None = None,
        base_url: str | None = None,
        concurrency: int | None = None,
        requests_per_minute: float | None = None,
        prefix: str = "",
        pacing: Literal["batch", "ray"] = "batch",
        cache: bool | str = False,
        max_prompt_tokens: int | None = None,
        **settings: Any,
    ) -> None:
        loaded = load_rubric(rubric) if isinstance(rubric, str) else rubric
        if loaded.text is None:
            raise JudgeConfigError(
                f"TableJudge: the rubric {loaded.name} has no text of its own (made from a "
                "prompt); give a rubric file's name or path"
            )
        self._rubric = checked_rubric(loaded.text, str(loaded.path), loaded.source, loaded.digest)
        self.columns = checked_columns(columns)
        self.prefix = prefix
        self.concurrency = int(concurrency or resolve("concurrency").value)
        self.requests_per_minute = requests_per_minute
        if pacing not in ("batch", "ray"):
            raise JudgeConfigError(f"TableJudge: pacing must be 'batch' or 'ray', not {pacing!r}")
        self.pacing = pacing
        self.cache = cache
        judge = Judge.from_settings(
            judge_settings(model=model, base_url=base_url, **settings),
            cache=cache,
            max_prompt_tokens=max_prompt_tokens,
        )
        self.settings = judge_settings(**settings).merge(
            model=judge.model,
            base_url=judge.base_url,
            protocol=judge.protocol,
            evidence=judge.evidence,
        )
        """The judge's settings as resolved here: every worker judges with these."""
        self.max_prompt_tokens = judge.max_prompt_tokens
        self.identity: JudgeIdentity = judge_identity(self._rubric.digest, judge)
        """What its results are judged with (`result_key` is made of it)."""
        self._judge: Judge | None = judge
        self._shared_pacing: Pacing | None = None

    @property
    def rubric(self) -> Rubric:
        """The rubric it judges with."""
        return self._rubric

    @property
    def model(self) -> str:
        """The judge model, as its results record it."""
        return self.identity[1]

    def __repr__(self) -> str:
        return f"TableJudge({self._rubric.name}@{self._rubric.version}, model={self.model!r})"

    def __getstate__(self) -> dict[str, Any]:
        local = ("_judge", "_shared_pacing")  # built again where it is unpickled
        state = {name: value for name, value in self.__dict__.items() if name not in local}
        rubric = state.pop("_rubric")
        state["rubric"] = (rubric.text, str(rubric.path), rubric.source, rubric.digest)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        text, path, source, digest = state.pop("rubric")
        self.__dict__.update(state, _rubric=checked_rubric(text, path, source, digest))
        self._judge = None  # built from the settings at the first batch, with this key
        self._shared_pacing = None

    def __call__(self, batch: Batch) -> Batch:
        """`batch` with its rows' results in the result columns (the same kind of table)."""
        table = read_batch(batch)
        names = self._result_types(table.names)
        fields = self._fields(table)
        results = run_to_end(lambda: self._judged(fields))
        keys = self._keys(fields)
        added = [result_columns(result, key) for result, key in zip(results, keys, strict=True)]
        columns = {f"{self.prefix}{name}": [row[name] for row in added] for name in RESULT_COLUMNS}
        return with_columns(batch, columns, names)

    def map_in_pandas(self, batches: Iterable[Any]) -> Iterator[Any]:
        """Spark's `mapInPandas` form: each pandas DataFrame of `batches` judged, in order
        (`df.mapInPandas(judge.map_in_pandas, schema=judge.spark_schema(df.schema))`). Spark
        pickles the judge into each task, which builds its Judge at its first batch from its
        own environment's key; `concurrency` and `requests_per_minute` hold per batch, so per
        executor's Python worker, not across the job."""
        for batch in batches:
            yield self(batch)

    def spark_schema(self, input_schema: Any) -> Any:
        """The Spark StructType `map_in_pandas` gives back for a DataFrame of `input_schema`:
        its fields, then the result columns (each behind `prefix`, nullable, a string or a
        double), so a column missing or a result column already there is refused on the
        driver, before any request. Refuses `pacing="ray"`, which holds on Ray only."""
        from pyspark.sql.types import DoubleType, StringType, StructField, StructType

        if self.pacing == "ray":
            raise JudgeConfigError(
                "TableJudge: pacing='ray' shares one pace on Ray only; on Spark each "
                "executor paces its own requests (pacing='batch')"
            )
        spark_types = {"string": StringType(), "double": DoubleType()}
        self._refuse_missing_columns(input_schema.fieldNames())
        added = self._result_types(input_schema.fieldNames())
        fields = [StructField(name, spark_types[kind], True) for name, kind in added.items()]
        return StructType([*input_schema.fields, *fields])

    def result_keys(self, batch: Any) -> list[str]:
        """Each row's `result_key` (what its result is named by), judging nothing."""
        return self._keys(self._fields(read_batch(batch)))

    def unjudged(self, table: Batch, results: Any) -> Batch:
        """The rows of `table` (the same kind: a pandas DataFrame, a pyarrow Table, a dict of
        columns, or a Ray Dataset or Spark DataFrame, kept lazily) that `results`, what this
        judge (or one judging the same way) wrote before, holds no verdict for: what a resumed
        run still judges. A row whose result was an error is judged again, as `eval --resume`
        judges it again."""
        return unjudged(table, self.result_keys, judged_keys(self.prefix, results))

    def _result_types(self, present: Iterable[str]) -> dict[str, Literal["string", "double"]]:
        """The result columns' names (behind `prefix`) and types; refused when a table whose
        columns are `present` already has one."""
        names = {f"{self.prefix}{name}": kind for name, kind in RESULT_COLUMNS.items()}
        found = set(present)
        if clash := [name for name in names if name in found]:
            raise JudgeConfigError(
                f"TableJudge: the batch already has the column {clash[0]!r}; give another "
                "prefix= to keep both"
            )
        return names

    def _refuse_missing_columns(self, present: Sequence[str]) -> None:
        """Refuse a table whose columns are `present` when it lacks one `columns` names."""
        if missing := [name for name in self.columns.values() if name not in present]:
            found = ", ".join(present) or "none"
            raise JudgeConfigError(
                f"TableJudge: the batch has no column {missing[0]!r} (columns: {found})"
            )

    def _fields(self, table: Columns) -> list[dict[str, Any]]:
        """Each row's item fields from its columns (a missing value left out)."""
        self._refuse_missing_columns(table.names)
        mapped = self.columns or {name: name for name in ITEM_FIELDS if name in table.names}
        values = {field: table.values(name) for field, name in mapped.items()}
        rows = (
            {field: column[index] for field, column in values.items()}
            for index in range(table.length)
        )
        return [{field: value for field, value in row.items() if value is not None} for row in rows]

    def _keys(self, fields: list[dict[str, Any]]) -> list[str]:
        return [result_key(row_identity(row), self.identity) for row in fields]

    async def _judged(self, fields: list[dict[str, Any]]) -> list[GradeResult]:
        """Every row's result, in order: the engine judges the rows that are items. A worker
        that cannot build its judge (no key in its environment) gives each row an error."""
        try:
            judge = self._judge or self._worker_judge()
        except JudgeConfigError as error:
            cause = f"this worker cannot judge: {error}"
            return [not_judged(self._rubric, self.settings.model or "", cause) for _ in fields]
        results: dict[int, GradeResult] = {}
        judged: list[int] = []

        def jobs() -> Iterator[Job]:
            for index, row in enumerate(fields):
                item = row_item(index, row)
                if isinstance(item, str):
                    results[index] = not_judged(self._rubric, judge.model, item)
                    continue
                judged.append(index)
                yield Job(self._rubric, item)

        try:
            stream = judge_stream(
                judge,
                jobs(),
                concurrency=self.concurrency,
                requests_per_minute=self.requests_per_minute,
                pacing=self._pacing(judge.timeout),
            )
            async for job, result in stream:
                results[judged[job]] = result
        finally:
            await judge.aclose()
        return [results[index] for index in range(len(fields))]

    def _pacing(self, request_timeout: float) -> Pacing | None:
        """The Pacing this batch's requests wait on: None (the batch's own), or the Ray job's
        shared one, found once a process (its slots leased for a request's timeout)."""
        if self.pacing == "ray" and self._shared_pacing is None:
            from rubriclib.evals.tables.ray_pacing import LEASE_MARGIN, RayPacing

            lease = request_timeout + LEASE_MARGIN
            self._shared_pacing = RayPacing(self.concurrency, self.requests_per_minute, lease)
        return self._shared_pacing

    def _worker_judge(self) -> Judge:
        """The judge a worker builds from the settings it was sent (its key from its own
        environment), once."""
        self._judge = Judge.from_settings(
            self.settings, cache=self.cache, max_prompt_tokens=self.max_prompt_tokens
        )
        return self._judge


def judge_settings(**settings: Any) -> JudgeSettings:
    """JudgeSettings from keyword arguments; a JudgeConfigError naming each bad one."""
    try:
        return JudgeSettings(**settings)
    except ValidationError as error:
        problems = problems_from_validation(error, "TableJudge", JudgeSettings)
        raise JudgeConfigError("; ".join(f"{p.field}: {p.message}" for p in problems)) from None


def checked_columns(columns: Mapping[str, str] | None) -> dict[str, str]:
    """The columns mapping, each key an item field and each value a column name."""
    if columns is None:
        return {}
    unknown = [field for field in columns if field not in ITEM_FIELDS]
    if unknown or "output" not in columns and "transcript" not in columns:
        why = f"{unknown[0]!r} is no item field" if unknown else "name the output's column"
        raise JudgeConfigError(f"TableJudge: columns: {why} ({', '.join(ITEM_FIELDS)})")
    if bad := [name for name in columns.values() if not isinstance(name, str)]:
        raise JudgeConfigError(f"TableJudge: columns: {bad[0]!r} is no column name")
    return dict(columns)


def checked_rubric(text: str, path: str, source: str, digest: str) -> Rubric:
    """The rubric read from its text, refused when this rubriclib computes another digest for
    it than `digest` (the one it was judged with where the TableJudge was made)."""
    rubric = parse_rubric_text(text, Path(path), source, path)
    if rubric.digest != digest:
        raise RubricError.single(
            path,
            "digest",
            f"this rubriclib computes {rubric.digest[:12]} for the rubric {rubric.name}, where "
            f"the TableJudge was made {digest[:12]}: install the same rubriclib on every worker",
        )
    return rubric


def row_item(index: int, row: dict[str, Any]) -> Item | str:
    """The row as an Item, or why it cannot be one."""
    where = f"row {row['id']!r}" if "id" in row else f"row {index}"
    if isinstance(row.get("transcript"), str):
        try:
            row = {**row, "transcript": json.loads(row["transcript"])}
        except ValueError as error:
            return f"{where}.transcript: not JSON ({error})"
    try:
        return as_item(row, where)
    except (TypeError, TranscriptError) as error:
        return str(error)


def row_identity(row: dict[str, Any]) -> str:
    """What names a row in its `result_key`: its id, else a digest of its item fields."""
    if "id" in row:
        return str(row["id"])
    text = json.dumps(row, sort_keys=True, ensure_ascii=False, default=str)
    return "fields:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def result_columns(result: GradeResult, key: str) -> dict[str, Any]:
    """One row's values of the result columns."""
    rubric = result.details.rubric
    failed = result.verdict == "error"
    return {
        "verdict": result.verdict,
        "score": result.score,
        "label": result.details.label,
        "reason": None if failed else result.reason,
        "error": result.reason if failed else None,
        "rubric": rubric.name,
        "rubric_version": rubric.version,
        "rubric_digest": rubric.digest,
        "result_key": key,
        "result": result.model_dump_json(),
    }

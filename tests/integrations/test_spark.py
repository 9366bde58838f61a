"""TableJudge on Spark in `.integrations/spark` (`make integrations`): one local session
(`local[2]`, started once for the whole module: a JVM takes tens of seconds on 2 cores) runs the
docs' recipe, `mapInPandas` judging Parquet files and writing Parquet, then the docs' resume,
an anti-join judging only the rows without a verdict, against the scripted judge."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY, integration_tool, run_tool, snippet
from judge_server import JudgeServer
from test_ray import as_run_here, flaky_responder

# Run with the spark venv's python in the folder to write in. The docs' recipes (docs_table.py, docs_resume.py) start the session, judge and resume; the key is
# taken out of this process's environment first, so only `spark.executorEnv` carries it to the
# Python workers (which Spark starts from its JVM, started from here).
RUN_SPARK = """\
import json, os, sys, time
from pathlib import Path
import pandas, pyarrow, pyarrow.parquet
import rubriclib
from rubriclib import TableJudge

imported_pyspark = "pyspark" in sys.modules
key = os.environ.pop("OPENAI_API_KEY")
rows = [{"id": n, "answer": f"verdict:{'pass' if n % 3 else 'fail'} row {n}", "docs": f"source {n}"}
        for n in range(16)]
rows[5]["answer"] = None
rows[8]["answer"] = "verdict:pass flaky 8"
Path("answers").mkdir()
for part in range(4):  # 4 files, 4 tasks: both of local[2]'s Python workers judge
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows[part * 4:part * 4 + 4]),
                                f"answers/part-{part}.parquet")
times, started = {}, time.monotonic()

def lap(name):
    global started
    times[name], started = time.monotonic() - started, time.monotonic()

docs = {"key": key}
exec(Path("docs_table.py").read_text(), docs)  # the session, then mapInPandas to Parquet
lap("session and judging")
judge, answers, spark = docs["judge"], docs["answers"], docs["spark"]
refused = []
url = judge.settings.base_url
for bad in (TableJudge("groundedness", {"output": "missing"}, base_url=url),
            TableJudge("groundedness", {"output": "answer"}, base_url=url, pacing="ray")):
    try:
        answers.mapInPandas(bad.map_in_pandas, schema=bad.spark_schema(answers.schema))
    except Exception as error:
        refused.append(f"{type(error).__name__}: {error}")
schema = [[field.name, field.dataType.simpleString(), field.nullable]
          for field in judge.spark_schema(answers.schema).fields]
exec(Path("docs_resume.py").read_text(), docs)  # only the rows without a verdict, appended
lap("resume")
written = pyarrow.parquet.read_table("judged").to_pandas()
left_of_mixed = [  # a Spark table against pandas results, a pandas table against Spark's
    sorted(row.id for row in judge.unjudged(answers, written).collect()),
    sorted(judge.unjudged(pandas.read_parquet("answers"), spark.read.parquet("judged"))["id"]),
]
lap("mixed")
spark.stop()
lap("stop")

judged = pyarrow.parquet.read_table("judged").to_pandas()  # read back without Spark
print(json.dumps({
    "results": json.loads(judged.drop(columns=["result"]).to_json(orient="records")),
    "keys": judge.result_keys(pandas.read_parquet("answers").sort_values("id")),
    "digest": judge.rubric.digest,
    "schema": schema,
    "refused": refused,
    "left_of_mixed": left_of_mixed,
    "imported_pyspark": imported_pyspark,
    "times": times,
}))
"""


def spark_env(work: Path) -> dict[str, str]:
    """The environment of a script in the spark venv: ours without any judge settings, the key
    set, the venv's python for Spark's driver and workers, and a session without its web UI
    and with 2 shuffle partitions (the default 200 are 200 tasks on 2 cores)."""
    python = str(integration_tool("spark", "bin", "python"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RUBRICLIB_"))}
    env.update(
        OPENAI_API_KEY=SECRET_KEY,
        RUBRICLIB_CACHE_DIR=str(work / "cache"),
        PYTHONPATH=str(Path(__file__).parent.parent.parent),
        PYSPARK_PYTHON=python,
        PYSPARK_DRIVER_PYTHON=python,
        PYSPARK_SUBMIT_ARGS=(
            "--conf spark.ui.enabled=false --conf spark.sql.shuffle.partitions=2 pyspark-shell"
        ),
    )
    return env


@pytest.fixture(scope="module")
def spark_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The docs' Spark recipes run in one session against the scripted judge (each request
    answered 0.1 s late; the first about a `flaky` output refused)."""
    python = integration_tool("spark", "bin", "python")
    work = tmp_path_factory.mktemp("spark")
    with JudgeServer(latency=0.1) as server:
        server.responder = flaky_responder()
        recipe = as_run_here(
            snippet("spark-table"),
            ('os.environ["OPENAI_API_KEY"]', "key"),
            ("http://localhost:8000/v1", server.url),
            ("concurrency=16", "concurrency=2"),
        )
        (work / "docs_table.py").write_text(recipe)
        (work / "docs_resume.py").write_text(snippet("spark-resume"))
        (work / "run_spark.py").write_text(RUN_SPARK)
        done = run_tool([str(python), "run_spark.py"], work, spark_env(work), timeout=600)
        report = json.loads(done.stdout.strip().splitlines()[-1])
        yield report | {"server": server, "work": work}


def test_map_in_pandas_judges_every_row_into_parquet_with_the_rubrics_digest(
    spark_run: dict[str, Any],
) -> None:
    first = {row["id"]: row for row in spark_run["results"][::-1]}  # resumed rows come last
    assert sorted(first) == list(range(16))
    assert [first[n]["verdict"] for n in (1, 3, 6, 7)] == ["pass", "fail", "fail", "pass"]
    assert first[5]["verdict"] == "error"  # no output: an error, and the job went on
    assert first[5]["error"] == "not judged: row 5.output: is required"
    assert {row["rubric_digest"] for row in spark_run["results"]} == {spark_run["digest"]}
    assert {row["rubric"] for row in spark_run["results"]} == {"groundedness"}


def test_spark_names_each_row_by_the_result_key_pandas_gives_it(
    spark_run: dict[str, Any],
) -> None:
    keys = {(row["id"], row["result_key"]) for row in spark_run["results"]}
    assert keys == set(enumerate(spark_run["keys"]))


def test_the_schema_adds_the_typed_result_columns_and_refuses_mistakes_on_the_driver(
    spark_run: dict[str, Any],
) -> None:
    given = [["id", "bigint", True], ["answer", "string", True], ["docs", "string", True]]
    added = [[name, "string", True] for name in ("verdict", "score", "label", "reason")]
    added[1][1] = "double"
    assert spark_run["schema"][:7] == given + added
    assert [name for name, _, _ in spark_run["schema"][7:]] == [
        "error",
        "rubric",
        "rubric_version",
        "rubric_digest",
        "result_key",
        "result",
    ]
    assert spark_run["refused"] == [
        "JudgeConfigError: TableJudge: the batch has no column 'missing' (columns: id, answer, "
        "docs)",
        "JudgeConfigError: TableJudge: pacing='ray' shares one pace on Ray only; on Spark each "
        "executor paces its own requests (pacing='batch')",
    ]


def test_a_resumed_spark_table_judges_only_the_rows_without_a_verdict(
    spark_run: dict[str, Any],
) -> None:
    verdicts: dict[int, list[str]] = {}
    for row in spark_run["results"]:
        verdicts.setdefault(row["id"], []).append(row["verdict"])
    again = {n: sorted(found) for n, found in verdicts.items() if len(found) > 1}
    assert again == {5: ["error", "error"], 8: ["error", "pass"]}
    # 15 rows asked (row 5 has no output), then only row 8 again: none judged twice
    assert spark_run["server"].request_count == 15 + 1
    assert spark_run["left_of_mixed"] == [[5], [5]]  # either table against the other's results


def test_the_key_reaches_the_workers_through_executor_env_only_and_is_written_nowhere(
    spark_run: dict[str, Any],
) -> None:
    sent = {headers["authorization"] for headers in spark_run["server"].headers}
    assert sent == {f"Bearer {SECRET_KEY}"}
    written = [path.read_bytes() for path in spark_run["work"].rglob("*") if path.is_file()]
    assert written and not any(SECRET_KEY.encode() in data for data in written)


def test_importing_rubriclib_does_not_import_pyspark(spark_run: dict[str, Any]) -> None:
    assert spark_run["imported_pyspark"] is False

"""TableJudge on the tables it is given in `.integrations/ray` (`make integrations`): pandas
DataFrames and pyarrow Tables judged in place, and the real Ray Data on a local cluster (one
`ray.init` for the whole module, since a cluster takes seconds to start) running it in
`map_batches`, as a class built once per actor and as an instance, its results written with
`write_parquet` and read back, and a resumed run judging only what is missing."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import KEYWORD_RUBRIC, SECRET_KEY, integration_tool, keyword_responder, run_tool
from judge_server import JudgeServer

from rubriclib import TableJudge

# Run with the ray venv's python: argv[1] the judge's base URL, argv[2] the rubric file.
JUDGE_TABLES = """\
import json, pickle, sys
import pandas, pyarrow
from rubriclib import TableJudge

url, rubric = sys.argv[1:3]
judge = TableJudge(rubric, {"output": "answer", "id": "id"}, model="judge-model", base_url=url,
                   concurrency=2)
rows = {"id": [7, 8, 9], "answer": ["verdict:pass", None, "verdict:fail"], "n": [1.5, None, 2.0]}
frame = pandas.DataFrame(rows, index=[10, 11, 12])
judged_frame = judge(frame)
judged_table = judge(pyarrow.table(rows))
grown = pandas.DataFrame({"id": [7, 8, 9, 10], "answer": ["verdict:pass", "verdict:pass",
                          "verdict:fail", "verdict:pass"]})
left_frame = judge.unjudged(grown, judged_frame)
left_table = judge.unjudged(pyarrow.Table.from_pandas(grown), judged_table)
print(json.dumps({
    "frame_kind": type(judged_frame).__name__,
    "frame_index": judged_frame.index.tolist(),
    "frame_columns": judged_frame.columns.tolist(),
    "frame_types": {name: str(kind) for name, kind in judged_frame.dtypes.items()},
    "frame": json.loads(judged_frame.to_json(orient="records")),
    "given_columns": frame.columns.tolist(),
    "table_kind": type(judged_table).__name__,
    "table_types": {field.name: str(field.type) for field in judged_table.schema},
    "table": judged_table.to_pylist(),
    "left_frame": [type(left_frame).__name__, left_frame["id"].tolist()],
    "left_table": [type(left_table).__name__, left_table.column("id").to_pylist()],
    "pickled": pickle.dumps(judge).hex(),
}))
"""


def ray_env(work: Path, server: JudgeServer) -> dict[str, str]:
    """The environment of a script in the ray venv: ours without any judge settings, the key
    set (so the tests can show it goes nowhere) and the verdict cache in `work`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RUBRICLIB_"))}
    env.update(
        OPENAI_API_KEY=SECRET_KEY,
        RUBRICLIB_CACHE_DIR=str(work / "cache"),
        PYTHONPATH=str(Path(__file__).parent.parent.parent),
    )
    return env


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One pandas DataFrame and one pyarrow Table judged, and resumed, in the ray venv."""
    python = integration_tool("ray", "bin", "python")
    work = tmp_path_factory.mktemp("tables")
    (work / "keywords.md").write_text(KEYWORD_RUBRIC)
    (work / "judge_tables.py").write_text(JUDGE_TABLES)
    with JudgeServer() as server:
        server.responder = keyword_responder()
        arguments = [str(python), "judge_tables.py", server.url, str(work / "keywords.md")]
        done = run_tool(arguments, work, ray_env(work, server))
        yield json.loads(done.stdout.strip().splitlines()[-1]) | {"url": server.url}


RESULT_COLUMNS = ["verdict", "score", "label", "reason", "error", "rubric", "rubric_version"]
RESULT_COLUMNS += ["rubric_digest", "result_key", "result"]


def test_a_dataframe_comes_back_a_dataframe_with_its_index_and_the_result_columns(
    tables: dict[str, Any],
) -> None:
    assert tables["frame_kind"] == "DataFrame"
    assert tables["frame_index"] == [10, 11, 12]
    assert tables["frame_columns"] == ["id", "answer", "n", *RESULT_COLUMNS]
    assert tables["given_columns"] == ["id", "answer", "n"]  # the caller's frame is untouched
    assert [row["verdict"] for row in tables["frame"]] == ["pass", "error", "fail"]
    assert tables["frame"][1]["error"] == "not judged: row 8.output: is required"
    assert [row["score"] for row in tables["frame"]] == [1.0, None, 0.0]  # an error has none
    assert tables["frame_types"]["score"] == "float64"


def test_a_pyarrow_table_comes_back_a_table_with_typed_result_columns(
    tables: dict[str, Any],
) -> None:
    assert tables["table_kind"] == "Table"
    assert tables["table_types"]["verdict"] == "string"
    assert tables["table_types"]["score"] == "double"
    assert tables["table_types"]["n"] == "double"
    assert [row["verdict"] for row in tables["table"]] == ["pass", "error", "fail"]


def test_every_kind_of_table_names_a_row_by_the_same_result_key(
    tables: dict[str, Any], write_file: Callable[..., Path]
) -> None:
    rubric = str(write_file("keywords.md", KEYWORD_RUBRIC))
    judge = TableJudge(
        rubric, {"output": "answer", "id": "id"}, model="judge-model", base_url=tables["url"]
    )
    from_dict = judge.result_keys({"id": [7, 8, 9], "answer": ["a", None, "c"]})
    assert [row["result_key"] for row in tables["frame"]] == from_dict
    assert [row["result_key"] for row in tables["table"]] == from_dict


def test_a_resumed_table_judges_only_the_rows_without_a_verdict(tables: dict[str, Any]) -> None:
    assert tables["left_frame"] == ["DataFrame", [8, 10]]  # the error, and the new row
    assert tables["left_table"] == ["Table", [8, 10]]


def test_the_key_is_in_no_result_and_not_pickled(tables: dict[str, Any]) -> None:
    assert SECRET_KEY not in json.dumps(tables["frame"]) + json.dumps(tables["table"])
    assert SECRET_KEY.encode().hex() not in tables["pickled"]

"""TableJudge on the tables it is given in `.integrations/ray` (`make integrations`): pandas
DataFrames and pyarrow Tables judged in place, and the real Ray Data on the session's cluster
(`ray_cluster`, the docs' two nodes, started once since a cluster takes seconds) running it in
`map_batches`, as a class built once per actor (the docs' recipe) and as an instance (the docs'
resume), its results written with `write_parquet` and read back, and a resumed run judging only
what is missing."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    KEYWORD_RUBRIC,
    SECRET_KEY,
    integration_tool,
    keyword_responder,
    run_tool,
    snippet,
)
from judge_server import JudgeServer, Reply, error_reply
from ray_cluster import RayCluster

from rubriclib import TableJudge

# Run with the ray venv's python: argv[1] the judge's base URL, argv[2] the rubric file.
JUDGE_TABLES = """\
import contextlib, io, json, pickle, sys
import pandas, pyarrow
from rubriclib import TableJudge

printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    exec(open("docs_pandas.py").read(), {})

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
    "docs_printed": printed.getvalue(),
}))
"""


def ray_env(work: Path) -> dict[str, str]:
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
        docs_url = ("http://localhost:8000/v1", server.url)
        (work / "docs_pandas.py").write_text(as_run_here(snippet("table-pandas"), docs_url))
        arguments = [str(python), "judge_tables.py", server.url, str(work / "keywords.md")]
        done = run_tool(arguments, work, ray_env(work))
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
    assert tables["frame_types"]["score"] == "double[pyarrow]"  # typed, even all missing
    assert tables["frame_types"]["label"] == "string[pyarrow]"


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


def test_the_docs_dataframe_example_runs_as_written(tables: dict[str, Any]) -> None:
    lines = tables["docs_printed"].splitlines()
    assert lines[0].split() == ["id", "verdict", "reason", "error"]
    assert [line.split()[1:3] for line in lines[1:]] == [["q1", "fail"], ["q2", "fail"]]


def test_the_key_is_in_no_result_and_not_pickled(tables: dict[str, Any]) -> None:
    assert SECRET_KEY not in json.dumps(tables["frame"]) + json.dumps(tables["table"])
    assert SECRET_KEY.encode().hex() not in tables["pickled"]


# Run with the ray venv's python in the folder to write in. The docs' recipes (docs_table.py,
# docs_resume.py) start the cluster, judge (a class, in two actors that share one pace) and
# resume (an instance, pickled into each task): each Dataset run starts Ray Data's workers
# again, seconds each on 2 cores, so these are the only ones.
RUN_RAY = """\
import json, sys, time
from pathlib import Path
import pyarrow, pyarrow.parquet
import ray, ray.data

rows = [{"id": n, "answer": f"verdict:{'pass' if n % 3 else 'fail'} row {n}", "docs": f"source {n}"}
        for n in range(40)]
rows[5]["answer"] = rows[17]["answer"] = None
rows[8]["answer"], rows[30]["answer"] = "verdict:pass flaky 8", "verdict:fail flaky 30"
Path("answers").mkdir()
for part in range(8):  # 8 files: batches for both actors
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows[part * 5:part * 5 + 5]),
                                f"answers/part-{part}.parquet")
times, started = {}, time.monotonic()

def lap(name):
    global started
    times[name], started = time.monotonic() - started, time.monotonic()

docs = {}
exec(Path("docs_table.py").read_text(), docs)  # ray.init, then two actors judge at one pace
ray.data.DataContext.get_current().enable_progress_bars = False
lap("init and class")

exec(Path("docs_resume.py").read_text(), docs)  # only the rows without a verdict
lap("resume")
ray.shutdown()
lap("shutdown")

# read back without the cluster (Ray read them above, for the resume)
judged = pyarrow.parquet.read_table("judged").to_pandas()
print(json.dumps({
    "results": judged[["id", "verdict", "error", "result_key"]].to_dict(orient="records"),
    "keys": docs["judge"].result_keys({"id": list(range(40)), "answer": ["x"] * 40,
                                       "docs": ["y"] * 40}),
    "times": times,
}))
print(json.dumps(times), file=sys.stderr)
"""


# Run with the ray venv's python on the session's cluster: prints how long a slot took to come
# back after the actor that made the limiter died holding every slot, and whether the limiter
# then ended once idle.
KEEPER_CHECK = """\
import asyncio, json, time
import ray
from rubriclib.evals.tables.ray_pacing import NAMESPACE, RayPacing

ray.init()

@ray.remote(num_cpus=0)
class Holder:
    async def hold(self):  # the first to ask: it makes the limiter
        pacer = RayPacing(2, None, lease_seconds=2, idle_seconds=1).pacer("endpoint")
        await pacer.acquire()
        await pacer.acquire()

holder = Holder.remote()
ray.get(holder.hold.remote())
ray.kill(holder)  # dies holding both slots
pacing = RayPacing(2, None, lease_seconds=2, idle_seconds=1)
started = time.monotonic()
asyncio.run(pacing.pacer("endpoint").acquire())
waited = time.monotonic() - started
asyncio.run(pacing.pacer("endpoint").release(("ok", None)))
keeper = pacing._name
named = lambda: keeper in {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)}
there_after_release = named()
while named() and time.monotonic() - started < 30:
    time.sleep(0.2)
print(json.dumps({"waited": waited, "there_after_release": there_after_release,
                  "ended": time.monotonic() - started if not named() else None}))
"""


def as_run_here(text: str, *changes: tuple[str, str]) -> str:
    """A docs' snippet with each `(shown, here)` changed: the endpoint, or a number sized for
    these tests (each must be in the snippet as shown)."""
    for shown, here in changes:
        assert shown in text, f"{shown!r} is no longer in the snippet"
        text = text.replace(shown, here)
    return text


def flaky_responder() -> Callable[[dict[str, Any]], Reply]:
    """The keyword judge, but the first request about a `flaky` output is refused (HTTP 400:
    an error result, never retried)."""
    answer, refused, lock = keyword_responder(), set(), threading.Lock()

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        with lock:
            first = "flaky" in user and user not in refused
            refused.add(user)
        return error_reply(400, "refused once") if first else answer(body)

    return respond


@pytest.fixture(scope="module")
def ray_run(
    tmp_path_factory: pytest.TempPathFactory, ray_cluster: RayCluster
) -> Iterator[dict[str, Any]]:
    """Ray Data on the session's cluster judging one dataset, then resuming it (the docs'
    `ray.init()` finds the cluster by RAY_ADDRESS), against the scripted judge answering each
    request 0.1 s late."""
    python = integration_tool("ray", "bin", "python")
    work = tmp_path_factory.mktemp("ray")
    with JudgeServer(latency=0.1) as server:
        server.responder = flaky_responder()
        docs_url = ("http://localhost:8000/v1", server.url)
        # a cluster's workers run in folders of their own: the files where all of them look
        folders = [(f'"{name}/"', f'"{work / name}/"') for name in ("answers", "judged")]
        recipe = as_run_here(
            snippet("ray-table"),
            docs_url,
            ('"concurrency": 16', '"concurrency": 2'),
            ("=64,", "=5,"),
            *folders,
        )
        (work / "docs_table.py").write_text(recipe)
        (work / "docs_resume.py").write_text(as_run_here(snippet("ray-resume"), *folders))
        (work / "run_ray.py").write_text(RUN_RAY)
        driver = ray_env(work) | cluster_client(ray_cluster)
        # Two Dataset runs: 60-200 s on 2 cores, over 300 s on a loaded machine.
        done = run_tool([str(python), "run_ray.py"], work, driver, timeout=900)
        report = json.loads(done.stdout.strip().splitlines()[-1])
        yield report | {"server": server, "work": work, "cluster": ray_cluster.folder}


def test_ray_data_judges_every_row_once_in_actors_and_writes_parquet(
    ray_run: dict[str, Any],
) -> None:
    by_id: dict[int, list[dict[str, Any]]] = {}
    for row in ray_run["results"]:
        by_id.setdefault(row["id"], []).append(row)
    assert sorted(by_id) == list(range(40))
    judged_again = {5, 17, 8, 30}  # the errors, judged again when resumed
    assert all(len(rows) == 1 for n, rows in by_id.items() if n not in judged_again)
    assert by_id[5][0]["verdict"] == "error"
    assert by_id[5][0]["error"] == "not judged: row 5.output: is required"
    assert any(row["verdict"] == "error" and "400" in row["error"] for row in by_id[8])
    assert [by_id[n][0]["verdict"] for n in (1, 3, 6)] == ["pass", "fail", "fail"]
    keys = {n: {row["result_key"] for row in rows} for n, rows in by_id.items()}
    assert keys == {n: {key} for n, key in enumerate(ray_run["keys"])}


def test_a_resumed_ray_dataset_judges_only_the_rows_without_a_verdict(
    ray_run: dict[str, Any],
) -> None:
    verdicts: dict[int, list[str]] = {}
    for row in ray_run["results"]:
        verdicts.setdefault(row["id"], []).append(row["verdict"])
    again = {n: sorted(found) for n, found in verdicts.items() if len(found) > 1}
    assert again == {5: ["error", "error"], 17: ["error", "error"], 8: ["error", "pass"]} | {
        30: ["error", "fail"]
    }
    # 38 rows judged in actors, then the 2 flaky ones by an instance: none judged twice
    assert ray_run["server"].request_count == 38 + 2


def test_actors_that_share_one_pace_keep_its_cap_between_them(ray_run: dict[str, Any]) -> None:
    # two actors at concurrency 2, each batch of 5 rows judged 2 at a time: 4 without the limiter
    assert ray_run["server"].max_in_flight == 2


def test_the_workers_read_the_key_from_their_environment_and_write_it_nowhere(
    ray_run: dict[str, Any],
) -> None:
    sent = {headers["authorization"] for headers in ray_run["server"].headers}
    assert sent == {f"Bearer {SECRET_KEY}"}
    places = (ray_run["work"], ray_run["cluster"])  # our files, and Ray's logs on the nodes
    written = [path for place in places for path in place.rglob("*") if path.is_file()]
    assert len(written) > 20
    assert [path for path in written if holds(path, SECRET_KEY.encode())] == []


def holds(path: Path, secret: bytes) -> bool:
    """Whether the file at `path` holds `secret` (one that went away meanwhile does not)."""
    try:
        return secret in path.read_bytes()
    except OSError:
        return False


def cluster_client(cluster: RayCluster) -> dict[str, str]:
    """What a driver of the session's cluster needs: its address and Ray's token."""
    names = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")
    return {name: cluster.env[name] for name in names} | {"RAY_ADDRESS": cluster.address}


def test_a_shared_pace_outlives_its_maker_and_takes_back_a_dead_actors_slots(
    tmp_path: Path, ray_cluster: RayCluster
) -> None:
    # The actor that made the limiter is killed holding both slots: the limiter lives on, and
    # the slots come back when their 2 s leases run out (before, the driver waited forever).
    (tmp_path / "keeper_check.py").write_text(KEEPER_CHECK)
    env = ray_env(tmp_path) | cluster_client(ray_cluster)
    python = integration_tool("ray", "bin", "python")
    done = run_tool([str(python), "keeper_check.py"], tmp_path, env, timeout=120)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert 1.5 < report["waited"] < 10
    assert report["there_after_release"] is True
    assert report["ended"] is not None  # idle for its 1 s: it ended itself

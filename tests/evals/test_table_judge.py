"""TableJudge on a dict of columns (pandas, pyarrow and Ray Data: tests/integrations/test_ray.py)
against the scripted judge: one result per row, errors as data, the rubric's identity and a
result_key on every row, pickled without the key and refused by a worker that digests the rubric
otherwise, and the anti-join a resumed table runs."""

from __future__ import annotations

import json
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import KEYWORD_RUBRIC, SECRET_KEY, keyword_responder
from judge_server import JudgeServer, error_reply

import rubriclib.rubrics.rubric as rubric_module
from rubriclib import GradeResult, TableJudge
from rubriclib.errors import JudgeConfigError, RubricError
from rubriclib.evals.results import judged_identity, result_key

ROWS = {
    "id": ["a", "b", "c"],
    "answer": ["verdict:pass one", "verdict:fail two", "verdict:pass three"],
    "docs": ["the first source", "the second source", "the third source"],
}
RESULT_COLUMNS = [
    "verdict",
    "score",
    "label",
    "reason",
    "error",
    "rubric",
    "rubric_version",
    "rubric_digest",
    "result_key",
    "result",
]


@pytest.fixture
def keywords(write_file: Callable[..., Path]) -> str:
    return str(write_file("keywords.md", KEYWORD_RUBRIC))


@pytest.fixture
def server(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    """The scripted judge, answering by keyword; the key only in the environment."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    judge_server.responder = keyword_responder()
    return judge_server


def table_judge(keywords: str, server: JudgeServer, **more: Any) -> TableJudge:
    columns = more.pop("columns", {"output": "answer", "context": "docs", "id": "id"})
    more.setdefault("model", "judge-model")
    return TableJudge(keywords, columns, base_url=server.url, **more)


def test_a_dict_of_columns_comes_back_with_every_rows_result(
    keywords: str, server: JudgeServer
) -> None:
    judge = table_judge(keywords, server, concurrency=2)
    table = {name: list(values) for name, values in ROWS.items()}

    judged = judge(table)

    assert table == ROWS  # what was given is left as it was
    assert list(judged) == [*ROWS, *RESULT_COLUMNS]
    assert judged["verdict"] == ["pass", "fail", "pass"]
    assert judged["reason"] == ["scripted set_grade_pass", "scripted set_grade_fail"] + [
        "scripted set_grade_pass"
    ]
    assert judged["error"] == [None, None, None]
    assert judged["rubric"] == ["keywords"] * 3
    assert judged["rubric_version"] == ["2.1.0"] * 3
    assert judged["rubric_digest"] == [judge.rubric.digest] * 3
    results = [GradeResult.model_validate_json(text) for text in judged["result"]]
    assert [result.verdict for result in results] == judged["verdict"]
    # the key is the identity eval --resume matches a result on, with the row's id
    assert {judged_identity(result) for result in results} == {judge.identity}
    assert judged["result_key"] == [result_key(row, judge.identity) for row in ROWS["id"]]
    shown = [body["messages"][1]["content"] for body in server.requests]
    assert sum("the second source" in text for text in shown) == 1  # the context column
    assert SECRET_KEY not in json.dumps(judged)


def test_a_row_that_cannot_be_judged_gets_an_error_and_the_others_their_verdicts(
    keywords: str, server: JudgeServer
) -> None:
    answer = keyword_responder()
    server.responder = lambda body: (
        error_reply(400, "bad request")
        if "broken" in body["messages"][1]["content"]
        else answer(body)
    )
    judge = table_judge(keywords, server, columns={"output": "answer", "transcript": "run"})
    table = {
        "answer": ["verdict:pass", None, "broken", "verdict:fail", "verdict:pass"],
        "run": [None, None, None, None, "[{not json"],
    }

    judged = judge(table)

    assert judged["verdict"] == ["pass", "error", "error", "fail", "error"]
    assert judged["error"][0] is None and judged["reason"][1] is None
    assert judged["error"][1] == "not judged: row 1.output: is required"
    assert "400" in judged["error"][2]
    assert judged["error"][4].startswith("not judged: row 4.transcript: not JSON")
    assert judged["score"][1] is None
    assert len(server.requests) == 3  # the rows that were items, nothing else


def test_a_table_judge_pickles_without_the_key_and_judges_where_it_is_unpickled(
    keywords: str, server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = table_judge(keywords, server, votes=3, temperature=0.7, prefix="kw_")
    sent = pickle.dumps(judge)
    assert SECRET_KEY.encode() not in sent
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-workers-own-key")

    worker = pickle.loads(sent)
    judged = worker({"id": ["a"], "answer": ["verdict:fail"], "docs": ["x"]})

    assert worker.identity == judge.identity and worker.identity[2] == 3
    assert judged["kw_verdict"] == ["fail"]
    assert judged["kw_result_key"] == judge.result_keys(
        {"id": ["a"], "answer": ["y"], "docs": ["z"]}
    )
    assert server.headers[-1]["authorization"] == "Bearer sk-the-workers-own-key"


def test_a_worker_without_a_key_gives_every_row_an_error_naming_it(
    keywords: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    sent = pickle.dumps(TableJudge(keywords, {"output": "answer"}, model="judge-model"))
    monkeypatch.delenv("OPENAI_API_KEY")

    judged = pickle.loads(sent)({"answer": ["one", "two"]})

    assert judged["verdict"] == ["error", "error"]
    assert all("OPENAI_API_KEY" in error for error in judged["error"])
    assert all(SECRET_KEY not in result for result in judged["result"])


def test_a_worker_that_digests_the_rubric_otherwise_refuses_it(
    keywords: str, server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent = pickle.dumps(table_judge(keywords, server))
    monkeypatch.setattr(rubric_module, "judged_digest", lambda *parts: "0" * 64)  # another version

    with pytest.raises(RubricError, match="install the same rubriclib on every worker"):
        pickle.loads(sent)
    assert server.requests == []


def test_resuming_judges_only_the_rows_without_a_verdict(
    keywords: str, server: JudgeServer
) -> None:
    judge = table_judge(keywords, server, columns={"output": "answer"})
    first = judge({"answer": ["verdict:pass", "verdict:text", "verdict:fail"]})
    assert first["verdict"] == ["pass", "error", "fail"]  # a judge that answers in text

    grown = {"answer": ["verdict:pass", "verdict:text", "verdict:fail", "verdict:pass new"]}
    left = judge.unjudged(grown, first)

    assert left == {"answer": ["verdict:text", "verdict:pass new"]}
    other_model = table_judge(keywords, server, columns={"output": "answer"}, model="other")
    assert other_model.unjudged(grown, first) == grown  # another judge's results count for none


def test_two_judges_share_a_table_by_prefix_and_a_clash_is_refused(
    keywords: str, server: JudgeServer
) -> None:
    first = table_judge(keywords, server, columns={"output": "answer"})
    second = table_judge(keywords, server, columns={"output": "answer"}, prefix="again_")
    judged = second(first({"answer": ["verdict:pass"]}))

    assert judged["verdict"] == judged["again_verdict"] == ["pass"]
    with pytest.raises(JudgeConfigError, match="already has the column 'verdict'"):
        first(judged)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"columns": {"answer": "output"}}, "columns: 'answer' is no item field"),
        ({"columns": {"context": "docs"}}, "columns: name the output's column"),
        ({"votes": 0}, "votes: "),
        ({"colour": "blue"}, "colour: "),
        ({"pacing": "spark"}, "pacing must be 'batch' or 'ray', not 'spark'"),
    ],
)
def test_settings_that_cannot_be_used_are_refused_when_it_is_made(
    keywords: str, server: JudgeServer, arguments: dict[str, Any], message: str
) -> None:
    with pytest.raises(JudgeConfigError, match=message):
        table_judge(keywords, server, **arguments)


def test_a_batch_without_a_named_column_or_of_no_table_kind_is_refused(
    keywords: str, server: JudgeServer
) -> None:
    judge = table_judge(keywords, server)
    with pytest.raises(JudgeConfigError, match=r"no column 'docs' \(columns: id, answer\)"):
        judge({"id": ["a"], "answer": ["verdict:pass"]})
    with pytest.raises(TypeError, match="one length"):
        judge({"id": ["a"], "answer": ["x", "y"], "docs": ["z"]})
    with pytest.raises(TypeError, match="a pandas DataFrame, a pyarrow Table or a dict"):
        judge([{"answer": "x"}])
    assert server.requests == []


def test_judging_a_dict_needs_neither_pandas_nor_pyarrow(
    keywords: str, server: JudgeServer
) -> None:
    table_judge(keywords, server)({name: values[:1] for name, values in ROWS.items()})
    assert "pandas" not in sys.modules and "pyarrow" not in sys.modules

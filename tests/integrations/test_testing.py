"""Assertions for test suites, called directly against the scripted server (the pytest plugin
that uses them runs in tests/test_pytest_plugin.py): a pass returns the result, a fail raises
RubricFailed, no verdict raises RubricJudgeError and never passes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import VALID_RUBRIC, judged, keyword_responder
from judge_server import JudgeServer, tool_reply

from rubriclib.integrations.testing import (
    RubricFailed,
    RubricJudgeError,
    assert_rubric,
    describe,
    score_text,
    set_default_judge,
)
from rubriclib.judging.judge import Judge
from rubriclib.rubrics.rubric import Rubric


@pytest.fixture
def keyword_judge(judge: Judge, judge_server: JudgeServer) -> Judge:
    judge_server.responder = keyword_responder()
    return judge


@pytest.fixture
def no_default_judge() -> Iterator[None]:
    previous = set_default_judge(None)
    yield
    set_default_judge(previous)


def test_a_pass_returns_the_result(keyword_judge: Judge, rubric: Rubric) -> None:
    result = assert_rubric(rubric, "verdict:pass", judge=keyword_judge, input="q")
    assert result.verdict == "pass" and result.reason == "scripted set_grade_pass"


def test_a_fail_raises_rubric_failed_saying_verdict_reason_judge_and_output(
    keyword_judge: Judge, rubric: Rubric
) -> None:
    with pytest.raises(RubricFailed) as failed:
        assert_rubric(rubric, "verdict:fail", judge=keyword_judge)
    assert failed.value.result.verdict == "fail"
    assert str(failed.value).splitlines() == [
        "tiny@1.2.3 gave verdict fail: scripted set_grade_fail",
        f"  judge: judge-model at {keyword_judge.endpoint}",
        "  output: 'verdict:fail'",
    ]


def test_no_verdict_is_a_judge_error_and_no_assertion_error(
    keyword_judge: Judge, rubric: Rubric
) -> None:
    with pytest.raises(RubricJudgeError) as raised:
        assert_rubric(rubric, "verdict:text", judge=keyword_judge)
    assert not isinstance(raised.value, AssertionError)
    assert raised.value.result is not None and raised.value.result.verdict == "error"
    assert str(raised.value).startswith("tiny@1.2.3 gave no verdict (judge error): ")


def test_a_rubric_file_path_is_loaded(
    keyword_judge: Judge, write_file: Callable[..., Path]
) -> None:
    path = write_file("rubrics/tiny.md", VALID_RUBRIC)
    assert assert_rubric(path, "verdict:pass", judge=keyword_judge).verdict == "pass"
    assert assert_rubric(str(path), "verdict:pass", judge=keyword_judge).verdict == "pass"


def test_the_default_judge_is_used_when_none_is_passed_and_can_be_put_back(
    keyword_judge: Judge, rubric: Rubric, no_default_judge: None
) -> None:
    asked = []

    def provider() -> Judge:
        asked.append(True)
        return keyword_judge

    assert set_default_judge(provider) is None
    assert assert_rubric(rubric, "verdict:pass").verdict == "pass" and asked == [True]
    assert set_default_judge(None) is provider


def test_a_scored_fail_shows_the_score_and_the_threshold(
    judge: Judge, judge_server: JudgeServer, scored: Rubric
) -> None:
    judge_server.script(tool_reply("set_grade_score", {"score": 3, "reason": "thin"}))
    with pytest.raises(RubricFailed) as failed:
        assert_rubric(scored, "an answer", judge=judge)
    assert str(failed.value).splitlines()[0] == (
        "scored@1.0.0 gave verdict fail (score 3/5, passes at 4): thin"
    )


def test_a_long_output_is_cut_in_the_message(judge: Judge, rubric: Rubric) -> None:
    result = judged(rubric, "fail")
    shown = describe(rubric, result, judge, "x" * 301).splitlines()[-1]
    assert shown == f"  output: {'x' * 300 + '...'!r}"
    assert len(describe(rubric, result, judge).splitlines()) == 2  # no output given, none shown
    assert score_text(rubric, result) == ""

"""A row letta grades turn by turn as one result: every turn must pass, the score is the mean,
an errored turn makes the whole an error."""

from __future__ import annotations

import pytest

from rubriclib.evals.letta.scoring import combine_turns
from rubriclib.judging.result import GradeResult, judge_details, make_result
from rubriclib.rubrics.rubric import Rubric


def judged(rubric: Rubric, verdict: str, reason: str = "r") -> GradeResult:
    details = judge_details("m", "required", 1, 10, {"prompt_tokens": 5, "completion_tokens": 1})
    return make_result(rubric, details, verdict, reason, None)  # type: ignore[arg-type]


def test_turns_pass_only_together_and_score_by_the_mean(rubric: Rubric) -> None:
    turns = [judged(rubric, "pass"), judged(rubric, "fail", "off topic"), judged(rubric, "pass")]
    result = combine_turns(rubric, turns)
    assert (result.verdict, result.score) == ("fail", pytest.approx(2 / 3))
    assert result.reason == "2/3 turns passed; turn 1: off topic"
    assert [turn["verdict"] for turn in result.details["turns"]] == ["pass", "fail", "pass"]
    errored = combine_turns(rubric, [judged(rubric, "pass"), judged(rubric, "error", "HTTP 500")])
    assert (errored.verdict, errored.reason) == ("error", "turn 1 of 2: HTTP 500")

"""The judges a batch run sends with: each distinct judge built again once, with no retries and
a limit that outlasts a batch's window; a panel refused in this one place."""

from __future__ import annotations

import pytest

from rubriclib.batch.files import Recorder
from rubriclib.batch.judges import BATCH_TOTAL_TIMEOUT, batch_judges
from rubriclib.errors import JudgeConfigError
from rubriclib.judging.judge import Judge
from rubriclib.judging.panel import Panel


def test_each_distinct_judge_is_built_again_once_for_the_batch(judge: Judge) -> None:
    recorder = Recorder()
    built = batch_judges({"a": judge, "b": judge}, recorder)
    assert built["a"] is built["b"] and built["a"] is not judge
    assert built["a"].transport is recorder and judge.transport is not recorder
    assert (built["a"].max_retries, built["a"].total_timeout) == (0, BATCH_TOTAL_TIMEOUT)
    assert (judge.max_retries, judge.total_timeout) != (0, BATCH_TOTAL_TIMEOUT)
    made: list[Judge] = []
    per_judge = batch_judges({"a": judge}, lambda one: made.append(one) or Recorder())
    assert made == [judge] and isinstance(per_judge["a"].transport, Recorder)


def test_a_panel_is_refused_before_any_judge_is_built(judge: Judge) -> None:
    made: list[Judge] = []
    with pytest.raises(JudgeConfigError, match="a judge panel cannot be judged through a batch"):
        batch_judges({"a": judge, "p": Panel([judge])}, lambda one: made.append(one) or Recorder())
    assert made == []

"""What an eval file says, read: the Eval, its graders and their judge settings, the gate."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rubriclib.config import resolve
from rubriclib.evals.datasets import Dataset
from rubriclib.evals.letta.extractors import Extractor
from rubriclib.item import Item
from rubriclib.judging import Rule, TargetSettings, display_url
from rubriclib.rubrics import Rubric
from rubriclib.settings import JudgeSettings

Metric = Literal["pass_rate", "mean_score"]
OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}


def model_in_use(model: str | None, *, by_flag: bool = False) -> str:
    """For `--dry-run`: the model a judge given `model` (the eval file's, or with `by_flag`
    --model's) sends, resolved as `Judge` resolves it (`config.resolve`), and where it came
    from when the eval file does not say: `(--model)`, the variable, the config file or
    `(default)`."""
    setting = resolve("model", model or None)
    if setting.origin == "flag":
        return f"{setting.value} (--model)" if by_flag else str(setting.value)
    return f"{setting.value} ({setting.origin.removeprefix('env ')})"


@dataclass(frozen=True)
class PanelSettings:
    """A grader's judge panel: each member's settings (the eval's `judge:` defaults and the
    grader's votes under its own) and the rule that combines their verdicts."""

    judges: tuple[JudgeSettings, ...]
    aggregate: Rule = "majority"

    def plan_lines(
        self, judgments: int, votes: int | None = None, pairwise: bool = False
    ) -> list[str]:
        """For `--dry-run`: the rule, then each member with the requests it would get for
        `judgments` judgments (`votes`, from the command line, wins over each member's)."""
        lines = [
            f"{self.aggregate} of {len(self.judges)} judges (--model does not replace a "
            "panel's judges; --votes applies to each)"
        ]
        for member in self.judges:
            asked = votes or member.votes or 1
            requests = judgments * asked * (2 if pairwise else 1)
            where = f" at {display_url(member.base_url)}" if member.base_url else ""
            each = f" x {asked} votes" if asked > 1 else ""
            each += " x 2 orders" if pairwise else ""
            bound = "up to " if asked > 1 else ""
            lines.append(
                f"{model_in_use(member.model)}{where}: {judgments} judgment(s)"
                f"{each} = {bound}{requests} request(s)"
            )
        return lines


@dataclass(frozen=True)
class GraderEntry:
    """One entry of an eval file's `graders:`: a name, the rubric it judges by, and its judge
    settings (or, with `panel`, its judge panel; `judge` then holds the defaults the members
    started from). Not the engine's `Grader`: setup builds one of those from it."""

    name: str
    rubric: Rubric
    judge: JudgeSettings
    panel: PanelSettings | None = None
    task: str | None = None
    """A waza task's grader judges only that task's rows: those whose `task` (else `id`) is
    this; None judges every row."""
    extractor: Extractor | None = None
    """A letta-evals grader's extractor: what it takes from a row's recorded messages."""

    def judge_model(self, model: str | None = None) -> str:
        """For `--dry-run`: the model this grader's judge sends, `model` (--model) over the
        eval file's as a run lays them (`setup.ready_run`), with where it came from
        (`model_in_use`)."""
        return model_in_use(self.judge.merge(model=model).model, by_flag=model is not None)

    def judges(self, item: Item) -> bool:
        """Whether this grader judges the row `item`."""
        return self.task is None or str(item.metadata.get("task", item.id)) == self.task


@dataclass(frozen=True)
class Condition:
    """One gate condition: a grader's metric compared with a value."""

    grader: str
    metric: Metric
    op: str
    value: float

    def __str__(self) -> str:
        return f"{self.grader} {self.metric} {self.op} {self.value:g}"

    def holds(self, value: float) -> bool:
        return OPERATORS[self.op](value, self.value)


@dataclass(frozen=True)
class Eval:
    """An eval file, read: what to judge, by which graders, and when the run passes."""

    name: str
    path: Path
    shape: Literal["rubriclib", "waza", "letta"]
    dataset: Dataset
    graders: list[GraderEntry]
    gate: list[Condition]
    description: str | None = None
    skipped: list[str] = field(default_factory=list)
    """One line per part of the file that is not run (graders of other kinds, agent tasks)."""
    concurrency: int | None = None
    requests_per_minute: float | None = None
    max_prompt_tokens: int | None = None
    limit: int | None = None
    reward: str | None = None
    """letta-evals' `reward.metric_key`: the grader whose mean score is the run's reward."""
    target: TargetSettings | None = None
    """The model that writes each row's output from its input, when the rows have none."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

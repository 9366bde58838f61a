"""An eval made ready to run: loaded, its dataset checked, refused when the lock or a batch
forbids it (`prepare`), before any key is read or request sent; then its judges (or panels)
built from its judge settings, and its target model."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rubriclib.errors import BatchRefused, EvalError, Problem, RubricError
from rubriclib.evals.formats import Eval, Grader, JudgeSettings
from rubriclib.evals.judgments import letta_row_checker
from rubriclib.judging.checklist_protocol import no_checklist

if TYPE_CHECKING:
    from rubriclib.batch.api import BatchRun
    from rubriclib.evals.datasets import Row
    from rubriclib.judging.grader import Grader as AnyJudge  # `Grader` here is an eval's grader
    from rubriclib.judging.judge import Judge
    from rubriclib.judging.panel import Panel
    from rubriclib.judging.target import Target


@dataclass(frozen=True)
class Prepared:
    """An eval checked and ready to run, and the rows of its dataset."""

    eval: Eval
    rows: int

    def judgments(self, limit: int | None = None) -> int:
        """Row x grader judgments a run makes within `limit` (else the eval's own limit)."""
        rows = min(self.rows, limit or self.eval.limit or self.rows)
        return rows * len(self.eval.graders)


def prepare(
    eval_file: str | Path,
    dataset: str | Path | None = None,
    *,
    frozen: bool = False,
    batch: str | None = None,
    checklist: bool = False,
) -> Prepared:
    """Load an eval (with `dataset` for its rows) and check it whole before any key is read,
    request sent or state file touched: with `frozen`, RubricError when a rubric differs from
    rubriclib.lock; EvalError for every bad row; with `batch` (what judges through batches,
    named in each reason), BatchRefused when the eval asks what a batch cannot do; with
    `checklist` (--checklist), EvalError naming each grader whose rubric has no checklist."""
    from rubriclib.evals.formats import load_eval  # looked up at each call (tests replace it)

    ev = load_eval(eval_file, dataset)
    if frozen:
        from rubriclib.rubrics.lockfile import frozen_problems

        locked = [g.rubric for g in ev.graders if not g.rubric.source.startswith("prompt:")]
        if problems := frozen_problems(locked):
            raise RubricError(problems)
    problems, rows = check_dataset(ev)
    if checklist:
        problems = [
            Problem(
                str(ev.path),
                f"graders.{grader.name}",
                f"--checklist: {no_checklist(grader.rubric)}",
            )
            for grader in ev.graders
            if not grader.rubric.checklist
        ] + problems
    if problems:
        raise EvalError(problems)
    if batch is not None and (refusals := batch_refusals(ev, batch)):
        raise BatchRefused(refusals)
    return Prepared(ev, rows)


def check_dataset(ev: Eval) -> tuple[list[Problem], int]:
    """Every problem of the eval's rows, with what keeps a letta prompt from being filled for a
    row, and the number of rows: all found in one read, before any request. A dataset that
    gives no grader a row to judge is a problem too: it would pass any gate."""
    letta = letta_row_checker(ev.graders)
    judged = 0

    def row_problems(row: Row) -> list[Problem]:
        nonlocal judged
        judged += any(grader.judges(row.item) for grader in ev.graders)
        return letta(row) if letta is not None else []

    problems, rows = ev.dataset.check(row_problems)
    if not problems and not judged:
        where = (str(ev.dataset.path), "dataset") if ev.dataset.path else (str(ev.path), "rows")
        why = "no rows" if not rows else f"{rows} row(s), none for any grader's task"
        problems.append(Problem(*where, f"{why}, nothing to judge"))
    return problems, rows


def batch_refusals(ev: Eval, what: str) -> list[str]:
    """Why an eval cannot be judged through batches (`what` names the command), one line
    each: checked before any request and before a state file is touched."""
    problems = []
    if ev.target is not None:
        problems.append(
            f"{what}: this eval's outputs come from a target model (target: {ev.target.model}); "
            "run it live, or judge recorded outputs (an eval without target:)"
        )
    for grader in ev.graders:
        if grader.panel is not None:
            problems.append(
                f"{what}: grader {grader.name}: a judge panel cannot be judged through a batch "
                "yet; run it live"
            )
    return problems


OFFLINE_ENDPOINT = "http://offline-batch-file.invalid/v1"
"""The endpoint offline judges (batch prepare / collect) name in their requests' custom_ids and
cache keys, whatever OPENAI_BASE_URL says: a file prepared here is collected anywhere."""


def make_judges(
    ev: Eval,
    model: str | None = None,
    cache: bool | str | os.PathLike[str] = False,
    votes: int | None = None,
    *,
    offline: bool = False,
    capabilities: bool | str | os.PathLike[str] = False,
    checklist: bool = False,
) -> dict[str, AnyJudge]:
    """One Judge (or Panel) per grader (graders with the same settings share one); `model`,
    `votes` and `checklist` (checklist mode) override every grader's; `capabilities` is where
    endpoint quirks are remembered (see Judge). Credentials come only from the environment;
    `offline` judges never send (batch files), so they need none, are given none, and all
    name OFFLINE_ENDPOINT."""
    from rubriclib.judging.judge import Judge

    built: dict[JudgeSettings, Judge] = {}
    judges: dict[str, AnyJudge] = {}

    def judge_for(settings: JudgeSettings) -> Judge:
        if settings not in built:
            if offline:
                where = settings.merge(base_url=OFFLINE_ENDPOINT)
                built[settings] = Judge.from_settings(where, cache=cache, api_key="offline-no-key")
            else:
                built[settings] = Judge.from_settings(
                    settings, cache=cache, capabilities=capabilities
                )
        return built[settings]

    mode = True if checklist else None  # the flag turns checklist mode on, never off
    for grader in ev.graders:
        if grader.panel is not None:  # `model` names one judge: a panel keeps its members
            judges[grader.name] = _make_panel(grader, judge_for, votes, ev, mode)
            continue
        settings = grader.judge.merge(model=model, votes=votes, checklist=mode)
        judges[grader.name] = judge_for(settings)
    return judges


def _make_panel(
    grader: Grader,
    judge_for: Callable[[JudgeSettings], Judge],
    votes: int | None,
    ev: Eval,
    mode: bool | None,
) -> Panel:
    """A grader's judge panel (`votes` and checklist `mode` override each member's)."""
    from rubriclib.judging.panel import Panel

    assert grader.panel is not None
    judges = grader.panel.judges
    members = [judge_for(member.merge(votes=votes, checklist=mode)) for member in judges]
    return Panel(members, grader.panel.aggregate, requests_per_minute=ev.requests_per_minute)


def make_target(ev: Eval) -> Target | None:
    """The eval's target model, if it has one (a missing key is a JudgeConfigError here)."""
    from rubriclib.judging.target import Target

    return Target(ev.target) if ev.target is not None else None


def open_eval_batch(
    ev: Eval,
    judges: Mapping[str, AnyJudge],
    results: Path,
    resume: bool,
    poll_seconds: float,
    progress: Callable[[str], None],
) -> BatchRun:
    """`eval --batch`: the eval's judges rebuilt to send through the Batch API (the state file
    beside `results`), each batch recording the variable its key came from."""
    from rubriclib.batch.api import open_batch_run

    return open_batch_run(
        judges,
        results,
        resume=resume,
        poll_seconds=poll_seconds,
        progress=progress,
        api_key_envs={g.name: g.judge.api_key_env for g in ev.graders if g.judge.api_key_env},
    )

"""An eval started from Python: `run_eval` and its async twin `arun_eval`, an `Eval` checked and
made ready (`setup`), then judged by `run.run_ready`."""

from __future__ import annotations

import os
from pathlib import Path

from rubriclib.evals.formats import Eval
from rubriclib.evals.run import EvalReport, run_ready
from rubriclib.evals.setup import ReadyRun, check_eval, ready_run
from rubriclib.judging import run_to_end


async def arun_eval(
    ev: Eval,
    *,
    model: str | None = None,
    cache: bool | str | os.PathLike[str] = False,
    concurrency: int | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    force: bool = False,
    limit: int | None = None,
    votes: int | None = None,
) -> EvalReport:
    """The async form of `run_eval`, in the caller's event loop."""
    return await run_ready(_ready(ev, model, cache, concurrency, out, resume, force, limit, votes))


def run_eval(
    ev: Eval,
    *,
    model: str | None = None,
    cache: bool | str | os.PathLike[str] = False,
    concurrency: int | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    force: bool = False,
    limit: int | None = None,
    votes: int | None = None,
) -> EvalReport:
    """Judge every row of `ev` with every grader through the engine; every row is checked
    first (`setup.check_eval`), so a problem is an EvalError with no request sent. Called from
    code already running an event loop (a notebook), the run gets a loop of its own in a worker
    thread.

    Args:
        ev: The eval, from `load_eval`.
        model: The judge model for every grader, over the eval file's.
        cache: The verdict cache: False (off), True (the user cache folder) or a folder.
        concurrency: Judgments in flight at once, over the eval file's.
        out: A results file (JSONL), a line written as each result finishes. One that
            already holds lines is an EvalError (no request sent) unless `resume` or `force`.
        resume: Continue `out`: keep the current results in it (the last line of each row
            and grader) whose rubric digest, judge model and votes still match, judge only the
            rest and append their lines; every line already there stays.
        force: Let the run replace an `out` that holds lines (once its first result is in).
        limit: Judge only the first `limit` rows.
        votes: Votes per judgment for every grader, over the eval file's.

    Returns:
        The run's report: each grader's statistics, the gate, the judge errors by row.

    Raises:
        EvalError: A bad row, or an `out` that holds results without `resume` or `force`.
        JudgeConfigError: A grader's judge that cannot be built (no key for its endpoint).
    """
    ready = _ready(ev, model, cache, concurrency, out, resume, force, limit, votes)
    return run_to_end(lambda: run_ready(ready))


def _ready(
    ev: Eval,
    model: str | None,
    cache: bool | str | os.PathLike[str],
    concurrency: int | None,
    out: str | Path | None,
    resume: bool,
    force: bool,
    limit: int | None,
    votes: int | None,
) -> ReadyRun:
    """`ev` checked and made ready as `run_eval`'s arguments say."""
    return ready_run(
        check_eval(ev),
        model=model,
        cache=cache,
        votes=votes,
        limit=limit,
        concurrency=concurrency,
        out=Path(out) if out is not None else None,
        resume=resume,
        force=force,
    )

"""What `rubriclib test-goldens`, `calibrate` and `align` start, started from Python: every input
checked before any request (the errors the commands print), the run made on the engine, and
the report the command prints returned (`reports` turns it into text). Each has an async form
for the caller's event loop; the sync form runs that to its end from sync code, a notebook's
included (`run_to_end`). Nothing here prints or writes a file."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rubriclib.errors import JudgeConfigError, RubricError
from rubriclib.judging import run_to_end
from rubriclib.measure.align import refuse_to_align
from rubriclib.measure.align_run import Alignment, AlignSettings, run_alignment
from rubriclib.measure.calibration import Calibration, load_labels, run_calibration
from rubriclib.measure.goldens import GoldensReport, plan_run, run_goldens
from rubriclib.measure.label_rows import LabelledRow
from rubriclib.rubrics import Rubric
from rubriclib.settings import JudgeSettings, checklist_argument

if TYPE_CHECKING:
    from rubriclib.judging import Grader


def test_goldens(
    rubrics: str | Rubric | Sequence[str | Rubric] = (),
    *,
    judge: Grader | JudgeSettings | None = None,
    goldens_file: str | os.PathLike[str] | None = None,
    trials: int = 1,
    concurrency: int | None = None,
    requests_per_minute: float | None = None,
    cache: bool | str | os.PathLike[str] = False,
    frozen: bool = False,
) -> GoldensReport:
    """Judge every golden of each rubric `trials` times: `rubriclib test-goldens` from Python.

    Every input is checked before any request; an endpoint's failure is a judgment's verdict
    `error` in the report, never raised. Called from code already running an event loop (a
    notebook), the run gets a loop of its own in a worker thread; `atest_goldens` is the async
    form.

    Args:
        rubrics: A rubric reference (a name, a pin such as "groundedness@^1", a path) or a
            Rubric, or several; none (the default) tests every resolvable rubric.
        judge: A Judge or a Panel, JudgeSettings to build a Judge from (`model`, `votes`,
            `temperature`...), or None for a Judge from the environment and the project's
            config. The run closes its connections when it ends.
        goldens_file: A YAML file of extra goldens, added to every rubric of the run they fit
            (those with `expected_winner` to pairwise rubrics, the others to the rest).
        trials: How many times every golden is judged (for agreement statistics).
        concurrency: Judgments in flight at once; None takes the project's config, else 8.
        requests_per_minute: At most this many request starts a minute (None: no cap).
        cache: The verdict cache of a Judge built here: False (off), True (the user cache
            folder) or a folder. A Judge given keeps its own.
        frozen: Refuse to run when a rubric's version or digest differs from rubriclib.lock.

    Returns:
        The run's report: per rubric each golden's outcome, accuracy, kappa and counts; its
        `status` is `ok`, `regression` (a judged golden missed) or `undecided` (only judge
        errors kept goldens from being met).

    Raises:
        RubricError: A bad reference, rubric or golden (every problem at once), or with
            `frozen`, a rubric the lock does not hold as it is.
        JudgeConfigError: A judge that cannot be built (no key), or whose checklist mode
            cannot judge a rubric of the run.
        ValueError: `trials`, `concurrency` or `requests_per_minute` out of range.
    """
    return run_to_end(
        lambda: atest_goldens(
            rubrics,
            judge=judge,
            goldens_file=goldens_file,
            trials=trials,
            concurrency=concurrency,
            requests_per_minute=requests_per_minute,
            cache=cache,
            frozen=frozen,
        )
    )


async def atest_goldens(
    rubrics: str | Rubric | Sequence[str | Rubric] = (),
    *,
    judge: Grader | JudgeSettings | None = None,
    goldens_file: str | os.PathLike[str] | None = None,
    trials: int = 1,
    concurrency: int | None = None,
    requests_per_minute: float | None = None,
    cache: bool | str | os.PathLike[str] = False,
    frozen: bool = False,
) -> GoldensReport:
    """The async form of `test_goldens`, run in the caller's event loop (same arguments)."""
    in_flight = _checked_pace(concurrency, requests_per_minute)
    _at_least("trials", trials, 1)
    named = [rubrics] if isinstance(rubrics, str | Rubric) else list(rubrics)
    plan = plan_run(named, os.fspath(goldens_file) if goldens_file else None, trials)
    checked = [rubric for rubric, _ in plan.rubrics]
    _refuse_unlocked(checked, frozen)
    grader = _grader(judge, cache, checked)
    try:
        return await run_goldens(
            grader, plan.rubrics, trials, in_flight, requests_per_minute=requests_per_minute
        )
    finally:
        await grader.aclose()


# pytest collects a function named test_* that a test module imports: never these
test_goldens.__test__ = atest_goldens.__test__ = False  # type: ignore[attr-defined]


def calibrate(
    rubric: str | Rubric,
    labels: str | os.PathLike[str],
    *,
    judge: Grader | JudgeSettings | None = None,
    trials: int = 1,
    concurrency: int | None = None,
    requests_per_minute: float | None = None,
    cache: bool | str | os.PathLike[str] = False,
    frozen: bool = False,
) -> Calibration:
    """Judge human-labelled rows and measure how well the judge agrees with the people who
    labelled them: `rubriclib calibrate` from Python.

    Every input is checked before any request; an endpoint's failure is a row's verdict
    `error` in the report (counted apart, left out of every number), never raised. Called from
    code already running an event loop, the run gets a loop of its own in a worker thread;
    `acalibrate` is the async form.

    Args:
        rubric: A rubric reference (a name, a pin, a path) or a Rubric; not a pairwise one.
        labels: The labels file (.jsonl, .csv, .json or .yaml): the judged fields and a human
            `label` (pass or fail; on a labels rubric one of its label names) or, for a 1-5
            rubric, a `score`; optional `tags` group rows for the breakdown.
        judge: A Judge or a Panel, JudgeSettings to build a Judge from, or None for a Judge
            from the environment and the project's config. The run closes its connections
            when it ends.
        trials: How many times every row is judged: each judgment counts in the agreement
            numbers, and above 1 `flip_rates` measures how steady the judge was.
        concurrency: Judgments in flight at once; None takes the project's config, else 8.
        requests_per_minute: At most this many request starts a minute (None: no cap).
        cache: The verdict cache of a Judge built here: False (off), True (the user cache
            folder) or a folder. A Judge given keeps its own.
        frozen: Refuse to run when the rubric's version or digest differs from rubriclib.lock.

    Returns:
        The calibration: every row judged (`trials` times each), `overall` agreement
        (accuracy, Cohen's kappa, their bootstrap intervals, the confusion matrix), `by_tag`,
        `disagreements` and `errors`, `flip_rates`; `all_errors` when every judgment ended
        in a judge error.

    Raises:
        RubricError: A bad reference or rubric, or with `frozen`, a rubric the lock does not
            hold as it is.
        EvalError: A bad labels file (every bad row and label at once, by line and field).
        JudgeConfigError: A judge that cannot be built (no key), or whose checklist mode
            cannot judge the rubric.
        ValueError: `trials`, `concurrency` or `requests_per_minute` out of range.
    """
    return run_to_end(
        lambda: acalibrate(
            rubric,
            labels,
            judge=judge,
            trials=trials,
            concurrency=concurrency,
            requests_per_minute=requests_per_minute,
            cache=cache,
            frozen=frozen,
        )
    )


async def acalibrate(
    rubric: str | Rubric,
    labels: str | os.PathLike[str],
    *,
    judge: Grader | JudgeSettings | None = None,
    trials: int = 1,
    concurrency: int | None = None,
    requests_per_minute: float | None = None,
    cache: bool | str | os.PathLike[str] = False,
    frozen: bool = False,
) -> Calibration:
    """The async form of `calibrate`, run in the caller's event loop (same arguments)."""
    in_flight = _checked_pace(concurrency, requests_per_minute)
    _at_least("trials", trials, 1)
    resolved, rows = _labelled(rubric, labels, frozen)
    grader = _grader(judge, cache, [resolved])
    try:
        return await run_calibration(
            grader,
            resolved,
            rows,
            os.fspath(labels),
            trials=trials,
            concurrency=in_flight,
            requests_per_minute=requests_per_minute,
        )
    finally:
        await grader.aclose()


def align(
    rubric: str | Rubric,
    labels: str | os.PathLike[str],
    *,
    judge: Grader | JudgeSettings | None = None,
    examples: int = 4,
    folds: int = 5,
    optimizer_model: str | None = None,
    concurrency: int | None = None,
    requests_per_minute: float | None = None,
    cache: bool | str | os.PathLike[str] = False,
    frozen: bool = False,
) -> Alignment:
    """Learn a rubric's next revision from human labels and measure its gain held out:
    `rubriclib align` from Python. Nothing is written: an accepted revision's text is
    `alignment.final.text`, for you to review and write where it belongs.

    Every row is judged with the rubric as it is, then (K-fold cross-validation) by a revision
    learned from the other folds' rows alone; `accepted` when the paired bootstrap 95%
    interval of the per-row gain is above 0 and the revision from every row shows something.
    An endpoint's failure is a judgment's verdict `error` (left out of the comparison, counted),
    never raised. Called from code already running an event loop, the run gets a loop of its
    own in a worker thread; `aalign` is the async form.

    Args:
        rubric: A rubric reference (a name, a pin, a path) or a Rubric read from its file.
        labels: The labels file `calibrate` reads: at least 20 rows, 4 of the rarer verdict.
        judge: A Judge or a Panel (a Judge with `optimizer_model`), JudgeSettings to build a
            Judge from, or None for a Judge from the environment and the project's config.
            The run closes its connections when it ends.
        examples: Worked examples a revision shows at most (0: guideline lines only, with
            `optimizer_model`).
        folds: Cross-validation folds (at least 2, at most one per row).
        optimizer_model: Also ask this model, at the judge's endpoint, for at most three
            guideline lines learned from the disagreements.
        concurrency: Requests in flight at once to the endpoint over the whole run; None takes
            the project's config, else 8.
        requests_per_minute: At most this many request starts a minute over the whole run,
            optimizer calls included (None: no cap).
        cache: The verdict cache of a Judge built here: False (off), True (the user cache
            folder) or a folder. A Judge given keeps its own.
        frozen: Refuse to run when the rubric's version or digest differs from rubriclib.lock.

    Returns:
        The alignment: agreement `before` and held out `after`, each fold, the paired
        `comparison`, `accepted` (and the `rejection` when not), the `final` revision (its
        `text` and the `rubric` it reads as) and the requests and tokens spent.

    Raises:
        RubricError: A bad reference, a rubric not read from a file, or with `frozen`, a
            rubric the lock does not hold as it is.
        EvalError: A bad labels file, too few labels to measure a gain, more folds than rows,
            or (without `optimizer_model`) no row that can be a worked example.
        JudgeConfigError: A judge that cannot be built (no key), whose checklist mode cannot
            judge the rubric, or a Panel given with `optimizer_model`.
        EndpointError: The optimizer model could not be asked (the key redacted).
        ValueError: `examples`, `folds`, `concurrency` or `requests_per_minute` out of range,
            or `examples=0` without `optimizer_model`.
    """
    return run_to_end(
        lambda: aalign(
            rubric,
            labels,
            judge=judge,
            examples=examples,
            folds=folds,
            optimizer_model=optimizer_model,
            concurrency=concurrency,
            requests_per_minute=requests_per_minute,
            cache=cache,
            frozen=frozen,
        )
    )


async def aalign(
    rubric: str | Rubric,
    labels: str | os.PathLike[str],
    *,
    judge: Grader | JudgeSettings | None = None,
    examples: int = 4,
    folds: int = 5,
    optimizer_model: str | None = None,
    concurrency: int | None = None,
    requests_per_minute: float | None = None,
    cache: bool | str | os.PathLike[str] = False,
    frozen: bool = False,
) -> Alignment:
    """The async form of `align`, run in the caller's event loop (same arguments)."""
    from rubriclib.judging import EndpointError, Judge, redact
    from rubriclib.measure.align_guidelines import guidelines_proposer

    in_flight = _checked_pace(concurrency, requests_per_minute)
    _at_least("examples", examples, 0)
    _at_least("folds", folds, 2)
    if examples == 0 and optimizer_model is None:
        raise ValueError("examples=0: nothing to learn without optimizer_model")
    resolved, rows = _labelled(rubric, labels, frozen)
    refuse_to_align(resolved, rows, os.fspath(labels), folds, optimizer_model is not None)
    grader = _grader(judge, cache, [resolved])
    propose = None
    if optimizer_model is not None:
        if not isinstance(grader, Judge):
            raise JudgeConfigError("optimizer_model is asked at a Judge's endpoint: pass a Judge")
        propose = guidelines_proposer(grader, optimizer_model)
    settings = AlignSettings(examples, folds, in_flight, requests_per_minute)
    try:
        return await run_alignment(
            grader, resolved, rows, os.fspath(labels), settings, propose=propose
        )
    except EndpointError as error:  # the optimizer's: a judgment's failure is its verdict
        key = grader.api_key if isinstance(grader, Judge) else None
        failure = EndpointError(redact(str(error), key), status=error.status)
    finally:
        await grader.aclose()
    raise failure  # outside the handler: the error that held the key is not its context


def _labelled(
    rubric: str | Rubric, labels: str | os.PathLike[str], frozen: bool
) -> tuple[Rubric, list[LabelledRow]]:
    """The rubric (refused with `frozen` when the lock differs) and its labelled rows."""
    from rubriclib.rubrics import load_rubric

    resolved = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
    _refuse_unlocked([resolved], frozen)
    return resolved, load_labels(Path(labels), resolved)


def _refuse_unlocked(rubrics: list[Rubric], frozen: bool) -> None:
    """With `frozen`, a RubricError naming each rubric the lock does not hold as it is."""
    from rubriclib.rubrics import frozen_problems

    if frozen and (problems := frozen_problems(rubrics)):
        raise RubricError(problems)


def _grader(
    judge: Grader | JudgeSettings | None,
    cache: bool | str | os.PathLike[str],
    rubrics: list[Rubric],
) -> Grader:
    """The run's judge: `judge` itself, or a Judge built from settings (a missing key is a
    JudgeConfigError here); refused, before any request, when a judge of it asks a rubric's
    checklist that checklist mode cannot judge (naming the argument that asked for it)."""
    from rubriclib.judging import Judge, Panel, checklist_refused

    if judge is None or isinstance(judge, JudgeSettings):
        judge = Judge.from_settings(judge or JudgeSettings(), cache=cache)
    members = judge.judges if isinstance(judge, Panel) else [judge]
    refusals = [
        f"{checklist_argument(answers)}: {why}"
        for member in members
        if (answers := member.checklist_answers) is not None
        for rubric in rubrics
        if (why := checklist_refused(rubric, answers)) is not None
    ]
    if refusals:
        raise JudgeConfigError("\n".join(dict.fromkeys(refusals)))
    return judge


def _checked_pace(concurrency: int | None, requests_per_minute: float | None) -> int:
    """Judgments in flight (`concurrency`, else the config's, else 8), both numbers checked."""
    from rubriclib.config import resolve

    if concurrency is not None:
        _at_least("concurrency", concurrency, 1)
    in_flight = int(resolve("concurrency", concurrency).value)
    if requests_per_minute is not None and not requests_per_minute > 0:
        raise ValueError(f"requests_per_minute must be above 0, not {requests_per_minute!r}")
    return in_flight


def _at_least(name: str, value: int, least: int) -> None:
    """A ValueError naming the argument when `value` is no whole number of at least `least`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{name} must be a whole number of at least {least}, not {value!r}")

"""An eval made ready to run, in one place: loaded, its dataset checked, refused when the lock or
a batch forbids it (`prepare`, `check_eval`), before any key is read or request sent; then
(`ready_run`) its judges (or panels) built from its judge settings, its target model, and
everything else the run needs worked out, so that running it goes back for nothing."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubriclib.config import resolve
from rubriclib.errors import BatchRefused, EvalError, Problem, RubricError
from rubriclib.evals.formats import Eval, GraderEntry, JudgeSettings
from rubriclib.evals.judgments import letta_row_checker, row_rubric
from rubriclib.evals.plan import max_prompt_tokens
from rubriclib.evals.results import judge_identity, read_resumable
from rubriclib.files import holds_anything
from rubriclib.judging import checklist_refused
from rubriclib.settings import AnswerMode, Protocol, checklist_flag, checklist_mode

if TYPE_CHECKING:
    from rubriclib.batch import BatchRun
    from rubriclib.evals.datasets import Row
    from rubriclib.judging import Grader, Judge, Panel, Target


@dataclass(frozen=True)
class Prepared:
    """An eval checked, and the rows of its dataset: what `ready_run` makes runnable."""

    eval: Eval
    rows: int

    def rows_to_read(self, limit: int | None = None) -> int | None:
        """The rows a run reads: `limit`, else the eval's own limit (None: every row)."""
        return limit if limit is not None else self.eval.limit

    def planned_rows(self, limit: int | None = None) -> int:
        """The rows a run judges within `limit` (else the eval's own limit)."""
        read = self.rows_to_read(limit)
        return self.rows if read is None else min(self.rows, read)


@dataclass(frozen=True)
class ReadyRun:
    """An eval ready to run (`ready_run`): all the engine needs (`run.run_ready`), worked out
    before the first request."""

    eval: Eval
    rows: int
    """The rows the run sets out to judge: the dataset's, within the limit."""
    limit: int | None
    """The rows it reads (None: every row)."""
    judges: Mapping[str, Grader]
    """Each grader's judge (or panel), by grader name."""
    target: Target | None
    """The model that writes each row's output first, when the eval has one."""
    concurrency: int
    """Judgments in flight at once."""
    requests_per_minute: float | None
    """How far apart requests start (None: no spacing)."""
    out: Path | None = None
    """The results file the run writes (JSONL), when it writes one."""
    kept: Mapping[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """The lines of `out` a resumed run keeps, by row and grader (`results.read_resumable`)."""
    resume: bool = False
    """Whether the run continues `out` (appending to it) rather than replacing it."""
    settings: Mapping[str, JudgeSettings] = field(default_factory=dict)
    """Each grader's judge settings as the run lays them (flags over the eval file's), by
    grader name: what a judge made elsewhere (a Ray worker's) is made from."""
    cache: bool | str | os.PathLike[str] = False
    """The verdict cache its judges use (as `Judge(cache=...)` takes it)."""

    @property
    def judgments(self) -> int:
        """Row x grader judgments the run makes at most (its progress bar's length)."""
        return self.rows * len(self.eval.graders)

    def through(self, judges: Mapping[str, Grader], in_flight: int) -> ReadyRun:
        """The same run with `judges` whose requests go to a batch: `in_flight` judgments at
        once, with no requests-per-minute spacing (one wave of requests per batch)."""
        return replace(self, judges=judges, concurrency=in_flight, requests_per_minute=None)


def prepare(
    eval_file: str | Path,
    dataset: str | Path | None = None,
    *,
    frozen: bool = False,
    batch: str | None = None,
    checklist: AnswerMode | None = None,
) -> Prepared:
    """Load an eval (with `dataset` for its rows) and check it whole before any key is read,
    request sent or state file touched: with `frozen`, RubricError when a rubric differs from
    rubriclib.lock; EvalError for every bad row; with `batch` (what judges through batches,
    named in each reason), BatchRefused when the eval asks what a batch cannot do; with
    `checklist` (the answers --checklist or --checklist-answers asked for), EvalError naming
    each grader whose rubric checklist mode cannot judge so, and the flag."""
    from rubriclib.evals.formats import load_eval  # looked up at each call (tests replace it)

    return check_eval(
        load_eval(eval_file, dataset), frozen=frozen, batch=batch, checklist=checklist
    )


def check_eval(
    ev: Eval,
    *,
    frozen: bool = False,
    batch: str | None = None,
    checklist: AnswerMode | None = None,
) -> Prepared:
    """An eval already loaded, checked as `prepare` checks one (`run_eval` is given these)."""
    if frozen:
        from rubriclib.rubrics import frozen_problems

        locked = [g.rubric for g in ev.graders if not g.rubric.source.startswith("prompt:")]
        if problems := frozen_problems(locked):
            raise RubricError(problems)
    problems, rows = check_dataset(ev)
    if checklist is not None:
        problems = [
            Problem(str(ev.path), f"graders.{grader.name}", f"{checklist_flag(checklist)}: {why}")
            for grader in ev.graders
            if (why := checklist_refused(grader.rubric, checklist)) is not None
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
        if (grader.judge.evidence or resolve("evidence").value) == "explore":
            problems.append(
                f"{what}: grader {grader.name}: evidence explore (from its settings, the config "
                "or RUBRICLIB_EVIDENCE) takes several requests a judgment, and a batch sends one; "
                "use whole or auto"
            )
        if grader.panel is not None:
            problems.append(
                f"{what}: grader {grader.name}: a judge panel cannot be judged through a batch "
                "yet; run it live"
            )
    return problems


OFFLINE_ENDPOINT = "http://offline-batch-file.invalid/v1"
"""The endpoint offline judges (batch prepare / collect) name in their requests' custom_ids and
cache keys, whatever OPENAI_BASE_URL says: a file prepared here is collected anywhere."""


def ready_run(
    prepared: Prepared,
    *,
    model: str | None = None,
    cache: bool | str | os.PathLike[str] = False,
    votes: int | None = None,
    checklist: AnswerMode | None = None,
    protocol: Protocol | None = None,
    seed: int | None = None,
    evidence: Mapping[str, Any] | None = None,
    capabilities: bool | str | os.PathLike[str] = False,
    offline: bool = False,
    limit: int | None = None,
    concurrency: int | None = None,
    out: Path | None = None,
    resume: bool = False,
    force: bool = False,
) -> ReadyRun:
    """A prepared eval made runnable, the one place an eval becomes so: its judges (`model`,
    `votes`, `checklist` mode, answered by `tool`, `probability` or `one-call`, `protocol`,
    `seed` and `evidence` (`evidence` and the exploring budgets, as JudgeSettings names them)
    override every grader's; `cache`, `capabilities` and `offline` as `_make_judges` takes
    them) and its target (a missing key is a
    JudgeConfigError here, before any request); the rows it reads, within `limit` (else the
    eval's own); its concurrency (`concurrency`, else the eval's, else the config's); and with
    `resume` the lines of `out` whose row, grader, rubric digest, judge model, votes,
    checklist mode and protocol still match (a letta row's own rubric digest for its prompt
    graders), appending to `out`; an `out` that holds anything is an EvalError without
    `resume`, unless `force` lets the run replace it. Its judges hold their prompts to the
    eval's prompt-size limit."""
    if resume and force:
        raise ValueError("resume and force: choose one (continue `out`, or replace it)")
    if out is not None and not resume:
        refuse_to_replace(out, force)
    ev = prepared.eval
    # the flags turn checklist mode on, never off
    over = JudgeSettings(
        model=model,
        votes=votes,
        protocol=protocol,
        seed=seed,
        **checklist_mode(checklist),
        **(evidence or {}),
    )
    settings = {grader.name: grader.judge.merge(over) for grader in ev.graders}
    judges = _make_judges(ev, settings, over, cache, capabilities, offline)
    target = _make_target(ev)
    kept = {}
    if resume and out is not None:
        expected = {g.name: judge_identity(g.rubric.digest, judges[g.name]) for g in ev.graders}
        kept = read_resumable(out, expected, own_rubrics(ev))
    return ReadyRun(
        ev,
        rows=prepared.planned_rows(limit),
        limit=prepared.rows_to_read(limit),
        judges=judges,
        target=target,
        concurrency=int(concurrency or ev.concurrency or resolve("concurrency").value),
        requests_per_minute=ev.requests_per_minute,
        out=out,
        kept=kept,
        resume=resume,
        settings=settings,
        cache=cache,
    )


def refuse_to_replace(out: Path, force: bool) -> None:
    """EvalError when a run would replace results file `out` that holds anything, and `force`
    does not let it (checked before any request)."""
    if not force and holds_anything(out):
        raise EvalError.single(
            str(out),
            "out",
            "already holds results; pass resume=True to continue it or force=True to replace it",
        )


def own_rubrics(ev: Eval) -> dict[tuple[str, str], str]:
    """The digest of each letta row's own rubric, by row and prompt grader (for --resume)."""
    graders = [grader for grader in ev.graders if grader.rubric.template == "letta"]
    if not graders or ev.dataset.letta_base is None:
        return {}
    return {
        (row.id, grader.name): row_rubric(row, grader).digest
        for row in ev.dataset.rows()
        if row.sample is not None and row.sample.rubric is not None
        for grader in graders
    }


def _make_judges(
    ev: Eval,
    settings: Mapping[str, JudgeSettings],
    over: JudgeSettings,
    cache: bool | str | os.PathLike[str],
    capabilities: bool | str | os.PathLike[str],
    offline: bool,
) -> dict[str, Grader]:
    """One Judge (or Panel) per grader (graders with the same settings share one): a judge by
    its `settings`, a panel's members with what `over` sets (the flags) replacing each
    member's setting (but its model: a model names one judge); `capabilities` is where
    endpoint quirks are remembered (see Judge).
    Credentials come only from the environment; `offline` judges never send (batch files), so
    they need none, are given none, and all name OFFLINE_ENDPOINT."""
    from rubriclib.judging import Judge

    built: dict[JudgeSettings, Judge] = {}
    judges: dict[str, Grader] = {}
    limit = max_prompt_tokens(ev)

    def judge_for(settings: JudgeSettings) -> Judge:
        if settings not in built:
            if offline:
                where = settings.merge(base_url=OFFLINE_ENDPOINT)
                built[settings] = Judge.from_settings(
                    where, cache=cache, api_key="offline-no-key", max_prompt_tokens=limit
                )
            else:
                built[settings] = Judge.from_settings(
                    settings, cache=cache, capabilities=capabilities, max_prompt_tokens=limit
                )
        return built[settings]

    for grader in ev.graders:
        if grader.panel is not None:
            judges[grader.name] = _make_panel(grader, judge_for, over, ev)
        else:
            judges[grader.name] = judge_for(settings[grader.name])
    return judges


def _make_panel(
    grader: GraderEntry, judge_for: Callable[[JudgeSettings], Judge], over: JudgeSettings, ev: Eval
) -> Panel:
    """A grader's judge panel (the votes and checklist mode `over` sets replace each
    member's; the members keep their models)."""
    from rubriclib.judging import Panel

    assert grader.panel is not None
    flags = JudgeSettings(
        votes=over.votes,
        mode=over.mode,
        answers=over.answers,
        protocol=over.protocol,
        seed=over.seed,
        evidence=over.evidence,
        exploring_turns=over.exploring_turns,
        exploring_characters=over.exploring_characters,
    )
    members = [judge_for(member.merge(flags)) for member in grader.panel.judges]
    return Panel(members, grader.panel.aggregate, requests_per_minute=ev.requests_per_minute)


def _make_target(ev: Eval) -> Target | None:
    """The eval's target model, if it has one (a missing key is a JudgeConfigError here)."""
    from rubriclib.judging import Target

    return Target(ev.target) if ev.target is not None else None


def open_eval_batch(
    ready: ReadyRun, resume: bool, poll_seconds: float, progress: Callable[[str], None]
) -> tuple[ReadyRun, BatchRun]:
    """`eval --batch`: the run with its judges rebuilt to send through the Batch API (the state
    file beside its results file), each batch recording the variable its key came from; and the
    batch run, to follow and close."""
    from rubriclib.batch import open_batch_run

    assert ready.out is not None, "a batch run keeps its state beside its results file"
    batch = open_batch_run(
        ready.judges,
        ready.out,
        resume=resume,
        poll_seconds=poll_seconds,
        progress=progress,
        api_key_envs={
            g.name: g.judge.api_key_env for g in ready.eval.graders if g.judge.api_key_env
        },
    )
    return ready.through(batch.judges, batch.in_flight(ready.judgments)), batch

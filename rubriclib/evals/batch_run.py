"""Driving an eval's judgments through batch files (`batch prepare`, `batch collect`) and the
judges a batch run sends with. Every judgment still runs on the one engine through a `Judge`
(never a Panel: `batch_judges`) built with a batch transport; a batch is only another way for
its requests to travel (`batch.files.Recorder`, `batch.files.Answerer`, `batch.api.BatchTransport`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubriclib.batch import (
    Answerer,
    OutputFile,
    Recorder,
    batch_judges,
    estimated_tokens,
    read_output,
)

if TYPE_CHECKING:
    from rubriclib.evals.run import EvalReport
    from rubriclib.evals.setup import ReadyRun
    from rubriclib.judging import Grader, GradeResult, Interrupted

IN_FLIGHT = 256
"""Judgments a batch-file run starts at once: it sends nothing, so no spacing either."""


@dataclass
class Prepared:
    """What `prepare` found: the requests to write, and the judgments that need none."""

    requests: dict[str, dict[str, Any]]
    judgments: int
    cached: int
    """Votes (judgments, with one vote) the verdict cache already answers: no request."""
    not_judged: int
    """Judgments that need no request because they cannot be judged (a missing field)."""

    @property
    def prompt_tokens(self) -> int:
        return sum(estimated_tokens(body) for body in self.requests.values())


def _cached_votes(result: GradeResult) -> int:
    if result.details.votes is not None:
        return result.details.votes.cached
    return int(result.details.judge.cached)


async def aprepare(ready: ReadyRun) -> Prepared:
    """Every first-turn request (every vote's) the eval's judgments would send, unsent (no
    results file written, whatever `ready` names)."""
    from rubriclib.evals.run import run_ready

    recorder = Recorder()
    judges = batch_judges(ready.judges, recorder, records_only=True)
    recording = replace(ready, out=None).through(judges, IN_FLIGHT)
    cached = not_judged = 0

    def count(result: GradeResult) -> None:
        nonlocal cached, not_judged
        cached += _cached_votes(result)
        not_judged += result.reason.startswith("not judged: row ")

    report = await run_ready(recording, on_result=count)
    judgments = sum(stats.judged for stats in report.graders)
    return Prepared(recorder.requests, judgments, cached, not_judged)


@dataclass
class Collected:
    """How an output file matched the eval's requests (each problem one line)."""

    report: EvalReport
    answered: int
    problems: list[str]
    """Unreadable, duplicate and unknown lines (`FILE:LINE: ...`), and requests with no answer."""
    unused: int
    """Answers to votes never asked (voting stopped once a majority was decided)."""


async def acollect(
    ready: ReadyRun,
    outputs: list[Path],
    *,
    keep_cases: bool = False,
    on_result: Callable[[GradeResult], None] | None = None,
    interrupt: Interrupted | None = None,
) -> Collected:
    """Judge the eval from batch output files: the same results file (`ready.out`) and report a
    live run writes. The requests a `prepare` would write are worked out first, to tell an
    unknown answer from a needed one."""
    from rubriclib.evals.run import run_ready

    read = OutputFile()
    for output in outputs:
        read_output(output.read_bytes(), output.name, read)
    names = " and ".join(output.name for output in outputs)
    expected = set((await aprepare(ready)).requests)
    answerer = Answerer(read, expected, names)
    judges = batch_judges(ready.judges, answerer)
    answering = ready.through(judges, IN_FLIGHT)
    report = await run_ready(
        answering, keep_cases=keep_cases, on_result=on_result, interrupt=interrupt
    )
    problems = list(read.problems)
    unknown = [custom_id for custom_id in read.answers if custom_id not in expected]
    missing = sorted(answerer.asked & expected - set(read.answers))
    if unknown and missing:
        problems.append(changed_since_prepare(read, unknown, len(missing), judges, names))
    for custom_id in unknown:
        problems.append(
            f"{read.answers[custom_id][0]}: {custom_id} matches no request of this eval"
        )
    for custom_id in missing:
        problems.append(f"{names}: no answer for request {custom_id}")
    unused = len((expected & set(read.answers)) - answerer.asked)
    return Collected(report, len(answerer.asked & set(read.answers)), problems, unused)


def changed_since_prepare(
    read: OutputFile, unknown: list[str], missing: int, judges: Mapping[str, Grader], names: str
) -> str:
    """Why the answers match other requests than this run's: what a prepare depends on changed
    (named when the answers' model is none this run asks)."""
    line = (
        f"{names}: {len(unknown)} answer(s) match no request of this run and {missing} "
        "request(s) have no answer: the requests changed since `batch prepare` (the judge model, "
        "a rubric's text, the rows or --votes); collect with what prepare used, or prepare again"
    )
    answered = set()
    for custom_id in unknown:
        body = read.answers[custom_id][1].get("response", {}).get("body")
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            answered.add(body["model"])
    asked = {judge.model for judge in judges.values()}
    if answered and not any(a.startswith(m) or m.startswith(a) for a in answered for m in asked):
        line += f" ({names} answers model {', '.join(sorted(answered))}; this run asks "
        line += f"{', '.join(sorted(asked))})"
    return line

"""The options every command that runs an eval file shares (`options.eval_options`), taken as
one `EvalChoice`: the eval, how it is judged, and how it is made ready (`eval`, `batch`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubriclib.cli.options import with_eval_options
from rubriclib.errors import BatchRefused

if TYPE_CHECKING:
    from rubriclib.evals import Prepared, ReadyRun
    from rubriclib.settings import AnswerMode, Protocol


@dataclass(frozen=True)
class EvalChoice:
    """The eval a command judges, and how, as `options.eval_options` name it."""

    eval_file: str
    dataset: str | None
    model: str | None
    limit: int | None
    votes: int | None
    no_cache: bool
    checklist: AnswerMode | None
    """How --checklist and --checklist-answers ask the checklist (`options.checklist_options`)."""
    protocol: Protocol | None = None
    """--protocol: how every grader's judge gives its verdict (wins over the eval file)."""
    seed: int | None = None
    """--seed: the seed every grader's judge sends (wins over the eval file)."""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    """--evidence and the exploring budgets given (`options.evidence_options`), as
    JudgeSettings fields: how every grader's judge is shown an agent run."""

    def prepared(self, *, frozen: bool = False, batch: str | None = None) -> Prepared:
        """The eval, checked (`setup.prepare`): no key read, no request sent."""
        from rubriclib.evals import prepare

        if batch is not None and self.evidence.get("evidence") == "explore":
            why = "--evidence explore takes several requests a judgment, and a batch sends one"
            raise BatchRefused([f"{batch}: {why}; use whole or auto"])
        return prepare(
            self.eval_file,
            self.dataset,
            frozen=frozen,
            batch=batch,
            checklist=self.checklist,
        )

    def ready(
        self,
        prepared: Prepared,
        *,
        offline: bool = False,
        concurrency: int | None = None,
        out: Path | None = None,
        resume: bool = False,
        force: bool = False,
    ) -> ReadyRun:
        """The checked eval made runnable as chosen (`setup.ready_run`), with the configured
        verdict cache; `offline` judges never send (batch files), so need no key."""
        from rubriclib.config import cache_setting, capabilities_setting
        from rubriclib.evals import ready_run

        return ready_run(
            prepared,
            model=self.model,
            cache=cache_setting(self.no_cache),
            votes=self.votes,
            checklist=self.checklist,
            protocol=self.protocol,
            seed=self.seed,
            evidence=self.evidence,
            capabilities=capabilities_setting(),
            offline=offline,
            limit=self.limit,
            concurrency=concurrency,
            out=out,
            resume=resume,
            force=force,
        )


def with_eval_choice(command: Any) -> Any:
    """`options.eval_options` on `command`, which receives them as one EvalChoice, `chosen`."""

    @with_eval_options
    @functools.wraps(command)
    def run(
        eval_file: str,
        dataset: str | None,
        model: str | None,
        limit: int | None,
        votes: int | None,
        no_cache: bool,
        checklist: AnswerMode | None,
        protocol: Protocol | None,
        seed: int | None,
        evidence: dict[str, Any],
        **rest: Any,
    ) -> Any:
        chosen = EvalChoice(
            eval_file, dataset, model, limit, votes, no_cache, checklist, protocol, seed, evidence
        )
        return command(chosen, **rest)

    return run

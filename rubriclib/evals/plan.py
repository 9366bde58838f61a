"""What a run would do, worked out with no request (`--dry-run`), and the prompt-size limit a
run holds every judgment to. Token counts are estimates: four characters a token."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from rubriclib.config import resolve
from rubriclib.evals.judgments import Judgment, not_extracted, row_judgments
from rubriclib.item import Item, missing_fields
from rubriclib.judging import (
    CHARACTERS_PER_TOKEN,
    estimated_tokens,
    explored,
    planned_exploring,
    too_large,
)
from rubriclib.settings import JudgeSettings

if TYPE_CHECKING:
    from rubriclib.evals.formats import Eval, GraderEntry
    from rubriclib.rubrics import Rubric

SHOWN_CHARACTERS = 2_000
"""How much of each field `--show-prompts` shows; the rest is named by its size."""


def max_prompt_tokens(ev: Eval) -> int:
    """The largest prompt a judgment may send: the eval file's `judge: max_prompt_tokens`, else
    RUBRICLIB_MAX_PROMPT_TOKENS, the project's config, the default (128,000)."""
    return int(resolve("max_prompt_tokens", ev.max_prompt_tokens).value)


def prompt_tokens(rubric: Rubric, item: Item, limit: int, evidence: str = "whole") -> int:
    """One request's estimated prompt tokens (an agent run cut to fit `limit`, or the first
    request exploring it): its messages and its verdict tools."""
    return estimated_tokens(rubric, _messages(rubric, item, limit, evidence))


def _messages(rubric: Rubric, item: Item, limit: int, evidence: str) -> list[dict[str, str]]:
    from rubriclib.judging import render

    return render(
        rubric,
        item.output,
        item.input,
        item.context,
        item.reference,
        baseline=item.baseline,
        variables=item.variables,
        transcript=item.transcript,
        max_prompt_tokens=limit,
        evidence=evidence,
    )


def _cut(text: str | None) -> str | None:
    if text is None or len(text) <= SHOWN_CHARACTERS:
        return text
    size = f"{len(text):,} characters, about {len(text) // CHARACTERS_PER_TOKEN:,} tokens"
    return f"{text[:SHOWN_CHARACTERS]}... [cut: {size}]"


def shown_prompt(
    rubric: Rubric, item: Item, limit: int, evidence: str = "whole"
) -> list[dict[str, str]]:
    """The prompt with each field cut to SHOWN_CHARACTERS and the size it was cut from (an
    agent run's blocks as the judge is shown them, or listed when it explores the run)."""
    fields = ("output", "input", "context", "reference", "baseline")
    cut: dict[str, Any] = {name: _cut(getattr(item, name)) for name in fields}
    if item.variables is not None:
        cut["variables"] = {key: _cut(value) for key, value in item.variables.items()}
    return _messages(rubric, item.model_copy(update=cut), limit, evidence)


@dataclass
class Plan:
    """What a run would do, worked out with no request: for `--dry-run`."""

    rows: int = 0
    judgments: int = 0
    prompt_tokens: int = 0
    """Estimated at four characters a token over every request (both orders of a pairwise)."""
    limit: int = 0
    """The largest prompt a judgment may send (`max_prompt_tokens`)."""
    missing: list[str] = field(default_factory=list)
    """`WHERE: grader needs FIELD` for each row and grader that would be an error (or `WHERE:
    grader: why`, when its extractor takes nothing from a letta row's recorded messages)."""
    too_large: list[str] = field(default_factory=list)
    """`WHERE: grader: prompt too large: ...` for each judgment over the limit."""
    first_prompts: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    """The first row's prompt per grader, each field cut to a readable length."""
    by_grader: Counter[str] = field(default_factory=Counter)
    """Judgments per grader (each casts its grader's votes)."""
    tokens_by_grader: Counter[str] = field(default_factory=Counter)
    pairing_doubts: list[str] = field(default_factory=list)
    """`WHERE: transcript[N]: why` for each tool result whose call was paired in doubt."""
    explored: list[str] = field(default_factory=list)
    """`WHERE: grader: the run's size: its requests and tokens at most` for each judgment whose
    judge would explore the run."""
    most_requests: int = 0
    most_prompt_tokens: int = 0
    """The requests and prompt tokens of every judgment were each explored judgment to take
    all its requests, each holding its whole character budget (else as `prompt_tokens`)."""
    most_by_grader: Counter[str] = field(default_factory=Counter)
    most_tokens_by_grader: Counter[str] = field(default_factory=Counter)
    """`most_requests` and `most_prompt_tokens` per grader (each vote spends them again)."""
    problem_rows: set[str] = field(default_factory=set)
    """Where each row with a problem is (a missing field, a prompt over the limit)."""

    def count(self, grader: GraderEntry, tokens: int, most: tuple[int, int]) -> None:
        """Count one judgment of `grader`: its first request's `tokens`, and the `most`
        requests it may send and tokens each may hold (an explored judgment's budget)."""
        self.judgments += 1
        self.by_grader[grader.name] += 1
        orders = 2 if grader.rubric.scale == "pairwise" else 1  # both orders, one length
        self.prompt_tokens += orders * tokens
        self.tokens_by_grader[grader.name] += orders * tokens
        self.most_requests += orders * most[0]
        self.most_prompt_tokens += orders * most[0] * most[1]
        self.most_by_grader[grader.name] += orders * most[0]
        self.most_tokens_by_grader[grader.name] += orders * most[0] * most[1]


def plan_eval(ev: Eval, limit: int | None = None, flags: JudgeSettings | None = None) -> Plan:
    """Estimate every judgment the run would make, without sending any; `flags` are the
    command line's judge settings over every grader's (its evidence, protocol and mode)."""
    plan = Plan(limit=max_prompt_tokens(ev))
    evidence = {g.name: g.judge.merge(flags).run_evidence() for g in ev.graders}
    for row in islice(ev.dataset.rows(), limit if limit is not None else ev.limit):
        plan.rows += 1
        plan.pairing_doubts.extend(f"{row.where}: {doubt}" for doubt in row.pairing_doubts)
        for grader in ev.graders:
            if not grader.judges(row.item):
                continue
            if missing := missing_fields(grader.rubric.requires, row.item):
                plan.missing.append(f"{row.where}: {grader.name} needs {', '.join(missing)}")
                plan.problem_rows.add(row.where)
                continue
            if (why := not_extracted(row, grader)) is not None:
                plan.missing.append(f"{row.where}: {grader.name}: {why}")
                plan.problem_rows.add(row.where)
                continue
            shown = evidence[grader.name]
            for part in row_judgments(row, grader):
                if grader.name not in plan.first_prompts:
                    plan.first_prompts[grader.name] = shown_prompt(
                        part.rubric, part.item, plan.limit, shown
                    )
                tokens = prompt_tokens(part.rubric, part.item, plan.limit, shown)
                most = (1, tokens)  # requests and tokens each, at most
                if explored(part.rubric, part.item.transcript, plan.limit, shown):
                    settings = grader.judge.merge(flags)
                    tokens, most = _explored(plan, f"{row.where}: {grader.name}", part, settings)
                if (why := too_large(tokens, plan.limit)) is not None:
                    plan.too_large.append(f"{row.where}: {grader.name}: {why}")
                    plan.problem_rows.add(row.where)
                    tokens, most = 0, (1, 0)  # never sent
                plan.count(grader, tokens, most)
    return plan


def _explored(
    plan: Plan, where: str, part: Judgment, settings: JudgeSettings
) -> tuple[int, tuple[int, int]]:
    """An explored judgment's first request's tokens (as its judge counts them), and the most
    requests it may send and tokens each may hold (its first, and its character budget read);
    listed in `plan.explored`."""
    turns, characters = settings.exploring_turns, settings.exploring_characters
    tokens, budget = planned_exploring(part.rubric, part.item, plan.limit, turns, characters)
    most = (budget.most_requests, tokens + budget.characters // CHARACTERS_PER_TOKEN)
    plan.explored.append(
        f"{where}: {_run_size(part.item)}: up to {most[0]} requests, each about {tokens:,} to "
        f"{most[1]:,} prompt tokens (the first; then with its budget of "
        f"{budget.characters:,} characters read)"
    )
    return tokens, most


def _run_size(item: Item) -> str:
    """An agent run's size, for the dry run: blocks and characters."""
    assert item.transcript is not None
    messages = item.transcript.messages
    characters = sum(len(m.text) + len(m.thinking) for m in messages)
    return f"a run of {len(messages)} blocks, {characters:,} characters"

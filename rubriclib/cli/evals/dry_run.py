"""`rubriclib eval --dry-run`: the plan of a run, sending nothing: the graders, the rows that
would be errors or explored, the prompts when asked, the totals, and batch against live."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rubriclib.cli.evals.choice import EvalChoice
    from rubriclib.evals import Eval, Plan


def show_dry_run(
    ev: Eval,
    chosen: EvalChoice,
    show_prompts: bool,
    use_batch: bool,
    prices: tuple[float | None, float],
) -> None:
    """`eval --dry-run`: the plan (under --batch, as a batch sends it: every run shown whole,
    cut), and the batch-vs-live estimate when asked."""
    from rubriclib.evals import plan_eval
    from rubriclib.settings import JudgeSettings, checklist_mode

    flags = JudgeSettings(
        protocol=chosen.protocol, **checklist_mode(chosen.checklist), **chosen.evidence
    )
    batched = flags.merge(evidence="whole")  # a batch sends one request a judgment
    plan = plan_eval(ev, chosen.limit, batched if use_batch else flags)
    _print_plan(ev, plan, chosen, show_prompts)
    if use_batch or prices[0] is not None:
        live = plan_eval(ev, chosen.limit, flags) if use_batch else plan
        sent = plan_eval(ev, chosen.limit, batched) if live.explored and not use_batch else plan
        _print_estimate(ev, sent, live, chosen.votes, *prices)


def _print_estimate(
    ev: Eval, sent: Plan, live: Plan, votes: int | None, price: float | None, discount: float
) -> None:
    """`eval --dry-run --batch`: requests, tokens and cost, batch against live: the plan as a
    batch sends it (`sent`), and as a live run does when it explores runs (`live`)."""
    from rubriclib.batch import estimate, estimate_lines

    asked = {g.name: votes or g.judge.votes or 1 for g in ev.graders}
    orders = {g.name: 2 if g.rubric.scale == "pairwise" else 1 for g in ev.graders}
    click.echo("")
    found = estimate(sent.by_grader, sent.tokens_by_grader, asked, orders)
    exploring = None
    if live.explored:
        most = (live.most_by_grader, live.most_tokens_by_grader)
        spent = estimate(live.by_grader, live.tokens_by_grader, asked, orders, most)
        exploring = (spent, len(live.explored))
    for line in estimate_lines(found, price, discount, exploring):
        click.echo(line)


LISTED_PROBLEMS = 10
"""Rows with a problem the dry run lists under each heading; the rest are counted."""


def _print_plan(ev: Eval, plan: Plan, chosen: EvalChoice, show_prompts: bool) -> None:
    """`eval --dry-run`: the graders (each with the model it would send, and its protocol when
    not tools), the rows that would
    be errors, the prompts when asked, and last the plan itself (rows x graders, tokens, rows
    with problems)."""
    from rubriclib.config import resolve

    votes = chosen.votes
    click.echo(f"{ev.name} ({ev.shape} eval)")
    for grader in ev.graders:
        rubric = grader.rubric
        identity = f"{grader.name}: {rubric.name}@{rubric.version} ({rubric.source})"
        if grader.panel is not None:
            click.echo(f"  {identity}, a panel")
            pairwise = rubric.scale == "pairwise"
            for line in grader.panel.plan_lines(plan.by_grader[grader.name], votes, pairwise):
                click.echo(f"    {line}")
            continue
        model = grader.judge_model(chosen.model)
        asked = votes or grader.judge.votes or 1
        each = f", {asked} votes per judgment (up to {asked}x the requests)" if asked > 1 else ""
        protocol = chosen.protocol or grader.judge.protocol or resolve("protocol").value
        each += f", protocol {protocol}" if protocol != "tools" else ""
        click.echo(f"  {identity}, {model}{each}")
    for line in ev.skipped:
        click.echo(f"  not run: {line}")
    if ev.target is not None:
        click.echo(f"  outputs: written by the target {ev.target.model} from each row's input")
    _print_problems(plan)
    if show_prompts:
        for name, messages in plan.first_prompts.items():
            click.echo(click.style(f"\n--- the first row, as grader {name} sees it ---", bold=True))
            for message in messages:
                click.echo(f"=== {message['role']} ===\n{message['content']}")
    else:
        click.echo("\n(--show-prompts shows the first row's prompt per grader)")
    judgments, tokens = f"{plan.judgments} judgment(s)", f"{plan.prompt_tokens:,}"
    told = "estimated: 4 characters a token"
    if plan.explored:  # an explored judgment sends from one request to its budget's
        judgments += f" (up to {plan.most_requests:,} requests)"
        tokens += f" to {plan.most_prompt_tokens:,}"
        told += "; the most: every explored judgment's requests sent, each its budget's worth"
    click.echo(
        f"plan: {plan.rows} row(s) x {len(ev.graders)} grader(s) = {judgments}, about {tokens} "
        f"prompt tokens ({told}); {len(plan.problem_rows)} row(s) with problems"
    )


def _print_problems(plan: Plan) -> None:
    """`eval --dry-run`'s lists: the judgments that would be errors, those over the prompt
    limit, the tool results paired in doubt and the runs that would be explored, each listed
    up to LISTED_PROBLEMS and the rest counted."""
    headings = (
        (
            plan.missing,
            "judgment(s) would be errors (a required field is missing, or an extractor finds "
            "nothing; no request is sent)",
        ),
        (
            plan.too_large,
            f"judgment(s) with a prompt over {plan.limit:,} tokens (judged as errors, no "
            "request; max_prompt_tokens sets the limit)",
        ),
        (
            plan.pairing_doubts,
            "tool result(s) paired with a call in doubt (judged as shown: the call named)",
        ),
        (
            plan.explored,
            "judgment(s) whose judge would explore a run too long to show uncut (each "
            "exploring turn resends the conversation so far, which the exploring budget keeps "
            f"under {plan.limit:,} tokens)",
        ),
    )
    for lines, heading in headings:
        if lines:
            click.echo(f"\n{len(lines)} {heading}:")
            for line in lines[:LISTED_PROBLEMS]:
                click.echo(f"  {line}")
            if len(lines) > LISTED_PROBLEMS:
                click.echo(f"  ... and {len(lines) - LISTED_PROBLEMS} more")

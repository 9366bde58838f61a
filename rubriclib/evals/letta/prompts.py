"""The prompt letta-evals builds for a row (`graders/prompt_utils.build_judge_prompt`), checked
before any request: a `str.format` template filled with `{input}`, `{ground_truth}`,
`{submission}` and every key of the row's `rubric_vars`, and what letta would refuse in it."""

from __future__ import annotations

import string
from typing import TYPE_CHECKING

from rubriclib.errors import Problem
from rubriclib.judging import letta_fill

if TYPE_CHECKING:
    from rubriclib.evals.letta.rows import LettaSample

RESERVED = ("input", "ground_truth", "submission")
"""The names letta fills from the sample itself; a rubric_vars key may not reuse one."""


def template_problems(template: str, sample: LettaSample, grader: str, where: str) -> list[Problem]:
    """What letta's `build_judge_prompt` would raise for this row and grader, one problem per
    row and variable: a rubric_vars key that is a reserved name, a placeholder with no value,
    anything else `str.format` refuses."""
    problems = [
        Problem(where, f"rubric_vars.{key}", f"collides with letta's reserved {{{key}}}")
        for key in sample.rubric_vars or {}
        if key in RESERVED
    ]
    if problems:
        return problems
    for turn in sample.turns():
        values = turn.substitutions()
        missing = sorted(placeholders(template) - set(values))
        problems += [
            Problem(
                where,
                f"rubric_vars.{name}",
                f"grader {grader} needs it (its prompt uses {{{name}}})",
            )
            for name in missing
        ]
        if not missing:
            try:
                letta_fill(template, values)
            except (ValueError, LookupError, AttributeError, TypeError) as error:
                problems.append(Problem(where, "rubric", f"grader {grader}: {error}"))
        if problems:
            break  # the same template and variables fail the same way on every turn
    return problems


def placeholders(template: str) -> set[str]:
    """The names a template fills, as letta's `validate_rubric_vars` reads them (`{a.b}` and
    `{a[0]}` name `a`); a ValueError when the text is not a `str.format` template."""
    names = set()
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            names.add(name.split(".")[0].split("[")[0])
    return names


def template_error(template: str) -> str | None:
    """Why `template` can never be filled by letta (unmatched braces, positional fields), or
    None."""
    try:
        names = placeholders(template)
    except ValueError as error:
        return (
            f"{error} (letta-evals fills prompts with str.format: write {{{{ and }}}} for a brace)"
        )
    positional = sorted(name for name in names if name == "" or name.isdigit())
    if positional:
        shown = ", ".join(f"{{{name}}}" for name in positional)
        return f"uses {shown}: letta-evals fills placeholders by name only"
    literal = sorted(name for name in names if any(c in name for c in "\"' \n"))
    if literal:  # JSON in a prompt: letta would look up a variable named `"score"`
        return (
            f"uses {{{literal[0]}...}}, which letta-evals reads as a placeholder: write {{{{ "
            "and }} for literal braces"
        )
    return None

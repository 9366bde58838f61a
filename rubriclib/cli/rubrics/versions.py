"""The project commands: `lock`, `check` and `update` (versions that mean something) and
`config`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

import click

from rubriclib.cli.app import main


@main.command()
@click.argument("refs", nargs=-1)
def lock(refs: Sequence[str]) -> None:
    """Write rubriclib.lock at the project root: name, version, digest and source of each rubric.

    A remote rubric is pinned by its reference: the commit it resolved to, the sha256 of the
    file, its name, version and digest. A reference already pinned keeps its pin (`rubriclib
    update` moves it).

    With no REF: every rubric in the project's rubrics/ folder and every rubric its eval files
    (YAML files with `graders`) name. With REFs: those entries added or refreshed, every other
    entry kept, and any rubric the project uses that the lock lacks added. Run it again after
    a version bump.

    \b
    Examples:
      rubriclib lock
      rubriclib lock groundedness@^1 ./rubrics/house-style.md
    """
    from rubriclib.evals import project_rubrics
    from rubriclib.rubrics import load_rubric, lock_entries, lock_pins, write_lock

    used = project_rubrics()
    named = [load_rubric(ref) for ref in refs]  # once: a remote REF is resolved once
    entries = lock_entries(used, named)
    pins = lock_pins(used, named)
    path = write_lock(entries, pins=pins)
    remote = f" ({len(pins)} remote)" if pins else ""
    click.echo(f"Locked {len(entries) + len(pins)} rubric(s){remote} in {path}")


@main.command()
@click.argument("refs", nargs=-1)
def check(refs: Sequence[str]) -> None:
    """Compare the project's rubrics with rubriclib.lock.

    Fails (exit 1) whenever a --frozen run would refuse: a rubric the project uses is not in
    the lock, or its version, digest or source differs from it (a changed text without a bump
    names the bump to make; a bump names `rubriclib lock`), or a locked rubric can no longer
    be found. With REFs, those rubrics are checked as well as every one the project uses (a
    REF the project scan cannot see: one locked for a command line). A remote rubric missing
    from the lock, floating (no revision, or a branch) or differing from its pin fails first,
    with exit 2, as a --frozen run does.

    \b
    Example (CI, or the pre-commit hook):
      rubriclib check
    """
    from rubriclib.errors import RubricError
    from rubriclib.evals import project_rubrics
    from rubriclib.rubrics import check as check_lock
    from rubriclib.rubrics import pin_problems, project_root, read_lock

    used = project_rubrics() + (project_rubrics(list(refs)) if refs else [])
    if problems := pin_problems(used, project_root()):
        raise RubricError(problems)
    report = check_lock(used, read_lock())
    for line in report.problems:
        click.echo(f"FAIL {line}")
    verdict = "FAILED" if report.problems else "OK"
    click.echo(f"{verdict}: {len(report.ok)} unchanged, {len(report.problems)} problem(s)")
    sys.exit(1 if report.problems else 0)


@main.command()
@click.argument("refs", nargs=-1)
def update(refs: Sequence[str]) -> None:
    """Move the lock's remote pins to what their references resolve to now (every pinned
    reference, or the REFs given), printing per rubric its version change and a unified diff
    of the rubric file: what the judge will now be told.

    Refuses (exit 2, the lock unchanged) to move a rubric whose judged text changed without a
    version bump, or whose version went down: the rule `check` applies to a local rubric.

    \b
    Example:
      rubriclib update github.com/org/rubrics@v1#rubrics/house.md
    """
    from rubriclib.errors import Problem, RubricError
    from rubriclib.rubrics import pin_moves, project_root, write_moves

    root = project_root()
    moves = pin_moves(list(refs), root)
    for move in moves:
        click.echo(move.summary)
        click.echo(move.diff(), nl=False)
    refused = [(move, why) for move in moves if (why := move.refusal()) is not None]
    if refused:
        raise RubricError([Problem(move.reference, "version", why) for move, why in refused])
    moved = [move for move in moves if move.moved]
    if moved:
        path = write_moves(moved, root)
        click.echo(f"Moved {len(moved)} pin(s) in {path}")
    else:
        click.echo("Every pin is up to date")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def config(as_json: bool) -> None:
    """Print the effective settings and where each came from (never a key).

    Precedence: a command-line flag, then the environment, then the project's rubriclib.toml
    or [tool.rubriclib] in pyproject.toml, then the default.

    \b
    Example:
      rubriclib config
    """
    from rubriclib.config import effective, find_project

    settings = effective()
    root, file = find_project()
    key = "set (OPENAI_API_KEY)" if os.environ.get("OPENAI_API_KEY") else "not set"
    if as_json:
        data = {name: {"value": s.value, "from": s.origin} for name, s in settings.items()}
        data["api_key"] = {"value": key, "from": "env OPENAI_API_KEY"}
        click.echo(
            json.dumps(
                {
                    "project": str(root),
                    "config_file": str(file) if file else None,
                    "settings": data,
                },
                indent=2,
            )
        )
        return
    click.echo(f"project: {root}")
    click.echo(f"config file: {file or '(none)'}")
    for name, setting in settings.items():
        click.echo(f"{name}: {setting.value!r}  ({setting.origin})")
    click.echo(f"api key: {key}")

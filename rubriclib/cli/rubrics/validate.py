"""validate: rubrics and goldens files checked, every problem printed. Judges nothing."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from rubriclib.cli.app import main
from rubriclib.errors import RubricError


@main.command()
@click.argument("refs", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON: one entry per REF.")
@click.option(
    "--strict",
    is_flag=True,
    help="Also fail placeholder text, goldens missing a verdict, unnamed verdict tools.",
)
@click.option(
    "--rubric",
    "rubric_refs",
    multiple=True,
    metavar="REF",
    help="Check goldens files against this rubric (repeatable), as test-goldens --goldens "
    "adds them to it.",
)
def validate(refs: Sequence[str], as_json: bool, strict: bool, rubric_refs: Sequence[str]) -> None:
    """Validate rubrics (or goldens YAML files); print every problem as FILE: field: message.

    A goldens file is checked against the rubrics --rubric names, else against the rubric
    it belongs to (goldens/NAME.yaml beside rubrics/NAME.md); with neither, read alone.
    Exits 0 when every one is valid, 1 when any is not.

    \b
    Examples:
      rubriclib validate rubrics/*.md
      rubriclib validate --strict rubrics/house-style.md goldens/house-style.yaml
      rubriclib validate more-goldens.yaml --rubric groundedness
    """
    entries = [_validation_entry(ref, strict, rubric_refs) for ref in refs]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
    else:
        for entry in entries:
            click.echo(_validation_lines(entry))
    sys.exit(0 if all(entry["valid"] for entry in entries) else 1)


def _validation_entry(ref: str, strict: bool, rubric_refs: Sequence[str]) -> dict[str, Any]:
    """One REF's verdict: a rubric (with its goldens) or, for a .yaml file, a goldens list
    and the rubrics it was checked against."""
    from rubriclib.rubrics import (
        checked_goldens_file,
        load_goldens,
        load_rubric,
        shown_goldens,
        strict_problems,
    )

    try:
        if ref.endswith((".yaml", ".yml")):
            goldens, checked = checked_goldens_file(Path(ref), ref, rubric_refs)
            against = [f"{rubric.name}@{rubric.version}" for rubric in checked]
            return {"ref": ref, "valid": True, "goldens": len(goldens), "checked_against": against}
        rubric = load_rubric(ref)
        goldens = load_goldens(rubric)
        for warning in shown_goldens(rubric.name, rubric.examples, goldens):
            click.echo(f"rubriclib: warning: {warning}", err=True)
        if strict and (unfinished := strict_problems(rubric, goldens)):
            raise RubricError(unfinished)
    except RubricError as error:
        problems = [
            {"source": p.source, "field": p.field, "message": " ".join(p.message.split())}
            for p in error.problems
        ]
        return {"ref": ref, "valid": False, "problems": problems}
    return {"ref": ref, "valid": True, "rubric": rubric.identity, "goldens": len(goldens)}


def _validation_lines(entry: dict[str, Any]) -> str:
    count = entry.get("goldens", 0)
    goldens = f"{count} golden{'' if count == 1 else 's'}"
    if entry["valid"] and "rubric" in entry:
        rubric = f"{entry['rubric']['name']}@{entry['rubric']['version']}"
        return f"{entry['ref']}: ok ({rubric}, {goldens})"
    if entry["valid"] and entry["checked_against"]:
        return (
            f"{entry['ref']}: ok ({goldens}, checked against {', '.join(entry['checked_against'])})"
        )
    if entry["valid"]:
        return f"{entry['ref']}: ok ({goldens}; read alone: --rubric REF checks them for a rubric)"
    return "\n".join(f"{p['source']}: {p['field']}: {p['message']}" for p in entry["problems"])

"""Commands that read rubrics: list, show, render, new. None of them judges."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from rubriclib.cli.app import BadInput, main, source_label
from rubriclib.cli.judged_inputs import JudgedInputs, with_judged_inputs
from rubriclib.cli.options import EVIDENCE_OPTIONS

if TYPE_CHECKING:
    from rubriclib.rubrics import Rubric
    from rubriclib.settings import Evidence


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_command(as_json: bool) -> None:
    """List every resolvable rubric: the project's rubrics/, RUBRICLIB_PATH, then built-ins,
    then the remote rubrics the lock pins (marked remote: reached by their reference).

    A broken rubric file, or a pinned remote rubric that cannot be read (offline and not in the
    rubric cache), is reported on stderr (exit 1); every good one is still listed.

    \b
    Example:
      rubriclib list --json
    """
    from rubriclib.rubrics import builtin_names, locked_remote_rubrics, scan_library

    builtins = set(builtin_names())
    rubrics, resolved, problems = scan_library()  # each file read once
    remote, remote_problems = locked_remote_rubrics()
    rubrics, problems = rubrics + remote, problems + remote_problems
    for problem in problems:
        click.echo(f"rubriclib: error: {' '.join(str(problem).split())}", err=True)
    # What a bare name resolves to; every other version is reached by a pin (name@VERSION).
    defaults = {(r.name, r.version, r.source) for r in resolved}
    shadowing = {
        r.name
        for r in rubrics
        if (r.name, r.version, r.source) in defaults
        and not r.source.startswith("builtin:")
        and r.name in builtins
    }

    def marker(rubric: Rubric) -> str:
        if rubric.remote is not None:
            return " (remote: by its reference only)"
        if (rubric.name, rubric.version, rubric.source) not in defaults:
            return f" (by pin only: {rubric.name}@{rubric.version})"
        return " (shadows built-in)" if rubric.name in shadowing else ""

    if as_json:
        rows = [
            {
                **r.identity,
                "description": r.description,
                "default": (r.name, r.version, r.source) in defaults,
                "shadows_builtin": r.name in shadowing
                and (r.name, r.version, r.source) in defaults,
                "remote": r.remote.reference if r.remote is not None else None,
            }
            for r in rubrics
        ]
        click.echo(json.dumps(rows, indent=2))
        sys.exit(1 if problems else 0)
    width = max((len(rubric.name) for rubric in rubrics), default=0)
    groups: dict[str, list[Rubric]] = {}
    for rubric in rubrics:
        groups.setdefault(_group_of(rubric), []).append(rubric)
    for group in sorted(groups, key=_group_rank):
        click.echo(click.style(f"{group}:", underline=True))
        for rubric in groups[group]:
            click.echo(
                f"{click.style(rubric.name.ljust(width), bold=True)}  {rubric.version:<8} "
                f"{rubric.scale:<9}  {rubric.description}\n"
                f"{'':{width}}  source: {source_label(rubric)}"
                + click.style(marker(rubric), fg="yellow")
            )
    sys.exit(1 if problems else 0)


def _group_of(rubric: Rubric) -> str:
    """Where `list` files a rubric: its folder, its pack, the lock's remote pins, or the
    built-ins."""
    if rubric.remote is not None:
        return REMOTE_GROUP
    if rubric.source.startswith("builtin:"):
        return "built-in"
    if rubric.source.startswith("pack:"):
        return f"pack {rubric.source.split(':')[1]}"
    return str(rubric.path.parent)


def _group_rank(group: str) -> tuple[int, str]:
    """Folders first, then packs, then the built-ins (the order names are looked up in), then
    the remote rubrics, which no name reaches."""
    if group == REMOTE_GROUP:
        return 3, group
    return (2 if group == "built-in" else 1 if group.startswith("pack ") else 0), group


REMOTE_GROUP = "remote (pinned in rubriclib.lock)"


@main.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--body", "body_only", is_flag=True, help="Print only the judged body.")
def show(ref: str, as_json: bool, body_only: bool) -> None:
    """Show one rubric: frontmatter, goldens, checklist, output fields, worked examples, body.

    \b
    Examples:
      rubriclib show groundedness@^1
      rubriclib show ./rubrics/house-style.md --body > prompt.md
    """
    from rubriclib.rubrics import load_goldens, load_rubric, shown_example

    rubric = load_rubric(ref)
    if body_only:
        click.echo(rubric.body)
        return
    info = {
        **rubric.identity,
        "description": rubric.description,
        "pass_threshold": rubric.pass_threshold,
        "citations": rubric.citations,
        "goldens": len(load_goldens(rubric)),
    }
    checklist = [
        {
            **item.model_dump(exclude={"weight"}),
            "weight": item.effective_weight if rubric.scale == "1-5" else None,
        }
        for item in rubric.checklist
    ]
    remote = _remote_info(rubric)
    if as_json:
        examples = [shown_example(example) for example in rubric.examples]
        shown: dict[str, Any] = {**info, "checklist": checklist, "output": rubric.output}
        shown.update({"examples": examples, "remote": remote, "body": rubric.body})
        click.echo(json.dumps(shown, indent=2))
        return
    for key, value in info.items():
        if value is not None:
            click.echo(f"{click.style(key + ':', bold=True)} {value}")
    if remote is not None:
        pinned = "pinned in rubriclib.lock" if remote["pinned"] else "not pinned: `rubriclib lock`"
        said = f"{remote['reference']} ({remote['kind']}, {pinned})"
        click.echo(f"{click.style('remote:', bold=True)} {said}")
    _print_parts(rubric, checklist)
    click.echo(f"\n{rubric.body}")


def _print_parts(rubric: Rubric, checklist: list[dict[str, Any]]) -> None:
    """`show`'s checklist, output fields and worked examples, as text."""
    from rubriclib.rubrics import shown_example

    if checklist:
        click.echo(f"{click.style('checklist:', bold=True)} {len(checklist)} items")
    for item in checklist:
        facts = [f"fails if {item['fail_if']}"]
        facts += [f"weight {item['weight']:g}"] if item["weight"] is not None else []
        facts += [f"requires {', '.join(item['requires'])}"] if item["requires"] else []
        click.echo(f"  - {click.style(item['id'], bold=True)} ({'; '.join(facts)})")
        click.echo(textwrap.indent(item["question"], "    "))
    if rubric.output:
        import yaml

        fields = yaml.safe_dump(rubric.output, sort_keys=False, allow_unicode=True)
        click.echo(
            f"{click.style('output:', bold=True)}\n{textwrap.indent(fields, '  ')}", nl=False
        )
    if rubric.examples:
        import yaml

        listed = [shown_example(example) for example in rubric.examples]
        written = yaml.safe_dump(listed, sort_keys=False, allow_unicode=True)
        click.echo(
            f"{click.style('examples:', bold=True)}\n{textwrap.indent(written, '  ')}", nl=False
        )


def _remote_info(rubric: Rubric) -> dict[str, object] | None:
    """Where a remote rubric came from and whether the lock pins that content; None for
    every other rubric."""
    from rubriclib.rubrics import project_root, read_pins

    if (origin := rubric.remote) is None:
        return None
    pin = read_pins(project_root()).get(origin.reference)
    pinned = pin is not None and pin.sha256 == origin.sha256
    return {**origin.model_dump(), "pinned": pinned}


@main.command("render")
@click.argument("ref")
@with_judged_inputs
@click.option("--json", "as_json", is_flag=True, help="Print the messages as JSON.")
@EVIDENCE_OPTIONS[0]
def render_command(
    ref: str, inputs: JudgedInputs, as_json: bool, evidence: Evidence | None
) -> None:
    """Print exactly the messages the judge would receive. No network, no API key.

    A run the judge explores (--evidence explore, or auto when it does not fit uncut) is
    listed, not shown, and the tools its judge is offered are printed after the messages.

    \b
    Example:
      rubriclib render groundedness --output @answer.txt --context @source.txt
      rubriclib render task-completion --transcript run.json
      rubriclib render task-completion --transcript run.json --evidence explore
    """
    from rubriclib.config import resolve
    from rubriclib.judging import explored, exploring_tools, render
    from rubriclib.rubrics import load_rubric
    from rubriclib.settings import JudgeSettings

    rubric = load_rubric(ref)
    if inputs.baseline is None and rubric.scale == "pairwise":  # what `judge` would refuse
        raise BadInput(
            f"--baseline: {rubric.name} is a pairwise rubric: give the output to compare with"
        )
    limit = int(resolve("max_prompt_tokens").value)
    shown = JudgeSettings(evidence=evidence).run_evidence()  # as a judge would show the run
    texts = inputs.read(rubric)
    messages = render(rubric, **texts, max_prompt_tokens=limit, evidence=shown)
    run = texts.get("transcript")
    tools = exploring_tools(rubric) if explored(rubric, run, limit, shown) else None
    if as_json:
        click.echo(
            json.dumps(messages if tools is None else messages + [{"tools": tools}], indent=2)
        )
        return
    for message in messages:
        click.echo(click.style(f"=== {message['role']} ===", bold=True))
        click.echo(message["content"])
    if tools is not None:
        click.echo(click.style("=== tools ===", bold=True))
        click.echo(json.dumps(tools, indent=2))


@main.command()
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False),
    help="Default: the project's rubrics/ folder (beside pyproject.toml or rubriclib.toml, else "
    "here), which is searched by name.",
)
@click.option(
    "--scale", type=click.Choice(["pass-fail", "1-5", "labels"]), help="Default: pass-fail."
)
@click.option("--description", help="One line: what the rubric judges.")
@click.option(
    "--from",
    "from_ref",
    help="Copy this rubric's body, requires, checklist and goldens (version resets to 0.1.0).",
)
@click.option(
    "--checklist",
    "with_checklist",
    is_flag=True,
    help="Add an example checklist: yes/no questions, each failing the output on one answer.",
)
@click.option(
    "--from-docent",
    "docent_file",
    type=click.Path(dir_okay=False),
    help="Read a Docent rubric's JSON: its text, labels and output schema (scale labels).",
)
@click.option(
    "--passing",
    help="With --from-docent: the labels that pass, comma-separated (needed unless the names "
    "say, like pass/fail, yes/no, match/no match).",
)
def new(
    name: str,
    directory: str | None,
    scale: str | None,
    description: str | None,
    from_ref: str | None,
    with_checklist: bool,
    docent_file: str | None,
    passing: str | None,
) -> None:
    """Write DIR/NAME.md at version 0.1.0: a body skeleton and two placeholder goldens
    (with --checklist, an example checklist too), or a Docent rubric read in.

    Never overwrites an existing file.

    \b
    Examples:
      rubriclib new house-style --description "Whether replies follow our style guide."
      rubriclib new strict-groundedness --from groundedness
      rubriclib new house-style --checklist
      rubriclib new agent-helpfulness --from-docent rubric.json --passing helpful
    """
    from rubriclib.rubrics import load_rubric, new_rubric, project_rubrics_dir

    folder = Path(directory) if directory is not None else _relative(project_rubrics_dir())
    if docent_file is not None:
        _refuse_with_docent(scale, from_ref, with_checklist)
        _new_from_docent(name, folder, Path(docent_file), passing, description)
        return
    if passing is not None:
        raise click.UsageError("--passing applies only with --from-docent")
    if from_ref is not None and scale is not None and scale != load_rubric(from_ref).scale:
        raise click.UsageError(f"--scale {scale} differs from the scale of {from_ref}")
    path = new_rubric(name, folder, scale or "pass-fail", description, from_ref, with_checklist)
    click.echo(f"Wrote {path}")
    click.echo("Next steps:")
    click.echo(f"  1. Edit {path}: write the criteria and replace every PLACEHOLDER.")
    click.echo("  2. Add goldens: real outputs with the verdict they must get, and why.")
    click.echo(f"  3. Run: rubriclib validate {path} && rubriclib test-goldens {path}")


def _refuse_with_docent(scale: str | None, from_ref: str | None, checklist: bool) -> None:
    """--from-docent decides the scale and the body: the options that would too are refused."""
    given = [
        option
        for option, value in (("--scale", scale), ("--from", from_ref), ("--checklist", checklist))
        if value and not (option == "--scale" and value == "labels")
    ]
    if given:
        raise click.UsageError(f"{', '.join(given)}: not with --from-docent (a labels rubric)")


def _new_from_docent(
    name: str, folder: Path, source: Path, passing: str | None, description: str | None
) -> None:
    """`new --from-docent`: write the rubric, then say what became of each part."""
    from rubriclib.rubrics import new_from_docent

    chosen = [part.strip() for part in passing.split(",")] if passing is not None else None
    path, docent = new_from_docent(name, folder, source, chosen, description)
    click.echo(f"Wrote {path} from the Docent rubric {source}")
    verdicts = ", ".join(f"{label} {verdict}" for label, verdict in docent.header["labels"].items())
    how = "read from the names; --passing chooses" if docent.inferred else "by --passing"
    click.echo(f"  labels: {verdicts} ({how})")
    for old, new in docent.renamed.items():
        click.echo(f"  renamed {old!r} to {new!r}: a label is kebab-case")
    fields = ", ".join(docent.header.get("output", {})) or "none"
    click.echo(f"  output fields: {fields}")
    click.echo(f"  judge model: Docent's was {docent.model}; here --model or the config's chooses")
    click.echo("Not carried over (a rubric file has no place for them):")
    for note in docent.not_carried:
        click.echo(f"  - {note}")
    click.echo(f"Next: add goldens, then rubriclib validate --strict {path}")


def _relative(path: Path) -> Path:
    """`path` relative to the working directory when it is inside it (shorter to read)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


@main.command("new-pack")
@click.argument("name")
@click.option(
    "--dir", "directory", default=".", show_default=True, type=click.Path(file_okay=False)
)
def new_pack(name: str, directory: str) -> None:
    """Scaffold a rubric pack: a Python distribution whose rubrics resolve by name once installed.

    \b
    Example:
      rubriclib new-pack acme-rubrics && pip install ./acme-rubrics
    """
    from rubriclib.rubrics import new_pack as scaffold_pack

    root = scaffold_pack(name, Path(directory))
    click.echo(f"Wrote the pack {root}")
    where = root if root.is_absolute() else f"./{root}"
    click.echo(f"  Install it: pip install {where}")
    click.echo(f"  Then: rubriclib show {name}-example")

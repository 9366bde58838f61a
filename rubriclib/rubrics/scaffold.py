"""`rubriclib new`: write a new, valid rubric file from a skeleton or an existing rubric."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from rubriclib.errors import InputError, Problem, RubricError
from rubriclib.files import write_new
from rubriclib.rubrics.golden import Golden
from rubriclib.rubrics.goldens_file import GoldensFile
from rubriclib.rubrics.registry import builtin_dir, builtin_names, load_goldens, load_rubric
from rubriclib.rubrics.rubric import (
    LABEL_TOOL,
    PAIRWISE_TOOL,
    PASS_FAIL_TOOLS,
    SCORE_TOOL,
    VERDICT_TOOL,
    WAZA_TOOLS,
    Rubric,
    parse_rubric_text,
    verdict_tool_names,
)
from rubriclib.validation import NAME_PATTERN

logger = logging.getLogger("rubriclib")

PASS_FAIL_VERDICT = """\
## Verdict
The verdict is pass when the response meets the rubric, with a one-line reason.
Otherwise it is fail, with a reason that starts with the failure kind."""

SCORE_VERDICT = """\
## Levels
- **5**: <fully meets the criteria>
- **4**: <meets them with a minor flaw>
- **3**: <partly meets them>
- **2**: <mostly misses them>
- **1**: <does not meet them at all>

## Verdict
The verdict is the integer score (1 to 5), with a one-line reason naming what kept the score
from being higher."""

LABELS = {"good": "pass", "needs-work": "fail", "bad": "fail"}
"""The labels `rubriclib new --scale labels` starts from, for the author to rename."""

LABELS_VERDICT = """\
## Labels
- **good**: <when the output earns this label>
- **needs-work**: <when the output earns this label>
- **bad**: <when the output earns this label>

## Verdict
The verdict is the one label that fits best, with a one-line reason naming what decided it."""

SKELETON = """\
# {title}

You judge whether the candidate output <the quality this rubric checks>.

## In scope
- <what the judge looks at>

## Out of scope
- <what the judge ignores, and which other rubric covers it>

## Decision procedure
1. <first check>
2. <second check>
3. Decide the verdict from the checks.

## Failure kinds
- **<failure kind>**: <what it looks like>

{verdict}
"""


def new_rubric(
    name: str,
    directory: Path,
    scale: str = "pass-fail",
    description: str | None = None,
    from_ref: str | None = None,
    checklist: bool = False,
) -> Path:
    """Write `directory/NAME.md` at version 0.1.0 and return its path; never overwrites.
    `checklist`: add an example checklist (to a copy, only when its source has none)."""
    _check_name(name, directory)
    header: dict[str, Any] = {"scale": scale}
    if from_ref is not None:
        source = load_rubric(from_ref)
        header["scale"] = source.scale
        header["description"] = description or source.description
        if source.pass_threshold is not None:
            header["pass_threshold"] = source.pass_threshold
        if source.labels is not None:
            header["labels"] = dict(source.labels)
        if source.requires:
            header["requires"] = list(source.requires)
        if source.checklist:
            header["checklist"] = [
                item.model_dump(exclude_defaults=True) for item in source.checklist
            ]
        goldens = load_goldens(source)
        body = source.body
    else:
        header["description"] = description or f"<one line: what {name} judges>"
        if scale == "1-5":
            header["pass_threshold"] = 4
        if scale == "labels":
            header["labels"] = dict(LABELS)
        goldens = _placeholder_goldens(scale)
        title = name.replace("-", " ").capitalize()
        verdicts = {"1-5": SCORE_VERDICT, "labels": LABELS_VERDICT}
        verdict = verdicts.get(scale, PASS_FAIL_VERDICT)
        body = SKELETON.format(title=title, verdict=verdict)
    if checklist and "checklist" not in header:
        if from_ref is None:
            header["requires"] = ["input"]  # what the example items need; the goldens have it
        header["checklist"] = _example_checklist(header["scale"], header.get("requires", []))
    header["goldens"] = [_as_written(golden) for golden in goldens]
    return write_rubric(name, directory, header, body)


def _check_name(name: str, directory: Path) -> None:
    if not re.match(NAME_PATTERN, name):
        raise RubricError.single(
            str(directory / f"{name}.md"),
            "name",
            f"{name!r} must be kebab-case (lowercase letters, digits, hyphens)",
        )


def write_rubric(
    name: str, directory: Path, header: dict[str, Any], body: str, comment: str = ""
) -> Path:
    """Write `directory/NAME.md` at version 0.1.0 with `header` after its name and version
    (and `comment`, YAML comment lines, above them) and return its path: validated first,
    written whole, never overwriting."""
    _check_name(name, directory)
    path = directory / f"{name}.md"
    header = {"name": name, "version": "0.1.0", **header}
    frontmatter = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=100)
    comment = f"{comment.rstrip()}\n" if comment else ""
    text = f"---\n{comment}{frontmatter}---\n{body.rstrip()}\n"
    absolute = Path(os.path.abspath(path))
    parse_rubric_text(text, absolute, f"file:{absolute}", str(path))  # nothing invalid is written
    if path.exists():
        raise RubricError.single(str(path), "file", "already exists; not overwritten")
    directory.mkdir(parents=True, exist_ok=True)
    try:  # linked into place only if still absent: nothing is overwritten, nor half-written
        write_new(path, text)
    except FileExistsError:
        raise RubricError.single(str(path), "file", "already exists; not overwritten") from None
    if (note := shadowing(name, path)) is not None:
        logger.warning("%s", note)
    return path


def shadowing(name: str, path: Path) -> str | None:
    """When the rubric file at `path` has a built-in's name: which of the two the name now
    resolves to (asked of the registry, whose folders all come before the built-ins), and how
    to reach the other one; None for any other name."""
    if name not in builtin_names():
        return None
    builtin = load_rubric(builtin_dir() / f"{name}.md")  # by its path: whatever shadows it
    try:
        resolved: Path | None = load_rubric(name).path
    except InputError:
        resolved = None
    same = f"{path} has the name of the built-in rubric {name}@{builtin.version}"
    if resolved is not None and resolved.resolve() == path.resolve():
        return (
            f"{same}, and takes its place: the name {name!r} now resolves to this file (rubric "
            f"folders are searched before the built-ins); a pin, {name}@{builtin.version}, "
            "still reaches the built-in. Choose another name unless you mean to replace it"
        )
    other = "the built-in" if resolved == builtin.path else (resolved or "another rubric")
    return (
        f"{same}, but the name {name!r} still resolves to {other}: refer to this file by its "
        "path, or choose another name"
    )


def _example_checklist(scale: str, requires: list[str]) -> list[dict[str, Any]]:
    """Two items, one failed by a yes and one by a no, each needing the rubric's `requires`,
    for the author to rewrite."""
    items: list[dict[str, Any]] = [
        {
            "id": "first-failure-kind",
            "question": "PLACEHOLDER: a yes/no question about the output that a yes fails, "
            "e.g. Does the output state a number, date or name the input does not give?",
            "fail_if": "yes",
        },
        {
            "id": "second-requirement",
            "question": "PLACEHOLDER: a yes/no question about the output that a no fails, "
            "e.g. Does the output answer every part of the input?",
            "fail_if": "no",
        },
    ]
    for item in items:
        if requires:
            item["requires"] = list(requires)
    if scale == "1-5":
        items[0]["weight"] = 2
    return items


def _as_written(golden: Golden) -> dict[str, Any]:
    """A golden as a rubric file holds it: a label's golden says `expected: LABEL`."""
    written = golden.model_dump(exclude_defaults=True)
    if golden.expected_label is not None:
        written["expected"] = written.pop("expected_label")
    return written


def _placeholder_goldens(scale: str) -> list[Golden]:
    stub = "PLACEHOLDER: replace with a real {} example and say why in `why`."
    if scale == "labels":
        return [
            Golden(
                name=f"example-{name}",
                input="PLACEHOLDER: the task the candidate was given.",
                output=f"PLACEHOLDER: an output labelled {name}.",
                expected=verdict,  # type: ignore[arg-type]
                expected_label=name,
                tags=["placeholder"],
                why=stub.format(name),
            )
            for name, verdict in LABELS.items()
        ]
    scores = {"pass": 5, "fail": 1} if scale == "1-5" else {"pass": None, "fail": None}
    return [
        Golden(
            name=f"example-{verdict}",
            input="PLACEHOLDER: the task the candidate was given.",
            output=f"PLACEHOLDER: an output that should {verdict}.",
            expected=verdict,
            expected_score=scores[verdict],
            tags=["placeholder"],
            why=stub.format(verdict),
        )
        for verdict in ("pass", "fail")
    ]


_UNFINISHED = re.compile(
    r"PLACEHOLDER|<one line: what|<the quality this rubric checks>|<what the judge "
    r"|<(?:first|second) check>|\*\*<failure kind>\*\*|<(?:fully meets|meets them with"
    r"|partly meets|mostly misses|does not meet them|when the output earns this label)"
)
"""The text `rubriclib new` leaves for the author to replace."""
ALL_VERDICT_TOOLS = re.compile(
    r"\b(?:"
    + "|".join((*PASS_FAIL_TOOLS, *WAZA_TOOLS, VERDICT_TOOL, SCORE_TOOL, PAIRWISE_TOOL, LABEL_TOOL))
    + r")\b"
)


def strict_problems(rubric: Rubric, goldens: list[Golden]) -> list[Problem]:
    """What `validate --strict` also fails: a scaffold not yet finished (placeholder text
    left, in checklist questions and worked examples too), goldens that do not cover both
    verdicts, a body that names a verdict tool that is not its own (see `foreign_tools`)."""
    label = rubric.source.removeprefix("file:")
    problems = []
    texts = {"description": rubric.description, "body": rubric.body}
    for index, item in enumerate(rubric.checklist):
        texts[f"checklist[{index}].question"] = item.question
    for key, listed in (("goldens", goldens), ("examples", rubric.examples)):
        for index, golden in enumerate(listed):
            for field in ("input", "output", "why"):
                texts[f"{key}[{index}].{field}"] = getattr(golden, field) or ""
    for field, text in texts.items():
        if _UNFINISHED.search(text):
            problems.append(Problem(label, field, "still holds scaffold placeholder text"))
    expected = {golden.expected_label or golden.expected for golden in goldens}
    for answer in rubric.labels or ("pass", "fail"):
        if answer not in expected:
            problems.append(Problem(label, "goldens", f"no golden expects {answer}"))
    for tool in foreign_tools(rubric):
        problems.append(
            Problem(
                label,
                "body",
                f"names `{tool}`, a tool not offered in every tool mode: word the verdict "
                "without tool names (the system message names the tools of the mode used)",
            )
        )
    return problems


def checked_goldens_file(
    path: Path, label: str, refs: Sequence[str]
) -> tuple[list[Golden], list[Rubric]]:
    """A goldens file `validate` was given, checked against the rubrics `refs` name, as
    `test-goldens --goldens` adds it to them; with none, against the rubric it belongs to
    (`_owning_rubric`), as `load_goldens` reads it. The rubrics it was checked against (none:
    it was read alone) beside its goldens, or a RubricError naming every problem."""
    read = GoldensFile.read(path, label)
    if refs:
        rubrics = [load_rubric(ref) for ref in refs]
        taken = [{golden.name for golden in load_goldens(rubric)} for rubric in rubrics]
        _, problems = read.added_to(list(zip(rubrics, taken, strict=True)))
    elif (owner := _owning_rubric(path)) is not None:
        rubrics = [owner]
        _, problems = read.checked_for(owner, {golden.name for golden in owner.goldens})
    else:
        rubrics, problems = [], []
    if problems:
        raise RubricError(problems)
    return read.goldens, rubrics


def _owning_rubric(path: Path) -> Rubric | None:
    """The rubric whose goldens file `path` is: `goldens/NAME.yaml` beside `rubrics/NAME.md`."""
    owner = path.parent.parent / "rubrics" / f"{path.stem}.md"
    if path.parent.name != "goldens" or not owner.is_file():
        return None
    rubric = load_rubric(str(owner))
    return rubric if rubric.name == path.stem else None


def foreign_tools(rubric: Rubric) -> list[str]:
    """The verdict tools the body names that some tool mode does not offer this rubric, in
    body order: a pass-fail body may name no tool (`named` mode offers `set_grade`, the others
    `set_grade_pass` / `set_grade_fail`), except a waza body its own pair (waza's convention,
    which the system message of `named` mode maps); 1-5 and pairwise bodies only their one
    tool."""
    own = set(verdict_tool_names(rubric.scale, rubric.body))
    if rubric.scale == "pass-fail" and WAZA_TOOLS[0] not in rubric.body:
        own = set()
    named = ALL_VERDICT_TOOLS.findall(rubric.body)
    return [tool for tool in dict.fromkeys(named) if tool not in own]


PACK_PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.21"]
build-backend = "hatchling.build"

[project]
name = "{name}"
version = "0.1.0"
description = "Rubrics for rubriclib."
requires-python = ">=3.11"
dependencies = ["rubriclib"]

# rubriclib finds installed packs through this entry point: the value names a package whose
# folder holds rubrics/ (and goldens/). The package is located, never imported.
[project.entry-points."rubriclib.packs"]
{name} = "{package}"

[tool.hatch.build.targets.wheel]
packages = ["{package}"]
"""

PACK_README = """\
# {name}

A rubric pack for rubriclib: every `{package}/rubrics/NAME.md` becomes resolvable by name once
the pack is installed (`pip install .`), with the source `pack:{name}:NAME`.

- Add a rubric: `rubriclib new NAME --dir {package}/rubrics`, then write its criteria and goldens.
- Check them: `rubriclib validate --strict {package}/rubrics/*.md`.
- Build the wheel: `python -m build` (or `pip wheel . --no-deps`).
"""


def new_pack(name: str, directory: Path) -> Path:
    """Scaffold a rubric pack NAME in `directory/NAME` that builds into a wheel; never
    overwrites an existing folder."""
    if not re.fullmatch(NAME_PATTERN, name):
        raise RubricError.single(
            name, "name", f"{name!r} must be kebab-case (lowercase letters, digits, hyphens)"
        )
    root = directory / name
    if root.exists():
        raise RubricError.single(str(root), "folder", "already exists; nothing was written")
    package = name.replace("-", "_")
    example = f"{name}-example"
    files = {
        root / "pyproject.toml": PACK_PYPROJECT.format(name=name, package=package),
        root / "README.md": PACK_README.format(name=name, package=package),
        root / package / "__init__.py": f'"""The {name} rubric pack for rubriclib."""\n',
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_new(path, text)
    new_rubric(example, root / package / "rubrics", "pass-fail", f"An example rubric of {name}.")
    return root

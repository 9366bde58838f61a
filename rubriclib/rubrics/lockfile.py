"""rubriclib.lock: the version and digest of every rubric a project uses, so a wording change
without a version bump is caught (`check`), and a frozen run refuses rubrics that moved. Both
ask one question, `lock_problem`, so `check` passes exactly when a frozen run would start.

The lock sits at the project root. It is YAML, sorted by name then source, with file sources
relative to the project root, so it diffs cleanly and means the same on every machine. Remote
rubrics are pinned apart, in its `remote:` list, by reference (`remote.pins`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import semver
import yaml

from rubriclib.errors import InputError, Problem, RubricError
from rubriclib.files import write_atomically
from rubriclib.rubrics.reading import load_yaml, read_text
from rubriclib.rubrics.registry import load_rubric, project_root
from rubriclib.rubrics.remote.pins import LOCK_NAME, RemotePin, pin_data, pin_problems, read_pins
from rubriclib.rubrics.rubric import Rubric

HEADER = (
    "# rubriclib.lock: the rubric versions and digests this project was checked against.\n"
    "# Written by `rubriclib lock`; `rubriclib check` compares the project with it.\n"
)
RELOCK = "run `rubriclib lock`"
FOUND_HERE = ("file:", "builtin:", "pack:")
"""The sources the registry finds a rubric again by (a rubric on RUBRICLIB_PATH is `file:`)."""


@dataclass(frozen=True)
class Locked:
    """One rubric as the lock remembers it."""

    name: str
    version: str
    digest: str
    source: str
    scale: str
    pass_threshold: int | None = None
    requires: tuple[str, ...] = ()

    @classmethod
    def of(cls, rubric: Rubric, root: Path) -> Locked:
        return cls(
            rubric.name,
            rubric.version,
            rubric.digest,
            portable_source(rubric.source, root),
            rubric.scale,
            rubric.pass_threshold,
            tuple(rubric.requires),
        )

    @property
    def reference(self) -> str:
        """How to find this rubric again: its file, or its name for a built-in."""
        return self.source.removeprefix("file:") if self.source.startswith("file:") else self.name


@dataclass
class CheckReport:
    """What `check` found: any problem fails it."""

    problems: list[str] = field(default_factory=list)
    ok: list[str] = field(default_factory=list)


def portable_source(source: str, root: Path) -> str:
    """A file source (`file:PATH`, or another reader's such as `waza-yaml:PATH`) relative to
    the project root when it is inside it, so the lock means the same in every clone."""
    scheme, _, location = source.partition(":")
    path = Path(location)
    if not path.is_absolute():
        return source
    try:
        return f"{scheme}:{path.relative_to(root).as_posix()}"
    except ValueError:
        return source


def lock_entries(used: list[Rubric], named: list[Rubric], root: Path | None = None) -> list[Locked]:
    """What `rubriclib lock [REF...]` writes, given the rubrics the project uses (`used`) and
    those its REFs name, loaded once (`named`). With no REF, those the project uses. With REFs
    (as `cargo update -p`): those entries added or refreshed, every rubric the project uses
    that the lock lacks added, every other entry kept as it was."""
    root = root or project_root()
    used = _local(used)
    if not named:
        return _sorted(Locked.of(rubric, root) for rubric in used)
    entries = {(e.name, e.source): e for e in read_lock(root)} if _has_lock(root) else {}
    for rubric in used:
        now = Locked.of(rubric, root)
        entries.setdefault((now.name, now.source), now)
    for rubric in _local(named):
        now = Locked.of(rubric, root)
        entries[(now.name, now.source)] = now
    return _sorted(entries.values())


def lock_pins(used: list[Rubric], named: list[Rubric], root: Path | None = None) -> list[RemotePin]:
    """The remote pins `rubriclib lock [REF...]` writes, as `lock_entries` does for the others:
    a reference the lock pins keeps its pin (it loads as pinned; `update` moves it)."""
    root = root or project_root()
    pins = read_pins(root) if named else {}
    for rubric in used + named:
        if rubric.remote is not None:
            pins[rubric.remote.reference] = RemotePin.of(rubric)
    return [pins[reference] for reference in sorted(pins)]


def _local(rubrics: list[Rubric]) -> list[Rubric]:
    """The rubrics that are not remote (those are pinned apart)."""
    return [rubric for rubric in rubrics if rubric.remote is None]


def _has_lock(root: Path) -> bool:
    return (root / LOCK_NAME).is_file()


def _sorted(entries: Iterable[Locked]) -> list[Locked]:
    """One entry per name and source, sorted by name then source."""
    return sorted(set(entries), key=lambda entry: (entry.name, entry.source))


def write_lock(
    entries: Iterable[Locked], root: Path | None = None, pins: Iterable[RemotePin] = ()
) -> Path:
    """Write the lock holding `entries` (sorted, one per name and source) and the remote
    rubrics' `pins` (by reference), and return it."""
    root = root or project_root()
    data: dict[str, Any] = {
        "lock_version": 1,
        "rubrics": [_entry_data(entry) for entry in _sorted(entries)],
    }
    if remote := sorted(pins, key=lambda pin: pin.reference):
        data["remote"] = [pin_data(pin) for pin in remote]
    text = HEADER + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    path = root / LOCK_NAME
    write_atomically(path, text)
    return path


def _entry_data(entry: Locked) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": entry.name,
        "version": entry.version,
        "digest": entry.digest,
        "source": entry.source,
        "scale": entry.scale,
    }
    if entry.pass_threshold is not None:
        data["pass_threshold"] = entry.pass_threshold
    if entry.requires:
        data["requires"] = list(entry.requires)
    return data


def read_lock(root: Path | None = None) -> list[Locked]:
    """The entries of the project's lock; a RubricError when it is missing or malformed."""
    path = (root or project_root()) / LOCK_NAME
    label = str(path)
    if not path.is_file():
        raise RubricError.single(label, "file", "does not exist; run `rubriclib lock` first")
    data = load_yaml(read_text(path, label), label, "lock")
    rows = data.get("rubrics") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise RubricError.single(label, "rubrics", "must be a list; run `rubriclib lock` again")
    entries = []
    for index, row in enumerate(rows):
        try:
            entry = Locked(**{**row, "requires": tuple(row.get("requires", ()))})
            semver.Version.parse(entry.version)
        except (TypeError, AttributeError, ValueError):
            raise RubricError.single(label, f"rubrics[{index}]", "is not a lock entry") from None
        entries.append(entry)
    return entries


def check(rubrics: list[Rubric], locked: list[Locked], root: Path | None = None) -> CheckReport:
    """Compare the project's rubrics with the lock (see `rubriclib check`): every rubric the
    project uses through `lock_problem`, then each other locked entry against the rubric it
    still resolves to (it may be locked for a command line the project scan cannot see)."""
    root = root or project_root()
    report = CheckReport()
    current = {(e.name, e.source): e for e in (Locked.of(r, root) for r in _local(rubrics))}
    unused = list(locked)
    for now in _sorted(current.values()):
        entry = entry_for(locked, now)
        if entry in unused:
            unused.remove(entry)
        _record(report, lock_problem(entry, now), now)
    for entry in unused:
        found = _find(entry, root)
        if found is None:
            report.problems.append(
                f"{entry.name}: locked at {entry.version} from {entry.source}, but it can no "
                f"longer be found; {RELOCK} if it was removed on purpose"
            )
        elif (found.name, found.source) not in current:  # else the project's entry covers it
            _record(report, lock_problem(entry, found), found)
    return report


def _record(report: CheckReport, problem: str | None, now: Locked) -> None:
    if problem is None:
        report.ok.append(f"{now.name}@{now.version}")
    else:
        report.problems.append(problem)


def entry_for(locked: list[Locked], now: Locked) -> Locked | None:
    """The lock's entry for a rubric: the one of its name and source, else one of its name
    (the name now resolves somewhere else), else None."""
    same_name = [entry for entry in locked if entry.name == now.name]
    exact = [entry for entry in same_name if entry.source == now.source]
    return (exact or same_name)[0] if same_name else None


def lock_problem(entry: Locked | None, now: Locked) -> str | None:
    """Why the lock does not hold the rubric `now` as it is (None when it does): the one
    comparison behind `rubriclib check` and a --frozen run, so the two cannot disagree."""
    if entry is None:
        return f"{now.name}@{now.version} ({now.source}) is not in the lock; {RELOCK}"
    if entry.source != now.source:
        return (
            f"{now.name}: locked from {entry.source}, now from {now.source} (locked at "
            f"{entry.version}, now {now.version}); {RELOCK}"
        )
    if (entry.version, entry.digest) == (now.version, now.digest):
        return None
    was, version = semver.Version.parse(entry.version), semver.Version.parse(now.version)
    if version < was:
        return f"{entry.name}: version went down from {entry.version} to {now.version}"
    if version == was:
        return (
            f"{entry.name}@{entry.version}: the judged text changed (digest "
            f"{entry.digest[:12]} -> {now.digest[:12]}) but the version did not; "
            f"{suggest_bump(entry, now)}"
        )
    return (
        f"{now.name}: locked at {entry.version}, now {now.version} (digest {entry.digest[:12]} "
        f"-> {now.digest[:12]}); {RELOCK}"
    )


def _find(entry: Locked, root: Path) -> Locked | None:
    """The rubric a locked entry resolves to now, or None: a name, a built-in, a pack's or a
    rubric file, found again; another reader's file (a waza YAML rubric) only by its eval's
    scan, so never here."""
    if not entry.source.startswith(FOUND_HERE):
        return None
    reference = entry.reference
    if entry.source.startswith("file:") and not Path(reference).is_absolute():
        reference = str(root / reference)
    try:
        return Locked.of(load_rubric(reference), root)
    except InputError:
        return None


def suggest_bump(entry: Locked, now: Locked) -> str:
    """The bump a change calls for: major when what a verdict means changed (scale, threshold,
    required fields, verdict tools), else patch for wording or minor for new criteria."""
    version = semver.Version.parse(entry.version)
    meaning = (entry.scale, entry.pass_threshold, entry.requires)
    if (now.scale, now.pass_threshold, now.requires) != meaning:
        return f"bump to {version.bump_major()} (the verdict's meaning changed)"
    return (
        f"bump to {version.bump_patch()} for a wording change, {version.bump_minor()} for new "
        f"criteria, or {version.bump_major()} if a verdict now means something else"
    )


def frozen_problems(rubrics: list[Rubric], root: Path | None = None) -> list[Problem]:
    """One problem per rubric the lock does not hold as it is (`lock_problem`, as `check`
    finds it): a frozen run refuses to start on any of them."""
    root = root or project_root()
    label = str(root / LOCK_NAME)
    try:
        locked = read_lock(root)
    except RubricError as error:
        return error.problems
    problems = [
        Problem(problem.source, problem.field, f"{problem.message} (--frozen)")
        for problem in pin_problems(rubrics, root)
    ]
    for rubric in _local(rubrics):
        now = Locked.of(rubric, root)
        if (problem := lock_problem(entry_for(locked, now), now)) is not None:
            problems.append(Problem(label, now.name, f"{problem} (--frozen)"))
    return problems

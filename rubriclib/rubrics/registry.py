"""Resolve a rubric reference (name, name@pin, or path) to a loaded Rubric."""

from __future__ import annotations

import difflib
import functools
import importlib.metadata
import importlib.util
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rubriclib.config import find_project, search_paths
from rubriclib.errors import Problem, RubricError
from rubriclib.rubrics.golden import Golden
from rubriclib.rubrics.goldens_file import GoldensFile
from rubriclib.rubrics.remote.reference import is_remote_reference, taken_as_path
from rubriclib.rubrics.rubric import Rubric, judged_digest, parse_rubric
from rubriclib.validation import NAME_PATTERN

if TYPE_CHECKING:
    import semver

_ROOM_DIR = Path(__file__).resolve().parent


def builtin_dir() -> Path:
    """The built-in rubrics: inside the installed package (`rubrics/builtin/`, its goldens in
    `rubrics/goldens/`), or the repo's top level in a checkout."""
    packaged = _ROOM_DIR / "builtin"
    return packaged if packaged.is_dir() else _ROOM_DIR.parent.parent / "rubrics"


def project_root() -> Path:
    """The nearest folder, from the working directory up, holding rubriclib.toml or
    pyproject.toml; the working directory when there is none."""
    return find_project()[0]


def project_rubrics_dir() -> Path:
    """The project's own rubric folder, `<project root>/rubrics`: where `rubriclib new` writes,
    searched by name first."""
    return project_root() / "rubrics"


def builtin_names() -> list[str]:
    """Names of the built-in rubrics."""
    return [path.stem for path in _rubric_files(builtin_dir())]


def is_path_reference(ref: str) -> bool:
    """Whether `ref` names a file rather than a rubric name or a remote rubric (see
    `remote.reference` for the rule telling a remote reference from a path)."""
    if is_remote_reference(ref):
        return False
    return (
        ref.endswith(".md")
        or ref.startswith((".", "/", "~"))
        or "/" in ref
        or (os.sep in ref)
        or bool(os.altsep and os.altsep in ref)
    )


def load_rubric(
    ref: str | os.PathLike[str], base_dir: str | os.PathLike[str] | None = None
) -> Rubric:
    """Load the rubric `ref` names: `NAME`, `NAME@SPEC`, or a path (relative to `base_dir`).

    Args:
        ref: A name (`groundedness`), a pinned name (`groundedness@^1`, `@1.0.0`, `@~1.2`,
            `@>=1.0.0,<2`) or a path (ends in `.md`, starts with `.`, `/` or `~`, or holds a
            path separator; a `pathlib.Path` always is). A name is looked up in the
            project's `rubrics/`, the configured and `RUBRICLIB_PATH` folders, installed
            packs, then the built-ins.
        base_dir: The folder a relative path is resolved against (an eval file's); None: the
            working directory.

    Raises:
        RubricError: An unknown name, no version fitting the pin, or a file that is not a
            valid rubric, with every problem.
    """
    given_path = isinstance(ref, os.PathLike)
    if given_path:
        ref = os.fspath(ref)
    if not isinstance(ref, str) or not ref.strip():
        raise RubricError.single(repr(ref), "reference", "must be a rubric name or a file path")
    ref = ref.strip()
    if not given_path and is_remote_reference(ref):
        from rubriclib.rubrics.remote.loading import load_remote

        return load_remote(ref)
    if given_path or is_path_reference(ref):
        path = Path(ref).expanduser()
        if not path.is_absolute():
            path = Path(base_dir if base_dir is not None else os.getcwd()).expanduser() / path
        path = Path(os.path.abspath(path))
        if not path.is_symlink() and not path.exists():
            raise RubricError.single(str(path), "file", f"does not exist ({taken_as_path(ref)})")
        return parse_rubric(path, source=f"file:{path}", label=str(path))
    name, _, spec = ref.partition("@")
    if not spec:
        return _load_by_name(name.strip(), ref)
    return _load_pinned(name.strip(), spec.strip(), ref)


def _load_pinned(name: str, spec: str, ref: str) -> Rubric:
    """The highest version satisfying `spec` among every candidate named `name` on the search
    path: each folder's NAME.md and any older NAME@VERSION.md kept beside it."""
    if not re.fullmatch(NAME_PATTERN, name):
        _load_by_name(name, ref)  # says why the name is not one
    candidates = [
        _load_from_dir(path, folder, origin)
        for folder, origin in _lookup_order()
        for path in _versions_in(folder, name)
    ]
    if not candidates:
        _load_by_name(name, ref)  # an unknown name gets the usual "did you mean" answer
    fitting = [r for r in candidates if _version_satisfies(r.version, spec, ref)]
    if not fitting:
        found = ", ".join(sorted({r.version for r in candidates}, key=semver_key))
        message = f"{name} is at version {found}, which is not {spec}"
        raise RubricError.single(ref, "version", message)
    return max(fitting, key=lambda rubric: semver_key(rubric.version))


def semver_key(version: str) -> semver.Version:
    """A sort key that orders versions as semver does."""
    import semver

    return semver.Version.parse(version)


def _versions_in(folder: Path, name: str) -> list[Path]:
    """NAME.md and NAME@VERSION.md in `folder`, if any."""
    if not folder.is_dir():
        return []
    files = [folder / f"{name}.md", *sorted(folder.glob(f"{name}@*.md"))]
    return [path for path in files if path.is_file()]


def list_rubrics() -> list[Rubric]:
    """Every resolvable rubric, one per name (the project's folder first, then RUBRICLIB_PATH,
    then the built-ins); a RubricError with every problem when any file is broken."""
    rubrics, problems = scan_rubrics()
    if problems:
        raise RubricError(problems)
    return rubrics


def scan_rubrics(all_versions: bool = False) -> tuple[list[Rubric], list[Problem]]:
    """Every resolvable rubric that loads (with `all_versions`, also the older NAME@VERSION.md
    files and the versions a name shadows), and the problems of those that do not, so one
    broken file never hides the rest. Sorted by name, newest version first."""
    every, defaults, problems = scan_library(all_versions)
    return (every if all_versions else defaults), problems


def scan_library(
    all_versions: bool = True,
) -> tuple[list[Rubric], list[Rubric], list[Problem]]:
    """One pass over the library, each file read once: every rubric that loads (with
    `all_versions`, as `scan_rubrics` says), the ones a bare name resolves to, and the problems
    of the files that do not load; both lists sorted by name, newest version first."""
    found: dict[str, Rubric] = {}
    defaults: dict[str, Rubric] = {}
    problems: list[Problem] = []
    for directory, origin in _lookup_order():
        named = _rubric_files(directory)
        pinned = sorted(directory.glob("*@*.md")) if all_versions and directory.is_dir() else []
        for path in named + pinned:
            try:
                rubric = _load_from_dir(path, directory, origin)
            except RubricError as error:
                problems.extend(error.problems)
                continue
            found.setdefault(f"{rubric.name}@{rubric.version}", rubric)
            if path in named:
                defaults.setdefault(rubric.name, rubric)
    return _by_name(found.values()), _by_name(defaults.values()), problems


def _by_name(rubrics: Iterable[Rubric]) -> list[Rubric]:
    """Sorted by name, newest version first."""
    ordered = sorted(rubrics, key=lambda r: semver_key(r.version), reverse=True)
    return sorted(ordered, key=lambda rubric: rubric.name)


def load_goldens(rubric: Rubric) -> list[Golden]:
    """The rubric's frontmatter goldens plus those in `<its folder>/../goldens/NAME.yaml`,
    checked exactly as the frontmatter's are (`GoldensFile.checked_for`)."""
    path = goldens_path(rubric)
    if not path.exists():
        return list(rubric.goldens)
    label = (
        f"builtin:goldens/{rubric.name}.yaml" if rubric.source.startswith("builtin:") else str(path)
    )
    own = {golden.name for golden in rubric.goldens}
    extra, problems = GoldensFile.read(path, label).checked_for(rubric, taken=own)
    if problems:
        raise RubricError(problems)
    return list(rubric.goldens) + extra


def goldens_path(rubric: Rubric) -> Path:
    """Where a rubric's goldens file sits: `<its folder>/../goldens/NAME.yaml`."""
    return rubric.path.parent.parent / "goldens" / f"{rubric.name}.yaml"


def _lookup_order() -> list[tuple[Path, str]]:
    """(folder, origin) in the order names are looked up: the project's rubrics/, the configured
    and RUBRICLIB_PATH folders (origin ""), installed packs ("pack:DISTRIBUTION"), built-ins."""
    builtins = builtin_dir()
    project = project_rubrics_dir()
    own = [project] if project.is_dir() and not _same_folder(project, builtins) else []
    folders = [(folder, "") for folder in (*own, *search_paths())]
    return [*folders, *pack_dirs(), (builtins, "builtin")]


@functools.cache
def pack_dirs() -> tuple[tuple[Path, str], ...]:
    """The rubrics/ folder of every installed pack: a distribution declaring an entry point in
    the group `rubriclib.packs` that names a package holding `rubrics/` (and `goldens/`). The
    package is located, never imported."""
    found = []
    for entry in importlib.metadata.entry_points(group="rubriclib.packs"):
        spec = importlib.util.find_spec(entry.value)
        locations = list(spec.submodule_search_locations or []) if spec else []
        distribution = entry.dist.name if entry.dist is not None else entry.name
        for location in locations:
            if (Path(location) / "rubrics").is_dir():
                found.append((Path(location) / "rubrics", f"pack:{distribution}"))
    return tuple(sorted(found, key=lambda pair: pair[1]))


def _same_folder(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve()
    except OSError:
        return False


def _rubric_files(directory: Path) -> list[Path]:
    """The `NAME.md` files of a search folder whose stem is a valid rubric name (no README.md)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob("*.md") if re.fullmatch(NAME_PATTERN, p.stem))


def _load_by_name(name: str, ref: str) -> Rubric:
    if not re.fullmatch(NAME_PATTERN, name):
        raise RubricError.single(
            ref, "reference", f"{name!r} is not a rubric name (kebab-case) nor a path ending in .md"
        )
    order = _lookup_order()
    for position, (directory, origin) in enumerate(order):
        if (directory / f"{name}.md").exists():
            rubric = _load_from_dir(directory / f"{name}.md", directory, origin)
            if origin.startswith("pack:"):
                _refuse_a_second_pack(name, ref, rubric, order[position + 1 :])
            return rubric
    available = sorted(
        {path.stem for directory, _ in _lookup_order() for path in _rubric_files(directory)}
    )
    close = difflib.get_close_matches(name, available, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise RubricError.single(
        ref, "reference", f"no rubric named {name!r}.{hint} Available: {', '.join(available)}"
    )


def _refuse_a_second_pack(name: str, ref: str, first: Rubric, rest: list[tuple[Path, str]]) -> None:
    """Two packs defining one name is ambiguous: a bare name refuses to guess."""
    for directory, origin in rest:
        if origin.startswith("pack:") and (directory / f"{name}.md").exists():
            raise RubricError.single(
                ref,
                "reference",
                f"two packs define {name!r}: {first.source} and {origin}:{name}; pin a version "
                f"({name}@VERSION) or put the one you want in the project's rubrics/",
            )


def _load_from_dir(path: Path, directory: Path, origin: str) -> Rubric:
    """Load NAME.md (or an older NAME@VERSION.md) from a search folder, refusing links that lead
    outside the folder, and a file whose name or version disagrees with its frontmatter."""
    name, _, version = path.stem.partition("@")
    label = f"{origin}:{path.stem}" if origin else str(Path(os.path.abspath(path)))
    try:
        inside = path.resolve().is_relative_to(directory.resolve())
    except (OSError, RuntimeError):
        inside = False
    if not inside:
        raise RubricError.single(label, "file", f"resolves outside its folder {directory}")
    source = label if origin else f"file:{label}"
    rubric = parse_rubric(path, source=source, label=label)
    if rubric.name != name:
        raise RubricError.single(
            label, "name", f"{rubric.name!r} does not match the file name {path.name!r}"
        )
    if version and rubric.version != version:
        raise RubricError.single(
            label, "version", f"{rubric.version!r} does not match the file name {path.name!r}"
        )
    return rubric


_CLAUSE = re.compile(
    r"^(\^|~|>=|<=|>|<|==|!=|=)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?$"
)


def _version_satisfies(version: str, spec: str, ref: str) -> bool:
    """Whether `version` meets every comma-separated clause of `spec` (npm/cargo style)."""
    import semver  # only pins need it

    actual = semver.Version.parse(version)
    clauses = [clause.strip() for clause in spec.split(",")]
    for clause in clauses:
        match = _CLAUSE.match(clause)
        if not match:
            raise RubricError.single(
                ref,
                "version",
                f"{clause!r} is not a version pin; use 1.0.0, ^1, ~1.2, >=1.0.0,<2 and the like",
            )
        if not all(check(actual) for check in _clause_checks(*match.groups())):
            return False
    return True


def _clause_checks(
    operator: str | None, major: str, minor: str | None, patch: str | None, prerelease: str | None
) -> list[Callable[[semver.Version], bool]]:
    import semver

    low = semver.Version(
        int(major), int(minor or 0), int(patch or 0), (prerelease or "")[1:] or None
    )
    given = 1 + (minor is not None) + (patch is not None)
    if operator in (None, "=", "==") and given == 3:
        return [lambda v: v == low]
    if operator in (None, "=", "=="):
        operator = "~"
    if operator == "^":
        if low.major > 0 or given == 1:
            high = low.bump_major()
        elif low.minor > 0 or given == 2:
            high = low.bump_minor()
        else:
            high = low.bump_patch()
        return [lambda v: v >= low, lambda v: v < high]
    if operator == "~":
        high = low.bump_major() if given == 1 else low.bump_minor()
        return [lambda v: v >= low, lambda v: v < high]
    compare = {
        ">=": lambda v: v >= low,
        "<=": lambda v: v <= low,
        ">": lambda v: v > low,
        "<": lambda v: v < low,
        "!=": lambda v: v != low,
    }
    return [compare[operator]]


def rubric_from_prompt(
    text: str,
    name: str,
    source: str,
    path: Path,
    *,
    template: Literal["rubriclib", "letta"] = "rubriclib",
    system_prompt: str | None = None,
) -> Rubric:
    """An unversioned pass-fail rubric from a plain judge prompt (an inline `prompt:`, a waza
    prompt, a letta-evals prompt). Its identity says so: version 0.0.0, `source` such as
    `prompt:FILE`, and a digest of its text (and system prompt) like any rubric's.
    `{input}`, `{context}`, `{ground_truth}` and `{submission}` in the text place the values,
    as in any rubric body; a `letta` template keeps its text exactly and is filled as letta
    fills it (see `render`)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "prompt"
    body = text if template == "letta" else text.strip("\n")
    judged = body if system_prompt is None else f"{system_prompt}\n\n{body}"
    if template == "letta":  # the same text, filled another way, is another rubric
        judged = f"letta-evals template\n{judged}"
    return Rubric(
        name=slug,
        version="0.0.0",
        scale="pass-fail",
        description=f"The judge prompt of {name}, not a versioned rubric.",
        body=body,
        source=source,
        path=path,
        digest=judged_digest("pass-fail", None, [], judged),
        template=template,
        system_prompt=system_prompt,
        citations="off" if template == "letta" else "optional",  # letta shows no block ids
    )

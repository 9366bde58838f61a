"""The lock's pins of remote rubrics: the `remote:` list of rubriclib.lock, one entry per
reference (so two remote rubrics of one name, or one shadowing a built-in, never collide),
each holding the commit (or URL) the reference resolved to, the sha256 of the file, and the
rubric's name, version and digest. A run uses the pinned content; `check` and `--frozen`
refuse a reference missing from the lock, a floating one, or content differing from its pin.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rubriclib.errors import Problem, RubricError
from rubriclib.rubrics.reading import load_yaml, read_text
from rubriclib.rubrics.rubric import Rubric

LOCK_NAME = "rubriclib.lock"
FLOATING_KINDS = ("branch", "head")
"""What a floating reference's REV is: a branch, or none (the default branch)."""


@dataclass(frozen=True)
class RemotePin:
    """One remote rubric as the lock pins it."""

    reference: str
    commit: str
    """The commit REV resolved to; the URL, for one https file."""
    kind: str
    """What REV was: `tag`, `commit`, `branch`, `head` (no REV) or `file` (one https file)."""
    sha256: str
    name: str
    version: str
    digest: str

    @classmethod
    def of(cls, rubric: Rubric) -> RemotePin:
        """The pin of a remote rubric as loaded."""
        origin = rubric.remote
        if origin is None:
            raise ValueError(f"{rubric.name} is not a remote rubric")
        return cls(
            origin.reference,
            origin.commit,
            origin.kind,
            origin.sha256,
            rubric.name,
            rubric.version,
            rubric.digest,
        )

    @property
    def floating(self) -> bool:
        return self.kind in FLOATING_KINDS


def pin_data(pin: RemotePin) -> dict[str, Any]:
    """A pin as the lock writes it."""
    return asdict(pin)


def read_pins(root: Path) -> dict[str, RemotePin]:
    """The lock's pins by reference; none when there is no lock; a RubricError naming the
    entry when one is malformed."""
    path = root / LOCK_NAME
    if not path.is_file():
        return {}
    label = str(path)
    data = load_yaml(read_text(path, label), label, "lock")
    rows = data.get("remote", []) if isinstance(data, dict) else []
    if not isinstance(rows, list):
        raise RubricError.single(label, "remote", "must be a list; run `rubriclib lock` again")
    pins = {}
    for index, row in enumerate(rows):
        try:
            pin = RemotePin(**row)
        except TypeError:
            raise RubricError.single(label, f"remote[{index}]", "is not a lock entry") from None
        pins[pin.reference] = pin
    return pins


def pin_problems(rubrics: list[Rubric], root: Path) -> list[Problem]:
    """Why the lock does not pin each remote rubric of `rubrics` as it is: missing, floating,
    or content (sha256) differing from the pin. A frozen run and `check` refuse on any."""
    label = str(root / LOCK_NAME)
    pins = read_pins(root)
    problems = []
    for rubric in rubrics:
        if (origin := rubric.remote) is None:
            continue
        pin = pins.get(origin.reference)
        if pin is None:
            why = "is not in the lock; run `rubriclib lock`"
        elif pin.floating or origin.kind in FLOATING_KINDS:
            named = "names no revision" if pin.kind == "head" else f"names a {pin.kind}"
            why = f"is floating ({named}); pin a tag or a commit (REF@TAG#PATH)"
        elif pin.sha256 != origin.sha256:
            found, wanted = origin.sha256[:12], pin.sha256[:12]
            why = f"content differs from the lock (sha256 {found}, locked {wanted})"
        else:
            continue
        problems.append(Problem(label, origin.reference, f"{why} (taken as a remote reference)"))
    return problems

"""`rubriclib update`: move the lock's remote pins to what their references resolve to now,
each move shown as a version change and a unified diff of the rubric file (what the judge will
now be told), and refused, as `check` refuses a local rubric, when the judged text changed
without a version bump (`lockfile.lock_problem`, the one rule of both).
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from pathlib import Path

import semver

from rubriclib.errors import Problem, RubricError
from rubriclib.rubrics.lockfile import Locked, lock_problem, read_lock, write_lock
from rubriclib.rubrics.remote.loading import load_remote
from rubriclib.rubrics.remote.pins import LOCK_NAME, RemotePin, read_pins
from rubriclib.rubrics.rubric import Rubric


@dataclass(frozen=True)
class PinMove:
    """One reference's pin, before and after `update`."""

    reference: str
    was: Rubric
    now: Rubric

    @property
    def moved(self) -> bool:
        return self.was.remote != self.now.remote

    @property
    def summary(self) -> str:
        """`REF: NAME 1.0.0 -> 1.1.0 (commit abc -> def)`, or that it is unchanged."""
        was, now = self.was.remote, self.now.remote
        assert was is not None and now is not None
        if not self.moved:
            return f"{self.reference}: {self.now.name} {self.now.version}, unchanged"
        return (
            f"{self.reference}: {self.was.name} {self.was.version} -> {self.now.name} "
            f"{self.now.version} (commit {was.commit[:12]} -> {now.commit[:12]})"
        )

    def diff(self) -> str:
        """A unified diff of the rubric file, locked against now ("" when the same)."""
        lines = difflib.unified_diff(
            (self.was.text or "").splitlines(keepends=True),
            (self.now.text or "").splitlines(keepends=True),
            f"{self.reference} (locked {self.was.version})",
            f"{self.reference} (now {self.now.version})",
        )
        return "".join(lines)

    def refusal(self) -> str | None:
        """Why the pin may not move (the judged text changed but the version did not, or the
        version went down), as `check` says it of a local rubric; None when it may."""
        was, now = (
            dataclasses.replace(Locked.of(rubric, Path("/")), source=self.reference)
            for rubric in (self.was, self.now)
        )
        if was.digest == now.digest or _newer(now.version, was.version):
            return None
        return lock_problem(was, now)


def _newer(version: str, than: str) -> bool:
    return semver.Version.parse(version) > semver.Version.parse(than)


def pin_moves(refs: list[str], root: Path) -> list[PinMove]:
    """For each reference (every pinned one when `refs` is empty): its rubric as locked and as
    it resolves now. A reference the lock does not pin is a RubricError."""
    pins = read_pins(root)
    unknown = [ref for ref in refs if ref not in pins]
    if unknown:
        label = str(root / LOCK_NAME)
        raise RubricError(
            [Problem(label, ref, "is not pinned; run `rubriclib lock` first") for ref in unknown]
        )
    chosen = refs or sorted(pins)
    return [PinMove(ref, load_remote(ref), load_remote(ref, locked=False)) for ref in chosen]


def write_moves(moves: list[PinMove], root: Path) -> Path:
    """The lock with the moved pins replaced (every other entry kept), written whole."""
    pins = read_pins(root)
    for move in moves:
        pins[move.reference] = RemotePin.of(move.now)
    return write_lock(read_lock(root), root, pins=pins.values())

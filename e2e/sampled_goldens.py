"""`rubriclib` with `test-goldens` judging a sample of each rubric's goldens: CI's e2e run.

A harness tool for `make e2e`, not part of rubriclib. Run it in place of `rubriclib`, with the
same arguments:

    .venv/bin/python e2e/sampled_goldens.py test-goldens --format json --no-cache

Why: on 2 cores the 135M model takes 5-9 s a judgment, so every golden of the 16 built-ins
(290) took 26 minutes, most of CI. The e2e asserts the protocol, not the verdicts, and one
golden per expected answer shows it for each rubric: a pass and a fail (the verdict a
`citations: required` rubric must quote for, or be corrected), and each of a pairwise rubric's
winners; 33 judgments, 3-5 minutes. Of the goldens expecting each answer, the one whose
name hashes lowest (sha256) is judged: the same on every machine and in any order, and an added
golden changes the sample only if it hashes lower. `make e2e-full` judges every golden.

The launcher narrows `load_goldens`, which `test-goldens` looks up in the registry as it plans
the run; the flags, judge, engine, report and exit code are the CLI's own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from rubriclib import Golden

PER_ANSWER = 1
"""Goldens judged per expected answer of a rubric."""


def expected_answer(golden: Golden) -> str:
    """The golden's expected verdict; on a pairwise golden, its expected winner."""
    return golden.expected_winner or golden.expected


def name_hash(golden: Golden) -> str:
    return hashlib.sha256(golden.name.encode()).hexdigest()


def sample_goldens(goldens: Sequence[Golden]) -> list[Golden]:
    """Of the goldens expecting each answer, the PER_ANSWER whose names hash lowest; in their
    original order."""
    chosen: set[str] = set()
    for answer in {expected_answer(golden) for golden in goldens}:
        expecting = [golden for golden in goldens if expected_answer(golden) == answer]
        chosen.update(golden.name for golden in sorted(expecting, key=name_hash)[:PER_ANSWER])
    return [golden for golden in goldens if golden.name in chosen]


def main() -> None:
    from rubriclib.rubrics import registry

    every_golden = registry.load_goldens
    registry.load_goldens = lambda rubric: sample_goldens(every_golden(rubric))
    from rubriclib.cli import main as rubriclib

    rubriclib(prog_name="rubriclib")


if __name__ == "__main__":
    main()

"""A remote reference -> a Rubric."""

from __future__ import annotations

from rubriclib.rubrics.remote.reference import parse_reference, refuse
from rubriclib.rubrics.rubric import Rubric


def load_remote(ref: str) -> Rubric:
    """The rubric a remote reference names."""
    parse_reference(ref)
    refuse(ref, "reference", "fetching remote rubrics is not supported yet")

"""The citations of judged results, counted: every citation a result holds wherever its details
keep it (its own, each vote's, each checklist item's, each pairwise order's), how many were
verified, and the unverified ones named by what was judged."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rubriclib.judging import GradeResult, given_citations


def verified_citations(result: GradeResult) -> list[dict[str, Any]]:
    """The citations of `result` that rubriclib verified against the blocks it rendered."""
    return [c for c in given_citations(result.details) if c.get("status") == "verified"]


@dataclass(frozen=True)
class CitationCounts:
    """The citations judges gave over some results: how many, how many verified, and each
    unverified one with what was judged (`{golden}` or `{id, where}`, then block, quote and
    found_in or note where known)."""

    given: int = 0
    verified: int = 0
    unverified_citations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def unverified(self) -> int:
        return self.given - self.verified

    @property
    def verified_share(self) -> float | None:
        """Verified over given; None when no citation was given."""
        return self.verified / self.given if self.given else None


def count_citations(judged: Iterable[tuple[Mapping[str, Any], GradeResult]]) -> CitationCounts:
    """The citations of each result, counted; `judged` pairs each result with what names it in
    the list of unverified citations (`{"golden": name}`, `{"id": ..., "where": ...}`)."""
    given = verified = 0
    unverified: list[dict[str, Any]] = []
    for name, result in judged:
        for citation in given_citations(result.details):
            given += 1
            if citation.get("status") == "verified":
                verified += 1
                continue
            kept: dict[str, Any] = {
                key: citation[key] for key in ("found_in", "note") if key in citation
            }
            unverified.append(
                {**name, "block": citation.get("block"), "quote": citation.get("quote"), **kept}
            )
    return CitationCounts(given, verified, unverified)

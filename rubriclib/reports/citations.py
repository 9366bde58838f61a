"""A judgment's citations as the reports show them: each citation its votes, pairwise orders,
checklist items or panel judges gave (with who gave it), how many verified per grader, whether
they changed between two runs, and each verified quote's span as a page shows its block (where
the block is in the messages is `render.item_block_spans`). Nothing in a results file is trusted:
an entry of the wrong shape is shown as an unverified citation, never an error."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rubriclib.judging import given_citations
from rubriclib.reports.common import xml_safe


def citation_counts(lines: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A grader's citations over its judgments: how many were given, how many verified, and
    the verified share (None when none were given)."""
    given = verified = 0
    for line in lines:
        for citation in given_citations(line["result"]["details"]):
            given += 1
            verified += citation["status"] == "verified"
    share = verified / given if given else None
    return {"citations": given, "citations_verified": verified, "citations_share": share}


def citations_change(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Whether a judgment's citations changed between two runs' lines: `same citations`, or
    `citations changed: 1 of 1 verified → 0 of 2 verified`; None when neither run gave any."""
    before = given_citations(old["result"]["details"])
    after = given_citations(new["result"]["details"])
    if not before and not after:
        return None
    if _compared(before) == _compared(after):
        return "same citations"
    return f"citations changed: {_verified_text(before)} → {_verified_text(after)}"


def _compared(citations: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((str(c["block"]), c["quote"], c["status"], c["by"]) for c in citations)


def _verified_text(citations: list[dict[str, Any]]) -> str:
    if not citations:
        return "none"
    verified = sum(citation["status"] == "verified" for citation in citations)
    return f"{verified} of {len(citations)} verified"


def shown_span(text: str, span: list[int]) -> list[int]:
    """`span` (character offsets into `text`) as offsets into the text a page shows, where
    `xml_safe` shows a control character as an escape of several characters."""
    start, end = (min(max(offset, 0), len(text)) for offset in span)
    return [len(xml_safe(text[:start])), len(xml_safe(text[:end]))]


def cell_citations(details: dict[str, Any], output: Any) -> list[dict[str, Any]]:
    """A judgment's citations for its detail panel; a verified one of the output gets its
    `shown` span in `output` (the row's output, when the results line holds it)."""
    found = given_citations(details)
    if isinstance(output, str):
        for citation in found:
            if citation["block"] == "output" and "span" in citation:
                citation["shown"] = shown_span(output, citation["span"])
    return found


def place_citations(
    citations: list[dict[str, Any]], request: int, blocks: dict[str, str], pairwise: bool
) -> None:
    """Give each verified citation of `request`'s blocks (id to text) its `shown` span there:
    on a pairwise rubric, a citation of A or B only in the order it was given in."""
    for citation in citations:
        block = citation["block"]
        if block not in blocks or "span" not in citation:
            continue
        if citation.get("request", 0) != request or (
            pairwise and block in ("A", "B") and "request" not in citation
        ):
            continue
        citation["shown"] = shown_span(blocks[block], citation["span"])

"""A judgment's citations as the reports show them: each citation its votes, pairwise orders,
checklist items or panel judges gave (with who gave it), how many verified per grader, whether
they changed between two runs, and each verified quote's span as a page shows its block (where
the block is in the messages is `render.item_block_spans`'). Nothing in a results file is trusted:
an entry of the wrong shape is shown as an unverified citation, never an error."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rubriclib.judging.result import ORDERS
from rubriclib.reports.common import xml_safe

STATUSES = ("verified", "unverified")


def citations_in(details: dict[str, Any]) -> list[dict[str, Any]]:
    """Every citation of one judgment, each `{by, block, quote, status}` and what it has of
    `span`, `found_in`, `note` and `request` (a pairwise order: 0 output first, 1 baseline
    first). Taken from the most detailed place that holds any (panel judges, votes, pairwise
    orders, checklist items, else the judgment's own), so none is counted twice."""
    panel = details.get("panel")
    if isinstance(panel, dict) and isinstance(panel.get("judges"), list):
        found = [
            labelled(citation, str(member.get("model")))
            for member in panel["judges"]
            if isinstance(member, dict)
            for citation in citations_in(member)
        ]
        if found:
            return found
    for found in (_of_votes(details), _of_orders(details), _of_checklist(details)):
        if found:
            return found
    return [entry(citation) for citation in _listed(details.get("citations"))]


def _of_votes(details: dict[str, Any]) -> list[dict[str, Any]]:
    votes = details.get("votes")
    lists = votes.get("citations") if isinstance(votes, dict) else None
    if not isinstance(lists, list):
        return []
    return [
        entry(citation, f"vote {index + 1}")
        for index, listed in enumerate(lists)
        for citation in _listed(listed)
    ]


def _of_orders(details: dict[str, Any]) -> list[dict[str, Any]]:
    pairwise = details.get("pairwise")
    orders = pairwise.get("orders") if isinstance(pairwise, dict) else None
    if not isinstance(orders, list):
        return []
    found = []
    for index, order in enumerate(orders[: len(ORDERS)]):
        if isinstance(order, dict):
            for citation in _listed(order.get("citations")):
                found.append(entry(citation, ORDERS[index]) | {"request": index})
    return found


def _of_checklist(details: dict[str, Any]) -> list[dict[str, Any]]:
    items = details.get("checklist")
    if not isinstance(items, list):
        return []
    return [
        entry(citation, f"item {item.get('id')}")
        for item in items
        if isinstance(item, dict)
        for citation in _listed(item.get("citations"))
    ]


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def labelled(citation: dict[str, Any], by: str) -> dict[str, Any]:
    """`citation` with `by` put in front of who gave it (a panel judge before its vote)."""
    return citation | {"by": f"{by}, {citation['by']}" if citation["by"] else by}


def entry(citation: Any, by: str = "") -> dict[str, Any]:
    """One checked citation as a page shows it: only the fields of the contract, each of its
    type (a span only on a verified citation, two whole numbers in order)."""
    if not isinstance(citation, dict):
        return {"by": by, "block": None, "quote": str(citation), "status": "unverified"}
    block = citation.get("block")
    status = citation.get("status")
    shown: dict[str, Any] = {
        "by": by,
        "block": block if isinstance(block, str) else None,
        "quote": str(citation.get("quote", "")),
        "status": status if status in STATUSES else "unverified",
    }
    span = citation.get("span")
    if shown["status"] == "verified" and isinstance(span, list) and _is_span(span):
        shown["span"] = list(span)
    for key in ("found_in", "note"):
        if isinstance(citation.get(key), str):
            shown[key] = citation[key]
    return shown


def _is_span(span: Any) -> bool:
    return (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in span)
        and 0 <= span[0] <= span[1]
    )


def citation_counts(lines: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """A grader's citations over its judgments: how many were given, how many verified, and
    the verified share (None when none were given)."""
    given = verified = 0
    for line in lines:
        for citation in citations_in(line["result"]["details"]):
            given += 1
            verified += citation["status"] == "verified"
    share = verified / given if given else None
    return {"citations": given, "citations_verified": verified, "citations_share": share}


def citations_change(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Whether a judgment's citations changed between two runs' lines: `same citations`, or
    `citations changed: 1 of 1 verified → 0 of 2 verified`; None when neither run gave any."""
    before = citations_in(old["result"]["details"])
    after = citations_in(new["result"]["details"])
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
    found = citations_in(details)
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

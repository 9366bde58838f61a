"""A judgment's citations as the reports show them: each citation its votes, pairwise orders,
checklist items or panel judges gave (with who gave it), how many verified per grader, whether
they changed between two runs, and where each cited block's text is in the messages a page
shows (so the quote can be highlighted beside its block). Nothing in a results file is trusted:
an entry of the wrong shape is shown as an unverified citation, never an error."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rubriclib.judging.render import (
    CHARACTERS_PER_TOKEN,
    PLACEHOLDERS,
    SECTIONS,
    TRANSCRIPT_SHARE,
    fence,
    final_answer,
    run_blocks,
)
from rubriclib.judging.result import ORDERS
from rubriclib.reports.common import xml_safe

if TYPE_CHECKING:
    from rubriclib.item import Item
    from rubriclib.rubrics.rubric import Rubric

STATUSES = ("verified", "unverified")
_RUN_HEAD = re.compile(r"(?m)^\[M(\d+)\] ")
"""A block's head inside an agent run's section (a line like it inside a block is indented)."""


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


def located_blocks(
    text: str, rubric: Rubric, item: Item, request: int, max_prompt_tokens: int
) -> dict[str, tuple[int, int]]:
    """Where the text of each block a citation may name is in a user message `text` rendered
    by render.render (request 1 of a pairwise rubric: A and B swapped): start and end. Read
    from the end, where the sections are; a block not shown as itself (the output named by its
    run block, a value the rubric's body places) is left out, and so is everything before a
    section that is not as expected."""
    if rubric.template == "letta":
        return {}
    found: dict[str, tuple[int, int]] = {}
    end = len(text) - 1 if text.endswith("\n") else len(text)
    for key, shown, value in reversed(_sections(rubric, item, request, max_prompt_tokens)):
        start = end - len(shown)
        if start < 0 or not text.startswith(shown, start):
            break
        inner = start + shown.index("\n") + 1 if value is not None else start
        if key == "run" and value is not None:
            found |= _run_blocks(text, inner, inner + len(value))
        elif value is not None:
            found[key] = (inner, inner + len(value))
        end = text.rfind("\n\n## ", 0, start)
        if end < 0:
            break
    return found


def _sections(
    rubric: Rubric, item: Item, request: int, max_prompt_tokens: int
) -> list[tuple[str, str, str | None]]:
    """(block id, the section's text after its header, the block's own text when the section
    shows it fenced) of each section render.render appends after the body, in order."""
    pairwise = rubric.scale == "pairwise"
    values = {"input": item.input, "context": item.context, "reference": item.reference}
    placed = {key for token, key in PLACEHOLDERS.items() if token in rubric.body}
    sections: list[tuple[str, str, str | None]] = []
    for key, _ in SECTIONS:
        value = values.get(key)
        if key == "output" and item.transcript is not None and not pairwise:
            budget = int(max_prompt_tokens * TRANSCRIPT_SHARE) * CHARACTERS_PER_TOKEN
            blocks = run_blocks(item.transcript, budget)[0]
            sections.append(("run", fence(blocks), blocks))
            if "output" not in placed:
                answer = final_answer(item.transcript, item.output)
                fenced = answer == fence(item.output)
                sections.append(("output", answer, item.output if fenced else None))
        elif key == "output" and not pairwise and "output" not in placed:
            sections.append(("output", fence(item.output), item.output))
        elif value is not None and key not in placed:
            sections.append((key, fence(value), value))
    if pairwise:
        first, second = (item.baseline, item.output) if request else (item.output, item.baseline)
        for label, response in (("A", first), ("B", second)):
            shown = "(not provided)" if response is None else fence(response)
            sections.append((label, shown, response))
    return sections


def _run_blocks(text: str, start: int, end: int) -> dict[str, tuple[int, int]]:
    """Each run block's body (after its head line) within text[start:end], the run's blocks."""
    heads = list(_RUN_HEAD.finditer(text, start, end))
    found = {}
    for index, head in enumerate(heads):
        stop = heads[index + 1].start() - 2 if index + 1 < len(heads) else end
        line_end = text.find("\n", head.start(), stop)
        body = stop if line_end < 0 else line_end + 1
        found[f"M{head.group(1)}"] = (body, stop)
    return found


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

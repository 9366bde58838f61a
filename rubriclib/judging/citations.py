"""Pure: the citations a judge gives with its verdict, checked against the blocks it was shown.

A citation is `{block, quote}`: the id of a block of the rendered prompt (`M1`... for an agent
run's messages; `input`, `context`, `reference`, `output`; `A` and `B` for pairwise responses)
and a quote from it. rubriclib never trusts one: a quote is `verified` only when it appears in
the text rubriclib rendered for that block (whitespace runs, Unicode compatibility forms and
typographic quotes and dashes normalised; a quote across a cut marker never matches), else
`unverified`, naming the block where it does appear when it is in another one. Checking costs
no request. `given_citations` reads them back from a result's details, wherever they are kept.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from rubriclib.judging.result.details import Block, as_written

STATUSES = ("verified", "unverified")
CUT_MARKER = re.compile(r"\n\[\.\.\. [\d,]+ characters cut \.\.\.\]\n")
"""What `agent_run.cut_middle` leaves where it cut a block: a quote may not span it."""
_TYPOGRAPHIC = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)
MOST_CHECKED = 20
"""Citations checked per verdict; more are left out, with a note saying how many."""
SHORTEST_QUOTE = 4
"""Characters (not spaces) a quote needs to count as evidence: `a` or `is` would match anywhere."""
LONGEST_QUOTE = 2_000
"""Characters of a quote kept in a result."""
ASKED_CITATIONS = 3
ASKED_QUOTE = 300
"""What the tool schema asks for at most (citations per verdict, characters per quote): enough
for evidence, and a bound a constrained decoder enforces, so a small model cannot spend its
whole token budget quoting. The larger limits above hold for a judge that ignores the schema."""
_WRAPPERS = "\"'`.… \u201c\u201d\u2018\u2019"
"""What a judge puts around a quote that is not part of it (quote marks, ellipses)."""


def checked_citations(raw: Any, blocks: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each citation of a verdict tool's `citations` argument (`raw`, any shape: nothing is
    trusted) checked against `blocks` (id to the text shown): `{block, quote, status}`, with
    `span` (start and end in the block's text) when verified, `found_in` (another block
    holding the quote) or `note` (why it could not be checked) when not."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [_unchecked(raw, "citations is not a list of {block, quote} objects")]
    flat = {block: normalised(text) for block, text in blocks.items()}
    checked = [_checked(citation, blocks, flat) for citation in raw[:MOST_CHECKED]]
    if len(raw) > MOST_CHECKED:
        note = f"{len(raw) - MOST_CHECKED} more citation(s) left out: at most {MOST_CHECKED}"
        checked.append(_unchecked("", note))
    return checked


def quoted_unread(citation: dict[str, Any], blocks: Mapping[str, str], mask: str) -> dict[str, Any]:
    """`citation` (checked), unverified when its span reaches text the judge was not shown:
    the characters `blocks` hold as `mask` (an explored run's unread parts)."""
    span = citation.get("span")
    text = blocks.get(str(citation.get("block")), "")
    if citation.get("status") != "verified" or not span or mask not in text[span[0] : span[1]]:
        return citation
    kept = {key: value for key, value in citation.items() if key != "span"}
    return kept | {"status": "unverified", "note": "it quotes text the judge was not shown"}


def verified(citations: list[dict[str, Any]]) -> int:
    """How many of `citations` (as `checked_citations` gives them) were verified."""
    return sum(citation.get("status") == "verified" for citation in citations)


def cite_matches(wanted: str, citations: list[dict[str, Any]]) -> bool:
    """Whether a verified citation quotes `wanted` (normalised; either may hold the other), as
    a golden's `cites` asks."""
    target = normalised(wanted)[0].strip()
    quotes = (normalised(c["quote"])[0].strip() for c in citations if c["status"] == "verified")
    return bool(target) and any(target in quote or quote in target for quote in quotes if quote)


def normalised(text: str) -> tuple[str, list[int]]:
    """`text` with each character in Unicode compatibility form (NFKD), typographic quotes and
    dashes made plain and every whitespace run one space; and, for each character kept, the
    index in `text` it came from."""
    kept: list[str] = []
    origin: list[int] = []
    for index, character in enumerate(text):
        for part in unicodedata.normalize("NFKD", character).translate(_TYPOGRAPHIC):
            if part.isspace():
                if kept and kept[-1] == " ":
                    continue
                part = " "
            kept.append(part)
            origin.append(index)
    return "".join(kept), origin


def _checked(
    citation: Any, blocks: Mapping[str, str], flat: Mapping[str, tuple[str, list[int]]]
) -> dict[str, Any]:
    if not isinstance(citation, dict):
        return _unchecked(citation, "not a {block, quote} object")
    block, quote = citation.get("block"), citation.get("quote")
    if not isinstance(block, str) or not isinstance(quote, str):
        return _unchecked(citation, "block and quote must both be strings")
    block = _block_id(block[:100], blocks)
    entry: dict[str, Any] = {"block": block, "quote": quote[:LONGEST_QUOTE]}
    letters = len("".join(normalised(quote.strip(_WRAPPERS))[0].split()))
    if letters < SHORTEST_QUOTE:
        note = "the quote is empty" if not letters else "the quote is too short to be evidence"
        return entry | {"status": "unverified", "note": note}
    if block in blocks and (span := _find(quote, blocks[block], flat[block])) is not None:
        return entry | {"status": "verified", "span": list(span)}
    entry["status"] = "unverified"
    elsewhere = [
        other for other, text in blocks.items() if _find(quote, text, flat[other]) is not None
    ]
    if elsewhere and elsewhere[0] != block:
        entry["found_in"] = elsewhere[0]
    if block not in blocks:
        entry["note"] = f"no block {block} was shown"
    return entry


def _unchecked(citation: Any, note: str) -> dict[str, Any]:
    shown = citation if isinstance(citation, str) else repr(citation)
    return {"block": None, "quote": shown[:200], "status": "unverified", "note": note}


def _block_id(given: str, blocks: Mapping[str, str]) -> str:
    """The block a judge named, as rubriclib names it: `[m3]`, `M3` and ` M3 ` are `M3`."""
    bare = given.strip().strip("[]").strip()
    by_lower = {name.lower(): name for name in blocks}
    return by_lower.get(bare.lower(), bare)


def _find(quote: str, text: str, flat: tuple[str, list[int]]) -> tuple[int, int] | None:
    """Where `quote` is in `text` (start and end in `text`), normalised (`flat` is `text`
    normalised), and never across a cut marker; tried as written, then without the quote
    marks or ellipses a judge wraps around it."""
    plain, origin = flat
    cuts = [
        (origin_index(origin, marker.start()), origin_index(origin, marker.end()))
        for marker in CUT_MARKER.finditer(text)
    ]
    for wanted in dict.fromkeys((quote.strip(), quote.strip(_WRAPPERS))):
        needle = normalised(wanted)[0].strip()
        found = plain.find(needle) if needle else -1
        while found >= 0:
            end = found + len(needle)
            if not any(found < cut_end and start < end for start, cut_end in cuts):
                return origin[found], origin[end - 1] + 1
            found = plain.find(needle, found + 1)
    return None


def origin_index(origin: list[int], index: int) -> int:
    """The position in normalised text of the first character from `index` of the original."""
    return bisect.bisect_left(origin, index)


def given_citations(details: Block | Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every citation of one judgment, each `{by, block, quote, status}` and what it has of
    `span`, `found_in`, `note` and `request` (a pairwise order: 0 output first, 1 baseline
    first). Taken from the most detailed place that holds any (panel judges, votes, pairwise
    orders, checklist items, else the judgment's own), so none is counted twice. `details` is
    a result's, or a results file's as read from JSON (not trusted: any shape may arrive)."""
    details = as_written(details)
    panel = details.get("panel")
    if isinstance(panel, dict) and isinstance(panel.get("judges"), list):
        found = [
            given_by(citation, str(member.get("model")))
            for member in panel["judges"]
            if isinstance(member, dict)
            for citation in given_citations(member)
        ]
        if found:
            return found
    for found in (_of_votes(details), _of_orders(details), _of_checklist(details)):
        if found:
            return found
    return [read_citation(citation) for citation in _listed(details.get("citations"))]


def _of_votes(details: Mapping[str, Any]) -> list[dict[str, Any]]:
    votes = details.get("votes")
    lists = votes.get("citations") if isinstance(votes, dict) else None
    if not isinstance(lists, list):
        return []
    return [
        given_by(read_citation(citation), f"vote {index + 1}")
        for index, listed in enumerate(lists)
        for citation in _listed(listed)
    ]


def _of_orders(details: Mapping[str, Any]) -> list[dict[str, Any]]:
    pairwise = details.get("pairwise")
    orders = pairwise.get("orders") if isinstance(pairwise, dict) else None
    if not isinstance(orders, list):
        return []
    found = []
    for index, order in enumerate(orders[:2]):  # output first, then baseline first
        if isinstance(order, dict):
            for citation in _listed(order.get("citations")):
                label = str(order.get("order", ""))
                found.append(read_citation(citation, label) | {"request": index})
    return found


def _of_checklist(details: Mapping[str, Any]) -> list[dict[str, Any]]:
    items = details.get("checklist")
    if not isinstance(items, list):
        return []
    return [
        read_citation(citation, f"item {item.get('id')}")
        for item in items
        if isinstance(item, dict)
        for citation in _listed(item.get("citations"))
    ]


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def given_by(citation: dict[str, Any], by: str) -> dict[str, Any]:
    """`citation` with `by` put in front of who gave it (a panel judge before its vote, a vote
    before its checklist item)."""
    return citation | {"by": f"{by}, {citation['by']}" if citation["by"] else by}


def read_citation(citation: Any, by: str = "") -> dict[str, Any]:
    """One checked citation as read back from a result (any shape: a results file is not
    trusted): only the fields of the contract, each of its type (a span only on a verified
    citation, two whole numbers in order), with `by`, who gave it (else the `by` it holds),
    and `request` when it names a pairwise order."""
    if not isinstance(citation, dict):
        return {"by": by, "block": None, "quote": str(citation), "status": "unverified"}
    block = citation.get("block")
    status = citation.get("status")
    held = citation.get("by")
    shown: dict[str, Any] = {
        "by": by or (held if isinstance(held, str) else ""),
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
    if citation.get("request") in (0, 1) and not isinstance(citation.get("request"), bool):
        shown["request"] = citation["request"]
    return shown


def _is_span(span: Any) -> bool:
    return (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(n, int) and not isinstance(n, bool) for n in span)
        and 0 <= span[0] <= span[1]
    )

"""What a page shows of an explored judgment after its first message: the judge's trail, each
block it read, and each block it cited from a search hit without reading it, as the hit showed
it, so every verified citation is beside the text it quotes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rubriclib.judging import read_blocks, searched_parts
from rubriclib.reports.citations import place_citations
from rubriclib.reports.html.data import TEXT_LIMIT

if TYPE_CHECKING:
    from rubriclib.item import Item

Shown = list[tuple[dict[str, str], dict[str, tuple[int, int]]]]
"""Messages a page shows, each with where each block's text sits in it."""

CONTEXT_BEFORE = 200
"""Characters a page shows of a long block read before the first quote cited in it."""


def explored_reading(item: Item, exploration: Any, citations: list[dict[str, Any]]) -> Shown:
    """What a judge exploring `item`'s run did, as messages a page shows after its first
    message, each with where its block's text sits: its trail (turns, searches, blocks read),
    then each block it read, from its head: a block longer than a page keeps (TEXT_LIMIT)
    from a little before the first quote the judge cited in it, so the citation shows (placed
    here: its span is an offset in the whole block); then each block it cited from a search
    hit alone (`found_by_search`)."""
    if item.transcript is None or not isinstance(exploration, dict):
        return []
    ids = [block for block in exploration.get("blocks_read") or [] if isinstance(block, str)]
    patterns = [p for p in exploration.get("searches") or [] if isinstance(p, str)]
    searched = ", ".join(repr(pattern) for pattern in patterns)
    trail = (
        f"The judge explored the run in {exploration.get('turns')} request(s), shown "
        f"{exploration.get('characters_read', 0):,} characters by its tools; searched: "
        f"{searched or 'nothing'}; read parts of: {', '.join(ids) or 'no block'} (each "
        "below whole, or from just before the first quote cited in it)."
    )
    shown: Shown = [({"role": "exploration", "content": trail}, {})]
    for block, head, text in read_blocks(item.transcript, ids):
        cited = [c for c in citations if c.get("block") == block and "span" in c]
        start = max(0, min(c["span"][0] for c in cited) - CONTEXT_BEFORE) if cited else 0
        start = start if len(text) > TEXT_LIMIT else 0
        before = f"[... {start:,} characters before ...]\n" if start else ""
        content = f"{head}\n{before}{text[start:]}"
        _place(cited, block, text[start:], start)
        at = len(head) + 1 + len(before)
        shown.append(({"role": "read", "content": content}, {block: (at, len(content))}))
    unread = [c for c in citations if c.get("block") not in ids]
    return shown + found_by_search(item, patterns, unread)


def found_by_search(item: Item, patterns: list[str], citations: list[dict[str, Any]]) -> Shown:
    """Each run block a verified citation quotes from a search hit (`patterns`' searches, run
    again: they are deterministic), shown as the hit showed it: its head, then the hit's
    context holding the block's first quote cited (hits that overlap, as one) and where it
    sits; the citations within it placed there."""
    if item.transcript is None or not patterns:
        return []
    hits = searched_parts(item.transcript, patterns)
    cited = [c for c in citations if c.get("block") in hits and "span" in c]
    heads = {block: (head, text) for block, head, text in read_blocks(item.transcript, [*hits])}
    shown: Shown = []
    for block in dict.fromkeys(c["block"] for c in cited):
        quotes = [c for c in cited if c["block"] == block]
        first = min(c["span"][0] for c in quotes)
        held = [part for part in _merged(hits[block]) if part[0] <= first < part[1]]
        if not held:
            continue
        (start, end), (head, text) = held[0], heads[block]
        within = [c for c in quotes if start <= c["span"][0] <= c["span"][1] <= end]
        _place(within, block, text[start:end], start)
        told = f"[search_run showed characters {start:,} to {end:,} of {len(text):,}]\n"
        at = len(head) + 1 + len(told)
        content = f"{head}\n{told}{text[start:end]}"
        shown.append(({"role": "found", "content": content}, {block: (at, at + end - start)}))
    return shown


def _merged(parts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`parts` of one block, those that overlap or touch as one, in order."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(parts):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _place(cited: list[dict[str, Any]], block: str, text: str, start: int) -> None:
    """Place `cited` (spans in the whole block) in `text`, the block's text from `start`."""
    moved = [c | {"span": [c["span"][0] - start, c["span"][1] - start]} for c in cited]
    place_citations(moved, 0, {block: text}, pairwise=False)
    for original, placed in zip(cited, moved, strict=True):
        if "shown" in placed:
            original["shown"] = placed["shown"]

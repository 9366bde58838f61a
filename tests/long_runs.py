"""Long agent runs and a scripted judge that explores them, for the tests of exploring
(`evidence: explore`): the judge searches, reads around its first hit and cites what it read,
as a model would; every answer it gets is what rubriclib's tools showed it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from judge_server import Reply, tool_reply

NEEDLE = "Refund of $412 issued without the customer's approval."
PADDING = "order line: SKU-0000 widget, qty 1, status shipped, carrier ground\n"


def long_run(blocks: int = 30, characters: int = 20_100, needle_at: int | None = 15) -> list:
    """A support agent's run of `blocks` tool lookups, each result about `characters` long; the
    one decisive line sits in the middle of result `needle_at` (None: nowhere)."""
    run: list[dict[str, Any]] = [{"role": "user", "content": "Why was I charged twice?"}]
    for number in range(blocks):
        call = {"id": f"c{number}", "type": "function"}
        call["function"] = {"name": "lookup_orders", "arguments": json.dumps({"page": number})}
        run.append({"role": "assistant", "content": None, "tool_calls": [call]})
        lines = PADDING * (characters // len(PADDING))
        if number == needle_at:
            middle = len(lines) // 2
            lines = lines[:middle] + NEEDLE + "\n" + lines[middle:]
        run.append({"role": "tool", "tool_call_id": f"c{number}", "content": lines})
    run.append({"role": "assistant", "content": "I looked into it: the charge is correct."})
    return run


BLOCK_ID = r"(M\d+|T\d+B\d+)"
"""A block's id as a judge is shown it: `M33`, or `T1B3` in a run of several transcripts."""


def exploring_judge(
    verdict: str = "fail",
    cite: str | None = None,
    pattern: str = "refund .* without",
    cite_block: str | None = None,
    read: bool = True,
) -> Callable[[dict[str, Any]], Reply]:
    """A judge that searches the run for the refund, reads around the first hit (unless not
    `read`: it cites the hit's block from what the search showed) and then gives `verdict`,
    citing what it read (or `cite`, a quote it did not read; in `cite_block`, when given,
    rather than the block it read)."""

    def answer(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user":
            return tool_reply("search_run", {"pattern": pattern})
        if "match(es)" in last["content"]:
            block, at = re.search(rf"\[{BLOCK_ID}\] at ([\d,]+):", last["content"]).groups()
            if read:
                offset = max(0, int(at.replace(",", "")) - 40)
                return tool_reply("read_block", {"block": block, "offset": offset, "limit": 200})
        else:
            block = cite_block or re.match(rf"\[{BLOCK_ID}\]", last["content"])[1]
        citations = [{"block": cite_block or block, "quote": cite or NEEDLE}]
        return tool_reply(
            "set_grade", {"reason": "refund", "citations": citations, "verdict": verdict}
        )

    return answer

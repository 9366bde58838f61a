"""An eval whose grader's rubric has a labels scale, judged by the scripted server: the rubric,
its rows (each row's output names the label the judge gives, `label:NAME`) and the responder,
shared by the report, calibration and browser tests of labels."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import keyword_responder
from judge_server import JudgeServer, Reply, tool_reply

SUPPORT = """\
---
name: support
version: 1.0.0
scale: labels
description: Whether a support reply resolves the ticket.
labels:
  resolved: pass
  partly-resolved: fail
  not-resolved: fail
---
# Support

Label the reply: resolved, partly-resolved or not-resolved.
"""
LABELS = ("resolved", "partly-resolved", "not-resolved")
EVAL = """\
name: support-run
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - {name: support, rubric: support}
  - {name: keywords, rubric: keywords}
"""
ROWS = [
    {"id": "r1", "input": "Where is my refund?", "output": "Refunded today. label:resolved"},
    {"id": "r2", "input": "Where is my refund?", "output": "Refund started. label:resolved"},
    {"id": "r3", "input": "Where is my refund?", "output": "Needs approval. label:partly-resolved"},
    {"id": "r4", "input": "Where is my refund?", "output": "verdict:text"},
]
"""r1 and r2 resolved (pass), r3 partly-resolved (fail), r4 a judge error (the judge answers
in text); no row is not-resolved, so that label counts 0. The keywords grader fails each
row but r4 (a pass-fail rubric: no labels)."""
_NAMED = re.compile(r"label:([a-z-]+)")


def label_responder() -> Callable[[dict[str, Any]], Reply]:
    """Give the label a row's `label:NAME` names when the label tool is offered; otherwise, as the
    keyword responder answers."""
    fallback = keyword_responder()

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        named = _NAMED.search(user)
        offered = [tool["function"]["name"] for tool in body.get("tools", [])]
        if named is None or "set_grade_label" not in offered:
            return fallback(body)
        return tool_reply("set_grade_label", {"reason": f"scripted {named[1]}", "label": named[1]})

    return respond


def support_eval(endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]) -> Path:
    """The eval file, its rows and the support rubric (in the library), the server answering."""
    (library / "support.md").write_text(SUPPORT, encoding="utf-8")
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    endpoint.responder = label_responder()
    return write_file("eval.yaml", EVAL)

"""An eval whose grader's rubric has output fields, judged by the scripted server: the rubric,
its rows (each row's output names what the judge fills in) and the responder, shared by the
measure, report and browser tests of output fields in reports."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import keyword_responder
from judge_server import JudgeServer, Reply, tool_reply
from results_lines import HOSTILE_REASONS

TRIAGE = """\
---
name: triage
version: 1.0.0
scale: pass-fail
description: Whether a support reply resolves the ticket.
output:
  severity: {type: string, enum: [high, medium, low]}
  confidence: {type: number, minimum: 0, maximum: 1, optional: true}
  escalate: {type: boolean}
  issues:
    type: array
    maxItems: 3
    items:
      type: object
      properties:
        description: {type: string, citations: true}
        kind: {type: string, enum: [policy, accuracy, tone]}
      required: [description, kind]
---
# Triage

Does the reply resolve the ticket? List each issue.
"""
EVAL = """\
name: triage-run
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - {name: triage, rubric: triage}
"""
REFUSAL = "We never give refunds."
HOSTILE_QUOTE = HOSTILE_REASONS[0]
"""r1's unverified quote: a script a page must show as text."""
ISSUES: dict[str, list[dict[str, Any]]] = {
    "refuse": [
        {
            "description": "refuses a refund <b>the policy</b> allows",
            "kind": "policy",
            "citations": [{"block": "output", "quote": REFUSAL}],
        },
        {
            "description": "curt",
            "kind": "tone",
            "citations": [{"block": "output", "quote": HOSTILE_QUOTE}],
        },
    ],
    "late": [{"description": "no date given", "kind": "accuracy"}],
}
FILLED: dict[str, dict[str, Any]] = {
    "refuse": {"severity": "high", "confidence": 0.9, "escalate": True},
    "late": {"severity": "high", "escalate": False},
    "fine": {"severity": "low", "confidence": 0.5, "escalate": False},
}
ROWS = [
    {"id": "r1", "input": "Where is my refund?", "output": f"{REFUSAL} Goodbye. [refuse]"},
    {"id": "r2", "input": "Where is my refund?", "output": "It is on its way. [late]"},
    {"id": "r3", "input": "Where is my refund?", "output": "Refunded today. [fine]"},
    {"id": "r4", "input": "Where is my refund?", "output": "verdict:text"},
]
"""r1 fails with two issues (one quote verified, one not), r2 fails with one, r3 passes with
none, r4 is a judge error (the judge answers in text)."""


def triage_responder() -> Callable[[dict[str, Any]], Reply]:
    """Fill in the output fields each row's `[key]` names; a row without one as the keyword
    responder answers it."""
    fallback = keyword_responder()

    def respond(body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        key = next((key for key in FILLED if f"[{key}]" in user), None)
        if key is None:
            return fallback(body)
        name = "set_grade_pass" if key == "fine" else "set_grade_fail"
        fields = {**FILLED[key], "issues": ISSUES.get(key, [])}
        return tool_reply(name, {"reason": f"scripted {key}", **fields})

    return respond


def triage_eval(endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]) -> Path:
    """The eval file, its rows and the triage rubric (in the library), the server answering."""
    (library / "triage.md").write_text(TRIAGE, encoding="utf-8")
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    endpoint.responder = triage_responder()
    return write_file("eval.yaml", EVAL)

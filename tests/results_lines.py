"""Results-file lines as `rubriclib eval --out` writes them, for the report's tests and the
report benchmark (no judge needed)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HOSTILE_REASONS = [
    "</script><script>window.__pwned = 1; alert(1)</script>",
    '<img src=x onerror="window.__pwned = 1; alert(1)">',
    "bell\x07 escape\x1b[31m null\x00 end",
]
"""Reasons a judge could return that a page must show as text and never run."""


def results_line(
    row: str,
    grader: str,
    verdict: str,
    reason: str = "",
    *,
    rubric: str = "groundedness",
    version: str = "1.1.0",
    digest: str = "46c865e0a84e2dde32ed1ca44cdfdbecdafd74266027b33ae9565e9f4c4ab0d2",
    model: str = "gpt-4o-mini",
    cached: bool = False,
    metadata: dict[str, Any] | None = None,
    **details: Any,
) -> dict[str, Any]:
    """One line of a results file; `details` adds to result.details (votes, panel, turns)."""
    score = None if verdict == "error" else float(verdict == "pass")
    return {
        "row": row,
        "grader": grader,
        "verdict": verdict,
        "result": {
            "verdict": verdict,
            "passed": verdict == "pass",
            "score": score,
            "reason": reason or f"{grader} says {verdict}",
            "details": {
                "rubric": {
                    "name": rubric,
                    "version": version,
                    "scale": "pass-fail",
                    "source": f"builtin:{rubric}",
                    "digest": digest,
                },
                "judge": {
                    "model": model,
                    "mode": "required",
                    "attempts": 1,
                    "cached": cached,
                    "corrected": False,
                    "latency_ms": 120,
                    "usage": {"prompt_tokens": 300, "completion_tokens": 40},
                },
                **details,
            },
        },
        "metadata": metadata if metadata is not None else {"channel": "chat"},
    }


def write_results(path: Path, lines: Iterable[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def large_run(
    rows: int, graders: tuple[str, ...] = ("grounded", "correct", "style")
) -> Iterable[dict[str, Any]]:
    """`rows` x graders lines with realistic reasons, outputs and metadata; every 7th row fails
    its first grader, every 50th errors its last."""
    sentence = "The answer cites the second passage and adds nothing the passages do not say. "
    for index in range(rows):
        row = f"row-{index:05d}"
        for column, grader in enumerate(graders):
            verdict = "pass"
            if column == 0 and index % 7 == 0:
                verdict = "fail"
            if column == len(graders) - 1 and index % 50 == 0:
                verdict = "error"
            line = results_line(
                row,
                grader,
                verdict,
                f"{row} {grader}: " + sentence * 3,
                rubric=grader,
                metadata={"channel": "chat" if index % 2 else "email", "team": f"team-{index % 9}"},
            )
            line["output"] = f"Output of {row}: " + "Refunds are issued within 14 days. " * 8
            yield line

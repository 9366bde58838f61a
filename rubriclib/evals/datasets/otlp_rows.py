"""OpenTelemetry exports as datasets: an OTLP JSON file (or a JSONL file of them, as a file
exporter writes a line per batch) gives a row per trace: its run, its first user message as the
input, its final answer as the output, the model and service as metadata."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rubriclib.errors import Problem
from rubriclib.item import is_export, traces


class RowProblems(list[Problem]):
    """Every problem of a row that cannot be read (a trace whose run cannot be read)."""


def otlp_rows(path: Path, documents: list[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """A row per trace of the exports (`(label, export)`), or its problems; the problems that
    belong to no trace first."""
    runs, problems = traces(documents)
    for place, why in problems:
        yield str(path), Problem(str(path), place, why)
    if not runs and not problems:
        why = "holds no model call (a span with gen_ai.operation.name chat, or its events)"
        yield str(path), Problem(str(path), "dataset", why)
    for run in runs:
        where = f"{path}: trace {run.trace_id}"
        if run.transcript is None:
            yield where, RowProblems(Problem(where, place, why) for place, why in run.problems)
            continue
        users = (m.text for m in run.transcript.messages if m.role == "user" and m.text)
        row = {"id": run.trace_id, "transcript": run.transcript, "input": next(users, None)}
        yield where, row | run.metadata


def jsonl_or_otlp_rows(path: Path, rows: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """A JSONL file's rows as they are, or, when its first line is an OTLP export, a row per
    trace of all its lines (a trace's spans and events may sit in several batches)."""
    first = next(rows, None)
    if first is None or not is_export(first[1]):
        yield from [first] if first else []
        yield from rows
        return
    documents = []
    for where, raw in [first, *rows]:
        if isinstance(raw, Problem):
            yield where, raw
        else:
            documents.append((f"line {where.rsplit(':', 1)[1]}: ", raw))
    yield from otlp_rows(path, documents)

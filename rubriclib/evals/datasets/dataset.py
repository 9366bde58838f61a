"""Datasets of outputs to judge: rows from JSONL (streamed), JSON, CSV or YAML files, or rows
written inline in an eval file, each read into an Item.

Row keys: `id` (else the row number), `input` (text, or a list of chat messages shown as a
transcript), `context` (text, or a list of passages shown numbered), `reference` (or
`ground_truth`, `expected_output`), `output` (or `submission`, `response`, `actual_output`),
`baseline` (or `output_b`: the second output a pairwise rubric compares with; other rubrics
ignore it), `transcript` (or `messages`: an agent run; without an output, its final answer is
the output). Every other key is kept as the row's metadata. An inspect_ai log (`.eval`, or a
`.json` log) is read by `inspect_logs`: a row per sample. An OpenTelemetry export (OTLP JSON: a
`.json` file, or a `.jsonl` file of exports) gives a row per trace instead (`otlp_rows`).
"""

from __future__ import annotations

import codecs
import csv
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubriclib.errors import EvalError, Problem
from rubriclib.evals.datasets.inspect_logs import (
    LogSample,
    eval_log_samples,
    is_inspect_log,
    json_log_samples,
)
from rubriclib.evals.datasets.otlp_rows import RowProblems, jsonl_or_otlp_rows, otlp_rows
from rubriclib.evals.letta.rows import USED_KEYS, LettaSample, read_sample
from rubriclib.item import (
    Item,
    Problems,
    Transcript,
    TranscriptError,
    field_text,
    is_export,
    read_transcript,
)
from rubriclib.rubrics import load_yaml, not_utf8

logger = logging.getLogger("rubriclib")
ALIASES = {
    "reference": ("reference", "ground_truth", "expected_output"),
    "output": ("output", "submission", "response", "actual_output"),
    "baseline": ("baseline", "output_b"),
}
TRANSCRIPT_KEYS = ("transcript", "messages")
"""A row's agent run: a list of messages in OpenAI chat, Anthropic, Responses or LangChain
shape."""
SUFFIXES = (".jsonl", ".json", ".csv", ".yaml", ".yml", ".eval")
MAX_PROBLEMS = 200
"""A dataset check stops collecting after this many problems (and says how many it skipped)."""
MAX_WHOLE_FILE_BYTES = 256 * 1024 * 1024
"""JSON and YAML datasets are read whole; past this size, use JSONL (streamed)."""


@dataclass(frozen=True)
class Row:
    """One dataset row: where it came from, its id, and what is judged."""

    number: int
    """1-based position in the dataset."""
    where: str
    """`FILE:LINE` for JSONL and CSV, `FILE: rows[N]` otherwise: how problems name the row."""
    item: Item
    """The judged fields; `item.id` is the row id and `item.metadata` its other keys."""
    sample: LettaSample | None = None
    """A letta-evals row as letta reads it (its turns, rubric_vars, own rubric)."""
    pairing_doubts: tuple[str, ...] = ()
    """`transcript[N]: why` for each tool result of its run paired with a call in doubt."""

    @property
    def id(self) -> str:
        return str(self.item.id)


@dataclass(frozen=True)
class Dataset:
    """Where rows come from: a file, or rows written inline in an eval file (`label` names
    them in problems)."""

    path: Path | None = None
    inline: list[Any] | None = None
    label: str = "rows"
    needs_output: bool = True
    """False when a target generates the outputs."""
    letta_base: Path | None = None
    """Set for a letta-evals suite: rows are read as letta reads them, a row's rubric_path
    relative to this folder (the suite's)."""

    def rows(self) -> Iterator[Row]:
        """Every row, in order; raises EvalError at the first bad one (run `check` first)."""
        for entry in self._entries():
            if isinstance(entry, list):
                raise EvalError(entry)
            yield entry

    def check(
        self, row_problems: Callable[[Row], list[Problem]] | None = None
    ) -> tuple[list[Problem], int]:
        """Every problem of every row (up to MAX_PROBLEMS), with what `row_problems` finds in
        each good row, and the number of rows, reading the dataset once and keeping no row."""
        problems: list[Problem] = []
        skipped = rows = 0
        seen: set[str] = set()
        for entry in self._entries():
            rows += 1
            if isinstance(entry, list):
                found = entry
            elif entry.id in seen:
                found = [Problem(entry.where, "id", f"duplicate row id {entry.id!r}")]
            else:
                seen.add(entry.id)
                for doubt in entry.pairing_doubts:
                    logger.warning("%s: %s", entry.where, doubt)
                found = row_problems(entry) if row_problems is not None else []
                if not found:
                    continue
            room = MAX_PROBLEMS - len(problems)
            problems.extend(found[:room])
            skipped += max(0, len(found) - room)
        if skipped:
            problems.append(Problem(self._name, "rows", f"... and {skipped} more problem(s)"))
        return problems, rows

    @property
    def _name(self) -> str:
        return str(self.path) if self.path is not None else self.label

    def _entries(self) -> Iterator[Row | list[Problem]]:
        """Each row, or the problems that kept it from being one."""
        csv = self.path is not None and self.path.suffix.lower() == ".csv"
        for number, (where, raw) in enumerate(self._raw_rows(), start=1):
            if isinstance(raw, Problem):
                yield [raw]
            elif isinstance(raw, LogSample):
                doubts: Problems = []
                item = raw.item(where, doubts)
                yield (
                    item
                    if isinstance(item, list)
                    else Row(number, where, item, None, doubted(doubts))
                )
            elif isinstance(raw, RowProblems):
                yield list(raw)
            elif self.letta_base is not None:
                yield parse_letta_row(raw, number, where, self.letta_base, csv)
            else:
                yield parse_row(raw, number, where, self.needs_output)

    def _raw_rows(self) -> Iterator[tuple[str, Any]]:
        if self.path is None:
            for index, raw in enumerate(self.inline or []):
                yield f"{self.label}[{index}]", raw
            return
        suffix = self.path.suffix.lower()
        if suffix not in SUFFIXES:
            raise _bad_dataset(self.path, f"unknown format {suffix!r}; use {', '.join(SUFFIXES)}")
        try:
            if suffix == ".jsonl":
                yield from jsonl_or_otlp_rows(self.path, _jsonl_rows(self.path))
            elif suffix == ".csv":
                yield from _csv_rows(self.path)
            elif suffix == ".eval":
                yield from eval_log_samples(self.path)
            else:
                yield from _whole_file_rows(self.path, suffix)
        except OSError as error:
            raise _bad_dataset(self.path, f"cannot be read: {error.strerror or error}") from None


def parse_letta_row(
    raw: Any, number: int, where: str, base_dir: Path, csv: bool
) -> Row | list[Problem]:
    """A letta-evals row as a Row (its sample kept), or every problem with it."""
    if not isinstance(raw, Mapping):
        return [Problem(where, "row", f"must be a mapping of keys, not {type(raw).__name__}")]
    sample = read_sample(raw, where, base_dir, csv)
    if isinstance(sample, list):
        return sample
    if sample.submission is None and sample.run is None:
        message = (
            "is required: the agent's recorded answer, or its recorded messages (rubriclib "
            "runs no letta agent)"
        )
        return [Problem(where, "submission", message)]
    row_id = raw.get("sample_id", raw.get("id", number))
    if isinstance(row_id, bool) or not isinstance(row_id, str | int) or str(row_id) == "":
        return [Problem(where, "id", "must be a string or an integer")]
    metadata = {key: value for key, value in raw.items() if key not in USED_KEYS}
    return Row(number, where, sample.item(str(row_id), metadata), sample)


def parse_row(raw: Any, number: int, where: str, needs_output: bool = True) -> Row | list[Problem]:
    """One raw row as a Row, or every problem with it."""
    if not isinstance(raw, Mapping):
        return [Problem(where, "row", f"must be a mapping of keys, not {type(raw).__name__}")]
    problems: list[Problem] = []
    fields: dict[str, str | None] = {}
    used: set[str] = set()
    for field, names in {"input": ("input",), "context": ("context",), **ALIASES}.items():
        present = [name for name in names if raw.get(name) is not None]
        used.update(name for name in names if name in raw)
        if field == "baseline" and len({str(raw[name]) for name in present}) == 1:
            present = present[:1]  # the same text under both names is no conflict
        if len(present) > 1:  # reported once; the first is read so nothing else cascades
            problems.append(Problem(where, present[1], f"given twice, as {' and '.join(present)}"))
        try:
            fields[field] = field_text(field, raw[present[0]] if present else None)
        except ValueError as error:
            problems.append(Problem(where, present[0], str(error)))
            fields[field] = ""  # reported; not also "is required"
    doubts: Problems = []
    transcript = _row_transcript(raw, where, used, problems, doubts)
    has_run = any(raw.get(name) is not None for name in TRANSCRIPT_KEYS)  # else it says why
    if needs_output and fields.get("output") is None and not has_run:
        others = ", ".join(ALIASES["output"][1:])
        problems.append(Problem(where, "output", f"is required (or {others}, or a transcript)"))
    row_id = raw.get("id", number)
    if isinstance(row_id, bool) or not isinstance(row_id, str | int) or str(row_id) == "":
        problems.append(Problem(where, "id", "must be a string or an integer"))
    if problems:
        return problems
    metadata = {key: value for key, value in raw.items() if key not in used and key != "id"}
    output = fields["output"]
    if output is None:  # a run's output is its final answer
        output = transcript.final_answer if transcript is not None else None
    item = Item(
        output=output or "",
        transcript=transcript,
        input=fields["input"],
        context=fields["context"],
        reference=fields["reference"],
        baseline=fields["baseline"],
        id=str(row_id),
        metadata=metadata,
    )
    return Row(number, where, item, pairing_doubts=doubted(doubts))


def doubted(doubts: Problems) -> tuple[str, ...]:
    """A row's pairing doubts as `transcript[N]: why` lines."""
    return tuple(f"{at}: {why}" for at, why in doubts)


def _row_transcript(
    raw: Mapping[str, Any],
    where: str,
    used: set[str],
    problems: list[Problem],
    doubts: Problems,
) -> Transcript | None:
    """The row's agent run (`transcript`, or `messages`), read; its problems added, each naming
    the message (`transcript[N]`), and what was doubtful in pairing its tool results."""
    present = [name for name in TRANSCRIPT_KEYS if raw.get(name) is not None]
    used.update(name for name in TRANSCRIPT_KEYS if name in raw)
    if not present:
        return None
    if len(present) > 1:
        problems.append(Problem(where, present[1], f"given twice, as {' and '.join(present)}"))
    value = raw[present[0]]
    if isinstance(value, str):  # a CSV cell holds the run as JSON
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            problems.append(
                Problem(where, present[0], f"is not a JSON list of messages ({error.msg})")
            )
            return None
    try:
        return read_transcript(value, present[0], doubts)
    except TranscriptError as error:
        problems.extend(Problem(where, place, why) for place, why in error.problems)
        return None


def _lines(path: Path, field: str = "row") -> Iterator[tuple[int, str | Problem]]:
    """Each line of a file, decoded on its own (a UTF-8 BOM dropped): a line that is not UTF-8
    is a Problem naming its line and column, and the lines after it are still read."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                raw = raw.removeprefix(codecs.BOM_UTF8)
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                yield number, Problem(f"{path}:{number}", field, not_utf8(raw, error.start))


def _jsonl_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """One row per non-blank line, read line by line (a 1 GB file needs no 1 GB of memory)."""
    for line_number, line in _lines(path):
        if isinstance(line, Problem):
            yield line.source, line
            continue
        if line.strip():
            where = f"{path}:{line_number}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as error:
                yield (
                    where,
                    Problem(where, "row", f"invalid JSON: {error.msg} (column {error.colno})"),
                )


def _csv_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """One row per record after the header; empty cells are absent values. A record on a line
    that is not UTF-8 is that problem (read on, with the bad bytes replaced, to find the next)."""
    bad: dict[int, Problem] = {}

    def texts() -> Iterator[str]:
        for number, line in _lines(path):
            if isinstance(line, Problem):
                bad[number] = line
            yield line if isinstance(line, str) else "-\n"  # a stand-in cell, never read

    reader = csv.DictReader(texts())
    end = 0
    for record in reader:
        start, end = end + 1, reader.line_num
        where = f"{path}:{end}"
        if found := [bad[n] for n in range(start, end + 1) if n in bad]:
            yield found[0].source, found[0]
            continue
        if None in record:
            yield where, Problem(where, "row", "has more cells than the header row")
            continue
        yield where, {key: value for key, value in record.items() if value not in ("", None)}


def _bad_dataset(path: Path, why: str) -> EvalError:
    """The error of a dataset file that cannot be read: `why`, naming the file."""
    return EvalError.single(str(path), "dataset", why)


def _whole_file_rows(path: Path, suffix: str) -> Iterator[tuple[str, Any]]:
    """Rows of a JSON or YAML file: a list of rows, or a mapping with a `rows` list."""
    size = path.stat().st_size
    if size > MAX_WHOLE_FILE_BYTES:
        raise _bad_dataset(path, f"is {size} bytes; datasets that large must be JSONL (streamed)")
    lines = list(_lines(path, "dataset"))
    if problems := [line for _, line in lines if isinstance(line, Problem)]:
        raise EvalError(problems)
    text = "".join(line for _, line in lines if isinstance(line, str))
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise _bad_dataset(path, f"invalid JSON (line {error.lineno}): {error.msg}") from None
    else:
        data = load_yaml(text, str(path), "dataset", EvalError, max_nodes=50_000_000)
    if suffix == ".json" and is_inspect_log(data):
        yield from json_log_samples(data, path)
        return
    if is_export(data):
        yield from otlp_rows(path, [("", data)])
        return
    if isinstance(data, Mapping) and set(data) == {"rows"}:
        data = data["rows"]
    if not isinstance(data, list):
        raise _bad_dataset(path, "must be a list of rows (or {rows: [...]})")
    for index, raw in enumerate(data):
        yield f"{path}: rows[{index}]", raw

"""The HTML report of a run just made (`--report FILE.html` on eval, test-goldens and
calibrate): an eval's page is the one `rubriclib report` builds from its results, with the gate
and the exact messages each judgment sent; goldens and calibration pages show their JSON
report's numbers."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubriclib._version import __version__
from rubriclib.evals import row_judgments
from rubriclib.item import missing_fields
from rubriclib.judging import (
    BLOCK_HEAD,
    DEFAULT_MAX_PROMPT_TOKENS,
    PART_HEADING,
    item_block_spans,
    item_messages,
)
from rubriclib.measure import CitationCounts
from rubriclib.reports.checklists import rubric_finder
from rubriclib.reports.citations import place_citations
from rubriclib.reports.common import citations_text, xml_safe
from rubriclib.reports.html.data import TEXT_LIMIT, ResultsFile, clipped, read_results, report_data
from rubriclib.reports.html.explored import explored_reading
from rubriclib.reports.html.page import page

if TYPE_CHECKING:
    from rubriclib.evals import Eval, EvalReport, GraderEntry, Row
    from rubriclib.measure import Calibration, GoldensReport

HTML_SUFFIXES = (".html", ".htm")


def is_html(path: str | Path | None) -> bool:
    """Whether a report path asks for the HTML report (its name ends in .html or .htm)."""
    return path is not None and Path(path).suffix.lower() in HTML_SUFFIXES


def eval_report_text(
    report: EvalReport, report_format: str, report_path: str | None, results: Path | None
) -> str:
    """What `eval` writes to --report (or prints): the HTML page when the path ends in .html
    (built from the results file `results`, else from the results kept in memory), else the
    --format report."""
    from rubriclib.reports.evals import EVAL_FORMATTERS

    if is_html(report_path):
        return eval_page(report, results)
    return EVAL_FORMATTERS[report_format](report)


def eval_page(report: EvalReport, results_path: Path | None) -> str:
    """The page of an eval run: its results (read back from `results_path`, or the results
    the run kept when it wrote no file), its gate, what an interrupt left unjudged, and the
    messages each judgment sent, re-rendered from the rubric and the row."""
    from rubriclib.reports.evals import eval_last_line, to_json

    results = read_results(results_path) if results_path else in_memory(report)
    expected = None
    notes = []
    if report.interrupted:
        expected = len(results.lines) + len(report.not_judged)
        notes.append(f"interrupted by {report.interrupted}: the report holds what was judged")
    if results_path is None:
        notes.append("no --out: the results were not written to a file")
    find = rubric_finder(grader.rubric for grader in report.eval.graders)
    data = report_data(results, expected=expected, version=__version__, find=find)
    data["notes"] = clipped(notes) + data["notes"]
    summary = to_json(report)
    data["eval"] = clipped(
        {"name": report.eval.name, "status": summary["status"], "last_line": eval_last_line(report)}
    )
    data["gate"] = clipped(summary["gate"])
    attach_messages(report.eval, results, data, report.rows)
    return page(data, f"rubriclib report: {report.eval.name}")


def in_memory(report: EvalReport) -> ResultsFile:
    """The run's results as a results file's lines, when it wrote none (report.cases)."""
    lines = {
        (row, grader): {
            "row": row,
            "grader": grader,
            "verdict": result.verdict,
            "result": result.model_dump(mode="json"),
        }
        for row, grader, result in report.cases or []
    }
    stamp = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return ResultsFile(Path(str(report.eval.path)), lines, len(lines), stamp)


def messages_from(ev: Eval) -> Callable[[ResultsFile, dict[str, Any]], None]:
    """For `rubriclib report --eval`: what adds to a report's data the messages each judgment
    sent, re-rendered from that eval's rubrics and rows."""
    return lambda results, data: attach_messages(ev, results, data)


MESSAGES_BUDGET = 3_000_000
"""Characters of row text (rubric bodies aside) a page keeps for the messages judgments sent,
so a 10,000-row page stays near its size goal; failed and errored judgments are served first."""
OVER_BUDGET = (
    f"not kept: the page keeps at most {MESSAGES_BUDGET:,} characters of messages, failed and "
    "errored judgments first (`rubriclib render` shows any one)"
)


@dataclass
class MessagePool:
    """The texts of every message a page shows, each kept once: data["messages"]."""

    texts: dict[str, int] = field(default_factory=dict)
    bodies: set[str] = field(default_factory=set)
    """Rubric bodies and system messages: kept whole, and not counted against the budget (one
    per rubric)."""
    room: int = MESSAGES_BUDGET

    def cost(self, pieces: list[str]) -> int:
        new = {piece for piece in pieces if piece not in self.texts and piece not in self.bodies}
        return sum(min(len(piece), TEXT_LIMIT) for piece in new)

    def add(self, pieces: list[str]) -> list[int]:
        self.room -= self.cost(pieces)
        return [self.texts.setdefault(piece, len(self.texts)) for piece in pieces]

    def shown(self) -> list[Any]:
        return [xml_safe(text) if text in self.bodies else clipped(text) for text in self.texts]


def attach_messages(
    ev: Eval, results: ResultsFile, data: dict[str, Any], rows: int | None = None
) -> None:
    """Give each cell of `data` the messages its judgment sent (re-rendered from the eval's
    first `rows` rows), as indexes into data["messages"]: failed and errored judgments first,
    then passes, while MESSAGES_BUDGET lasts."""
    pool = MessagePool(room=MESSAGES_BUDGET)
    columns = {json.dumps(grader["name"]): index for index, grader in enumerate(data["graders"])}
    row_index = {json.dumps(row["id"]): index for index, row in enumerate(data["rows"])}
    for passes in (False, True):
        for row in islice(ev.dataset.rows(), rows):
            index = row_index.get(json.dumps(clipped(row.id)))
            for grader in ev.graders:
                line = results.lines.get((row.id, grader.name))
                column = columns.get(json.dumps(clipped(grader.name)))
                if index is None or line is None or column is None:
                    continue
                cell = data["rows"][index]["cells"][column]
                if cell is not None and (line["verdict"] == "pass") == passes:
                    cell["messages"] = sent_messages(row, grader, line, pool, cell.get("citations"))
    data["messages"] = pool.shown()


_BLOCK_START = re.compile(rf"(?=\n\n(?:{BLOCK_HEAD}|{PART_HEADING}))")
"""Where an agent run's next block (or transcript's heading) starts in a rendered message."""


def sent_messages(
    row: Row,
    grader: GraderEntry,
    line: dict[str, Any],
    pool: MessagePool,
    citations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """{"sent": [request, ...]} (each request [[role, [pool indexes]], ...]: one, or two on a
    pairwise rubric) re-rendered from the rubric and the row by render.item_messages, and
    "blocks" (per request, each block's id to [message, piece]: the piece holding the block's
    text, where `citations`' spans are placed); or {"unavailable": why} when they cannot be told
    exactly (or the budget is spent). A rubric's body and system message, the same in every
    row, are pieces of their own, kept once."""
    parts = row_judgments(row, grader)
    if len(parts) != 1:
        return {"unavailable": f"judged turn by turn: {len(parts)} requests"}
    rubric, item = parts[0].rubric, parts[0].item
    digest = str(line["result"]["details"]["rubric"]["digest"])
    if rubric.digest != digest:
        return {
            "unavailable": f"the rubric found ({rubric.name}@{rubric.version}, "
            f"{rubric.digest[:8]}) is not the one that judged ({digest[:8]})"
        }
    if missing := missing_fields(rubric.requires, item):
        return {"unavailable": f"no request was sent: the row has no {' and no '.join(missing)}"}
    if isinstance(line.get("output"), str):  # written by the eval's target
        item = item.model_copy(update={"output": line["output"]})
    body = rubric.body if rubric.template != "letta" else ""
    requests = []  # one; on a pairwise rubric two, the second with A and B swapped
    blocks: list[dict[str, list[int]]] = []
    details = line["result"]["details"]
    run = details.get("transcript") or {}
    limit = int(run.get("max_prompt_tokens", DEFAULT_MAX_PROMPT_TOKENS))  # as the judge cut it
    evidence = "explore" if details.get("evidence") == "explored" else "whole"
    spans = item_block_spans(rubric, item, limit, evidence)
    for number, messages in enumerate(item_messages(rubric, item, limit, evidence)):
        request = []
        where: dict[str, list[int]] = {}
        read = []
        if evidence == "explore":  # one request: never pairwise
            read = explored_reading(item, details.get("exploration"), citations or [])
        for index, (message, read_spans) in enumerate([*((m, None) for m in messages), *read]):
            text = message["content"]
            if message["role"] == "system":  # the rubric's own: the same in every row
                pool.bodies.add(text)
            split = bool(body) and text.startswith(body)
            located: dict[str, tuple[int, int]] = read_spans or {}
            if message["role"] == "user":
                located = spans[number]
                texts = {key: text[start:end] for key, (start, end) in located.items()}
                place_citations(citations or [], number, texts, rubric.scale == "pairwise")
            pieces, found = message_pieces(
                text, len(body) if split else 0, located, item.transcript is not None
            )
            where |= {key: [index, piece] for key, piece in found.items()}
            request.append((message["role"], pieces))
            if split:
                pool.bodies.add(body)
        requests.append(request)
        blocks.append(where)
    pieces = [piece for request in requests for _, parts in request for piece in parts]
    if pool.cost(pieces) > pool.room:
        return {"unavailable": OVER_BUDGET}
    sent = [[[role, pool.add(parts)] for role, parts in request] for request in requests]
    return {"sent": sent, "blocks": blocks}


def message_pieces(
    text: str, body: int, blocks: dict[str, tuple[int, int]], run: bool
) -> tuple[list[str], dict[str, int]]:
    """`text` cut into the pieces a page keeps (each shown up to TEXT_LIMIT): the rubric's body
    (its first `body` characters), each block's text (start and end in `blocks`) and what is
    between; in an agent run every block a piece. And each block's id to its piece."""
    cuts = sorted({0, body, len(text), *(offset for span in blocks.values() for offset in span)})
    starts: dict[tuple[int, int], list[str]] = {}  # a run's final answer: `output` and its M
    for key, span in blocks.items():
        if span[1] > span[0]:
            starts.setdefault(span, []).append(key)
    pieces: list[str] = []
    found: dict[str, int] = {}
    for start, end in zip(cuts, cuts[1:], strict=False):
        if (start, end) in starts:
            found |= dict.fromkeys(starts[start, end], len(pieces))
            pieces.append(text[start:end])
        else:
            split = _BLOCK_START.split(text[start:end]) if run else [text[start:end]]
            pieces.extend(piece for piece in split if piece)
    return pieces, found


def goldens_page(run: GoldensReport) -> str:
    """The page of a test-goldens run: its JSON report (reports.goldens.to_json), shown."""
    from rubriclib.reports.goldens import to_json

    found = to_json(run)
    notes = _interrupted(found["run"], "planned", "judgments made")
    for rubric in found["rubrics"]:
        notes += _citation_notes(rubric["rubric"]["name"], rubric["citations"])
        notes += _missed_notes(rubric)
    names = ", ".join(rubric["rubric"]["name"] for rubric in found["rubrics"])
    return page(run_data("goldens", found, notes), f"rubriclib goldens: {names}")


def calibration_page(calibration: Calibration) -> str:
    """The page of a calibration: its JSON report (reports.calibration.to_json), shown."""
    from rubriclib.reports.calibration import to_json

    found = to_json(calibration)
    notes = _interrupted(found["run"], "rows", "rows judged")
    rubric = found["rubric"]
    notes += _citation_notes(rubric["name"], found["citations"])
    title = f"rubriclib calibration: {rubric['name']}@{rubric['version']}"
    return page(run_data("calibration", found, notes), title)


def run_data(kind: str, found: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The data block of a goldens or calibration page."""
    generated = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    data = {
        "kind": kind,
        "rubriclib_version": __version__,
        "generated": generated,
        "notes": notes,
        kind: found,
    }
    return clipped(data)  # type: ignore[no-any-return]


def _citation_notes(name: str, citations: dict[str, Any]) -> list[str]:
    """A rubric's citations, for a page's notes: none when its judge gave none."""
    counted = citations_text(CitationCounts(citations["given"], citations["verified"]))
    return [f"{name}: citations {counted}"] if counted else []


def _missed_notes(rubric: dict[str, Any]) -> list[str]:
    """A note for each golden a judgment gave its expected answer but missed for want of a
    citation (the quotes not cited) or for other output field values (those fields)."""
    missed: dict[str, tuple[str, Callable[[Iterable[str]], str]]] = {
        "uncited": ("verdict without citing", _quoted),
        "unmatched": ("answer with other output fields:", "; ".join),
    }
    notes = []
    for golden in rubric["goldens"]:
        for key, (how, shown) in missed.items():
            found = {
                what: None
                for answer, misses in zip(golden["answers"], golden[key], strict=True)
                if answer == _expected_answer(golden)
                for what in misses
            }
            if found:
                notes.append(
                    f"{rubric['rubric']['name']}: golden {golden['name']} got its expected "
                    f"{how} {shown(found)}"
                )
    return notes


def _quoted(quotes: Iterable[str]) -> str:
    return ", ".join(f'"{quote}"' for quote in quotes)


def _expected_answer(golden: dict[str, Any]) -> str:
    """A golden's expected answer as its JSON says it: winner, label or verdict."""
    return str(golden["expected_winner"] or golden["expected_label"] or golden["expected"])


def _interrupted(run: dict[str, Any], planned: str, judged: str) -> list[str]:
    """The note of an interrupted run's page: what was judged of what was `planned`."""
    if not run["interrupted"]:
        return []
    missing = run[planned] - run["judged"]
    return [
        f"interrupted by {run['interrupted']}: {run['judged']} of {run[planned]} {judged}, "
        f"{missing} missing"
    ]

"""A results file (the JSONL `rubriclib eval --out` writes) as the data an HTML report shows:
read as `--resume` reads it (`evals.read_results_lines`), every line checked, per-grader
numbers, the row x grader matrix and, against an older results file, what changed. Pure but
for reading the files."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rubriclib.errors import EvalError, Problem
from rubriclib.evals import read_results_lines
from rubriclib.judging import GradeResult, pairwise_stats
from rubriclib.measure import wilson_interval
from rubriclib.reports.checklists import (
    RubricFinder,
    checklist_failures,
    checklist_of,
    rubric_finder,
    unmarked_notes,
)
from rubriclib.reports.citations import cell_citations, citation_counts
from rubriclib.reports.common import xml_safe
from rubriclib.reports.output_fields import judged_fields, lines_labels, lines_output

TEXT_LIMIT = 2000
"""Characters of one text kept in the page; the full text stays in the results file."""
PROBLEMS_SHOWN = 20
"""Bad lines named one by one; past that, one line says how many more."""
DIGITS = re.compile(r"([0-9]+)")


@dataclass
class ResultsFile:
    """The checked lines of one results file, keyed by (row, grader): the last of a pair, its
    current line (a resumed run appends; the earlier lines are superseded)."""

    path: Path
    lines: dict[tuple[str, str], dict[str, Any]]
    count: int
    """Lines read, duplicates included."""
    modified: str
    """The file's modification time, ISO 8601 in UTC."""
    notes: list[str] = field(default_factory=list)
    """What a reader should know: lines cut short, superseded lines."""


def read_results(path: Path) -> ResultsFile:
    """Read and check a results file as `--resume` reads it (`evals.read_results_lines`: the
    current line of each pair, the lines superseded and cut short); EvalError naming FILE:LINE
    and what is wrong in each line that is no results line. A line cut short is an interrupted
    run, not an error."""
    try:
        read = read_results_lines(path)
        modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError as error:
        raise EvalError.single(str(path), "file", f"cannot read: {error.strerror}") from None
    if read.bad:
        problems = [Problem(f"{path}:{number}", *wrong) for number, *wrong in read.bad]
        raise EvalError(shown_problems(path, problems))
    if not read.read:
        raise EvalError.single(str(path), "file", "holds no results line")
    notes = [f"line {number} was cut short: the run was interrupted" for number in read.cut]
    if read.superseded:
        notes.append(
            f"{read.superseded} line(s) superseded by a later line of their row and grader (a "
            "resumed run appends): the last of each is shown"
        )
    stamp = modified.isoformat(timespec="seconds").replace("+00:00", "Z")
    return ResultsFile(path, read.current, read.read, stamp, notes)


def shown_problems(path: Path, problems: list[Problem]) -> list[Problem]:
    """The first PROBLEMS_SHOWN problems, then one saying how many more there are."""
    if len(problems) <= PROBLEMS_SHOWN:
        return problems
    more = len(problems) - PROBLEMS_SHOWN
    return [*problems[:PROBLEMS_SHOWN], Problem(str(path), "lines", f"{more} more bad line(s)")]


def clipped(value: Any) -> Any:
    """JSON value with every text made safe to show (controls escaped) and cut at TEXT_LIMIT:
    a cut text becomes {"clipped": first TEXT_LIMIT characters, "length": full length}."""
    if isinstance(value, str):
        if len(value) > TEXT_LIMIT:
            return {"clipped": xml_safe(value[:TEXT_LIMIT]), "length": len(value)}
        return xml_safe(value)
    if isinstance(value, dict):
        return {xml_safe(str(key)): clipped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clipped(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def rubric_label(rubric: dict[str, Any]) -> str:
    """`name@version digest` with the digest's first 8 characters."""
    return f"{rubric['name']}@{rubric['version']} {str(rubric['digest'])[:8]}"


def judge_models(details: dict[str, Any]) -> list[str]:
    """The models that judged: a panel's members, else the judge's model."""
    members = (
        details.get("panel", {}).get("judges") if isinstance(details.get("panel"), dict) else None
    )
    if isinstance(members, list) and members:
        return [str(member.get("model")) for member in members if isinstance(member, dict)]
    return [str(details["judge"]["model"])]


def usage_of(details: dict[str, Any]) -> tuple[int, int]:
    """(prompt tokens, completion tokens) of one judgment."""
    usage = details["judge"].get("usage")
    if not isinstance(usage, dict):
        return 0, 0
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def grader_summary(name: str, lines: list[dict[str, Any]], find: RubricFinder) -> dict[str, Any]:
    """One grader's numbers, counted as `rubriclib eval`'s report counts them, with how many
    citations its judges gave and verified (`citation_counts`); a grader judged in checklist
    mode adds which items decided its failures (`checklist_failures`, and
    `checklist_uncounted` judgments whose rubric was not found); one with labels or output
    fields adds their counts and summary (`output_fields.lines_labels`, `lines_output`)."""
    counts = Counter(line["verdict"] for line in lines)
    judged = len(lines)
    verdicts = counts["pass"] + counts["fail"]
    scores = [line["result"].get("score") or 0.0 for line in lines if line["verdict"] != "error"]
    tokens = [usage_of(line["result"]["details"]) for line in lines]
    rubrics = sorted({rubric_label(line["result"]["details"]["rubric"]) for line in lines})
    models = sorted({model for line in lines for model in judge_models(line["result"]["details"])})
    scales = {str(line["result"]["details"]["rubric"].get("scale", "")) for line in lines}
    pairwise = None
    if scales == {"pairwise"}:  # the stats read only verdict and details, both checked
        pairwise = pairwise_stats(GradeResult.model_construct(**line["result"]) for line in lines)
    summary = {
        "name": name,
        "rubrics": rubrics,
        "scale": ", ".join(sorted(scales)),
        "models": models,
        "judged": judged,
        "pass": counts["pass"],
        "fail": counts["fail"],
        "error": counts["error"],
        "pass_rate": counts["pass"] / judged if judged else None,
        "interval": wilson_interval(counts["pass"], judged),
        "mean_score": sum(scores) / verdicts if verdicts else None,
        "pairwise": pairwise,
        "cached": sum(bool(line["result"]["details"]["judge"].get("cached")) for line in lines),
        "prompt_tokens": sum(prompt for prompt, _ in tokens),
        "completion_tokens": sum(completion for _, completion in tokens),
    }
    summary.update(citation_counts(lines))
    if (failures := checklist_failures(lines, find)) is not None:
        summary["checklist_failures"], summary["checklist_uncounted"] = failures
    if (labels := lines_labels(lines, find)) is not None:
        summary["labels"] = labels
    if (output := lines_output(lines, find)) is not None:
        summary["output"] = output
    return summary


def members_of(details: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Votes, panel judges and turns of one judgment, each with its own verdict and reason
    (`label`: who gave it; `given`: a labels rubric's label it gave, where it gave one)."""
    found: dict[str, list[dict[str, Any]]] = {}
    votes = details.get("votes")
    if isinstance(votes, dict) and isinstance(votes.get("verdicts"), list):
        reasons = votes.get("reasons") or []
        scores = votes.get("scores") or []
        given = votes.get("labels") or []
        found["votes"] = [
            {
                "label": f"vote {index + 1}",
                "verdict": verdict,
                "score": scores[index] if index < len(scores) else None,
                "reason": reasons[index] if index < len(reasons) else "",
                "given": given[index] if index < len(given) else None,
            }
            for index, verdict in enumerate(votes["verdicts"])
        ]
    panel = details.get("panel")
    if isinstance(panel, dict) and isinstance(panel.get("judges"), list):
        found["panel"] = [
            {
                "label": str(member.get("model")),
                "verdict": member.get("verdict"),
                "score": member.get("raw_score", member.get("score")),
                "reason": member.get("reason", ""),
                "given": member.get("label"),
            }
            for member in panel["judges"]
            if isinstance(member, dict)
        ]
    turns = details.get("turns")
    if isinstance(turns, list):
        found["turns"] = [
            {
                "label": f"turn {turn.get('turn', index)}",
                "verdict": turn.get("verdict"),
                "score": turn.get("score"),
                "reason": turn.get("reason", ""),
            }
            for index, turn in enumerate(turns)
            if isinstance(turn, dict)
        ]
    return found


def cell(
    line: dict[str, Any], rubrics: dict[str, int], models: dict[str, int], find: RubricFinder
) -> dict[str, Any]:
    """One judgment as the matrix's detail panel shows it; its rubric label and judge model as
    indexes into the report's `rubrics` and `models` (10,000 rows repeat them); a checklist
    judgment's items (`find` gives the rubric that says which answers fail); its citations
    (`citations.cell_citations`); its label, on a labels rubric; its output fields
    (`output_fields.judged_fields`)."""
    result = line["result"]
    details = result["details"]
    judge = details["judge"]
    rubric = rubric_label(details["rubric"])
    entry: dict[str, Any] = {
        "verdict": line["verdict"],
        "score": result.get("score"),
        "reason": result["reason"],
        "rubric": rubrics.setdefault(rubric, len(rubrics)),
        "model": models.setdefault(", ".join(judge_models(details)), len(models)),
        "attempts": judge.get("attempts"),
        "latency_ms": judge.get("latency_ms"),
        "tokens": usage_of(details),
    }
    if judge.get("cached"):
        entry["cached"] = True
    if "raw_score" in details:
        entry["raw_score"] = details["raw_score"]
    pairwise = details.get("pairwise")
    if isinstance(pairwise, dict):
        entry["pairwise"] = {key: pairwise.get(key) for key in ("winner", "position_flip")}
    checklist = checklist_of(details, find(details["rubric"]))
    if checklist is not None:
        entry["checklist"] = checklist
    entry.update(members_of(details))
    if isinstance(label := details.get("label"), str):
        entry["label"] = label
    if (fields := judged_fields(details)) is not None:
        entry["output_fields"] = fields
    if citations := cell_citations(details, line.get("output")):
        entry["citations"] = citations
    return entry


def natural_key(row_id: str) -> list[tuple[int, int | str]]:
    """Sorts `q2` before `q10`: digit runs compare as numbers."""
    return [
        (0, int(part)) if part.isascii() and part.isdigit() else (1, part)
        for part in DIGITS.split(row_id)
    ]


def matrix(
    results: ResultsFile, graders: list[str], find: RubricFinder
) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """One entry per row id (in natural order): its metadata, output and a cell per grader
    (None where that grader has no line); and the rubric labels and models the cells index."""
    rows: dict[str, dict[str, Any]] = {}
    rubrics: dict[str, int] = {}
    models: dict[str, int] = {}
    column = {name: index for index, name in enumerate(graders)}
    for (row_id, grader), line in results.lines.items():
        row = rows.get(row_id)
        if row is None:
            row = rows[row_id] = {"id": row_id, "metadata": line.get("metadata") or {}}
            row["cells"] = [None] * len(graders)
        if "output" in line and "output" not in row:
            row["output"] = line["output"]
        row["cells"][column[grader]] = cell(line, rubrics, models, find)
    return [rows[key] for key in sorted(rows, key=natural_key)], list(rubrics), list(models)


def graders_of(*files: ResultsFile) -> list[str]:
    """Grader names in alphabetical order (a run writes lines in the order judgments finish)."""
    return sorted({grader for results in files for _, grader in results.lines})


def file_entry(results: ResultsFile) -> dict[str, Any]:
    return {"path": str(results.path), "modified": results.modified, "lines": results.count}


def report_data(
    results: ResultsFile,
    against: ResultsFile | None = None,
    comparison: dict[str, Any] | None = None,
    expected: int | None = None,
    version: str = "",
    find: RubricFinder | None = None,
) -> dict[str, Any]:
    """Everything the page shows, as JSON-ready data with every text clipped and made safe;
    `comparison` is comparison.compare(results, against); `find` gives the rubric that
    judged a checklist judgment (by default looked up on the rubric search path)."""
    find = find or rubric_finder()
    graders = graders_of(results)
    by_grader: dict[str, list[dict[str, Any]]] = {name: [] for name in graders}
    for (_, grader), line in results.lines.items():
        by_grader[grader].append(line)
    rows, rubrics, models = matrix(results, graders, find)
    judged = len(results.lines)
    notes = results.notes + unmarked_notes(results.lines.values(), find)
    if expected is not None and expected != judged:
        missing = expected - judged
        notes.append(
            f"{judged} of {expected} expected judgments: {missing} missing"
            if missing > 0
            else f"{judged} judgments, {-missing} more than the {expected} expected"
        )
    data = {
        "rubriclib_version": version,
        "generated": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "file": file_entry(results),
        "against": file_entry(against) if against else None,
        "judgments": judged,
        "errors": sum(line["verdict"] == "error" for line in results.lines.values()),
        "expected": expected,
        "notes": notes + (against.notes if against else []),
        "graders": [grader_summary(name, by_grader[name], find) for name in graders],
        "rubrics": rubrics,
        "models": models,
        "rows": rows,
        "comparison": comparison,
    }
    if comparison is not None:
        changed = {(change["row"], change["grader"]) for change in comparison["changes"]}
        for row in rows:
            row["changed"] = [(row["id"], name) in changed for name in graders]
    return clipped(data)  # type: ignore[no-any-return]

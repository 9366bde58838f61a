"""One self-contained HTML page from a report's data: the data as an inert JSON block, the
page's own script and style inline, a summary for readers without scripts. No network."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Callable, Iterable
from importlib.resources import files
from pathlib import Path
from typing import Any

from rubriclib._version import __version__
from rubriclib.reports.checklists import rubric_finder
from rubriclib.reports.html.comparison import compare
from rubriclib.reports.html.data import ResultsFile, read_results, report_data
from rubriclib.rubrics import Rubric

MARKER = re.compile(r"@@[A-Z_]+@@")
JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
"""Escapes that keep `</script>` or `<!--` in the data from ending or changing the block."""


def embedded_json(data: Any) -> str:
    """JSON safe inside a <script type="application/json"> block: no `<`, `>` or `&`."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for character, escape in JSON_ESCAPES.items():
        text = text.replace(character, escape)
    return text


def noscript_summary(data: dict[str, Any]) -> str:
    """The per-grader summary (a goldens or calibration page: its agreement numbers) as escaped
    HTML, for a reader with scripts turned off."""
    if data.get("kind") in ("goldens", "calibration"):
        return agreement_summary(data)
    heads = (
        "grader",
        "rubric",
        "judged",
        "pass",
        "fail",
        "error",
        "pass rate",
        "citations verified",
    )
    values = [
        (
            grader["name"],
            ", ".join(grader["rubrics"]),
            grader["judged"],
            grader["pass"],
            grader["fail"],
            grader["error"],
            percent(grader["pass_rate"]),
            verified_share(grader),
        )
        for grader in data["graders"]
    ]
    lines = f"{data['judgments']} judgments, {data['errors']} errors"
    return summary_html(f"{lines}. Turn on scripts for the row-by-row matrix.", data, heads, values)


def agreement_summary(data: dict[str, Any]) -> str:
    """Accuracy and kappa per rubric of a goldens page, or overall of a calibration page."""
    found = data[data["kind"]]
    measured = found["rubrics"] if data["kind"] == "goldens" else [found]
    values = [
        (
            f"{numbers['rubric']['name']}@{numbers['rubric']['version']}",
            percent(numbers["accuracy"]),
            "n/a" if numbers["kappa"] is None else f"{numbers['kappa']:.2f}",
        )
        for numbers in measured
    ]
    heads = ("rubric", "accuracy", "kappa")
    return summary_html("Turn on scripts for the details.", data, heads, values)


def percent(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.1%}"


def verified_share(grader: dict[str, Any]) -> str:
    """`3 of 4 (75.0%)`: a grader's verified citations of those given; `-` when none were."""
    given = grader.get("citations") or 0
    if not given:
        return "-"
    return f"{grader['citations_verified']} of {given} ({percent(grader['citations_share'])})"


def summary_html(
    lead: str, data: dict[str, Any], heads: tuple[str, ...], values: list[tuple[Any, ...]]
) -> str:
    """A lead sentence, the page's notes and a table, every text escaped."""
    head = "".join(f"<th>{name}</th>" for name in heads)
    cells = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(value))}</td>" for value in row) + "</tr>"
        for row in values
    )
    notes = "".join(f"<p class=note>{html.escape(note)}</p>" for note in data["notes"])
    return (
        f"<p>{html.escape(lead)}</p>{notes}"
        f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"
    )


def page(data: dict[str, Any], title: str | None = None) -> str:
    """The HTML page showing `data` (data.report_data's output, or pages' for goldens and
    calibration) under `title` (by default the results files' names)."""
    package = files("rubriclib.reports.html")
    template = package.joinpath("html_report_page.html").read_text(encoding="utf-8")
    script = "\n".join(  # one script: the page's, and the views (goldens, calibration,
        package.joinpath(name).read_text(encoding="utf-8")  # citations, output fields,
        for name in (  # checklists) it calls
            "html_report_views.js",
            "html_report_citations.js",
            "html_report_output.js",
            "html_report_checklist.js",
            "html_report_page.js",
        )
    )
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    if title is None:
        title = f"rubriclib report: {Path(data['file']['path']).name}"
        if data["against"]:
            title += f" against {Path(data['against']['path']).name}"
    replacements = {
        "@@SCRIPT_HASH@@": f"sha256-{digest}",
        "@@VERSION@@": html.escape(__version__),
        "@@TITLE@@": html.escape(title),
        "@@NOSCRIPT@@": noscript_summary(data),
        "@@DATA@@": embedded_json(data),
        "@@SCRIPT@@": script,
    }
    # One pass over the template: text put in is never searched for markers again.
    return MARKER.sub(lambda found: replacements[found.group()], template)


def build_report(
    results_path: Path,
    against_path: Path | None = None,
    expected: int | None = None,
    extend: Callable[[ResultsFile, dict[str, Any]], None] | None = None,
    rubrics: Iterable[Rubric] = (),
) -> str:
    """The HTML report of a results file, alone or against an older one, its data given to
    `extend` to add to first; `rubrics` (an eval's) are looked at first for the rubric that
    judged a checklist judgment. EvalError on a file that is not a results file of ours."""
    results = read_results(results_path)
    against = read_results(against_path) if against_path else None
    comparison = compare(results, against) if against else None
    find = rubric_finder(rubrics)
    data = report_data(results, against, comparison, expected, __version__, find)
    if extend is not None:
        extend(results, data)
    return page(data)

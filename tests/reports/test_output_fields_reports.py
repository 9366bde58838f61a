"""Output fields everywhere an eval's results go: an eval whose grader's rubric has them, judged
against the scripted server, and its table, JSON and JUnit reports and HTML page each showing
the grader's summary (over the judgments that are verdicts); a page built from a results file
alone; each field worded once; a judgment's fields and citations read as untrusted data."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import embedded_data
from judge_server import JudgeServer
from output_fields_eval import HOSTILE_QUOTE, REFUSAL, triage_eval
from results_lines import results_line, write_results

from rubriclib.cli import main
from rubriclib.reports.html.data import read_results, report_data
from rubriclib.reports.output_fields import field_text, judged_fields

SEVERITY = "high 2, medium 0, low 1"
CONFIDENCE = "mean 0.700, min 0.5, max 0.9 (2 of 3 judgments)"


@pytest.fixture
def eval_file(endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]) -> Path:
    return triage_eval(endpoint, library, write_file)


def run(eval_file: Path, *arguments: str) -> str:
    ran = CliRunner().invoke(main, ["eval", str(eval_file), *arguments])
    assert ran.exit_code == 3, ran.output  # undecided: r4's judge error, and no gate
    return ran.output


def test_the_table_has_the_summary_under_the_grader_s_line(eval_file: Path) -> None:
    lines = run(eval_file).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("triage "))
    assert lines[at + 1 : at + 6] == [
        "  output fields over 3 of 4 judgment(s) (judge errors have none):",
        f"    severity: {SEVERITY}",
        f"    confidence: {CONFIDENCE}",
        "    escalate: true 1, false 2",
        "    issues: 3 item(s), 1.00 per judgment",
    ]
    assert lines[at + 6] == ""


def test_the_json_report_has_an_output_key_per_grader(eval_file: Path) -> None:
    grader = json.loads(run(eval_file, "--format", "json"))["graders"][0]
    assert grader["output"]["counted"] == 3
    assert grader["output"]["fields"]["severity"] == {
        "type": "string",
        "kind": "counts",
        "given": 3,
        "counts": {"high": 2, "medium": 0, "low": 1},
    }
    assert grader["output"]["fields"]["issues"]["mean_items"] == 1.0


def test_junit_has_the_summary_in_the_grader_s_properties(eval_file: Path) -> None:
    root = ElementTree.fromstring(run(eval_file, "--format", "junit"))
    properties = {found.get("name"): found.get("value") for found in root.iter("property")}
    assert properties["output.counted"] == "3"
    assert properties["output.severity"] == SEVERITY
    assert properties["output.confidence"] == CONFIDENCE
    assert properties["output.issues"] == "3 item(s), 1.00 per judgment"


def test_the_html_page_has_the_summary_and_each_judgment_s_fields(
    eval_file: Path, tmp_path: Path
) -> None:
    page, out = tmp_path / "report.html", tmp_path / "results.jsonl"
    run(eval_file, "--out", str(out), "--report", str(page))
    data = embedded_data(page.read_text(encoding="utf-8"))
    output = data["graders"][0]["output"]
    assert output["counted"] == 3
    assert dict(map(tuple, output["texts"]))["severity"] == SEVERITY
    row = next(row for row in data["rows"] if row["id"] == "r1")
    issues = row["cells"][0]["output_fields"]["issues"]
    assert [c["status"] for issue in issues for c in issue["citations"]] == [
        "verified",
        "unverified",
    ]
    assert issues[0]["citations"][0]["quote"] == REFUSAL
    assert issues[1]["citations"][0]["quote"] == HOSTILE_QUOTE  # kept as text; the page escapes
    error = next(row for row in data["rows"] if row["id"] == "r4")["cells"][0]
    assert "output_fields" not in error
    # the page of the results file alone says the same
    alone = json.loads(json.dumps(report_data(read_results(out))))
    assert alone["graders"] == data["graders"]


def test_without_the_rubric_a_results_file_s_fields_are_read_from_their_values(
    tmp_path: Path,
) -> None:
    lines = [results_line("r1", "g", "fail"), results_line("r2", "g", "error")]
    lines[0]["result"]["details"]["output"] = {"severity": "high", "issues": [{}, {}]}
    lines[1]["result"]["details"]["output"] = {"severity": "low"}  # an error's: not counted
    data = report_data(read_results(write_results(tmp_path / "r.jsonl", lines)))
    output = data["graders"][0]["output"]
    assert output["counted"] == 1
    assert output["texts"] == [
        ["severity", "filled in 1 of 1 judgment(s)"],
        ["issues", "2 item(s), 2.00 per judgment"],
    ]


def test_a_grader_without_output_fields_has_no_output_key(tmp_path: Path) -> None:
    data = report_data(
        read_results(write_results(tmp_path / "r.jsonl", [results_line("r1", "g", "pass")]))
    )
    assert "output" not in data["graders"][0]
    assert "output_fields" not in data["rows"][0]["cells"][0]


@pytest.mark.parametrize(
    ("field", "counted", "text"),
    [
        ({"kind": "counts", "given": 2, "counts": {"a": 2, "b": 0}}, 2, "a 2, b 0"),
        ({"kind": "counts", "given": 0, "counts": {"a": 0}}, 2, "none given"),
        ({"kind": "numbers", "given": 1, "mean": 2.0, "min": 2, "max": 2}, 2, "mean 2.000, min 2, max 2 (1 of 2 judgments)"),
        ({"kind": "items", "given": 2, "items": 3, "mean_items": 1.5}, 2, "3 item(s), 1.50 per judgment"),
        ({"kind": "filled", "given": 1}, 2, "filled in 1 of 2 judgment(s)"),
    ],
)  # fmt: skip
def test_each_kind_of_summary_in_words(field: dict[str, Any], counted: int, text: str) -> None:
    assert field_text(field, counted) == text


def test_a_judgment_s_citations_of_any_shape_are_read_as_citations() -> None:
    details = {
        "output": {
            "issues": [
                {"description": "d", "citations": ["just text", {"quote": 3, "status": "?"}]}
            ]
        }
    }
    issue = judged_fields(details)["issues"][0]  # type: ignore[index]
    assert issue["description"] == "d"
    assert [(c["quote"], c["status"]) for c in issue["citations"]] == [
        ("just text", "unverified"),
        ("3", "unverified"),
    ]
    assert judged_fields({"output": "not a mapping"}) is None


def test_a_resumed_run_sums_the_fields_of_the_results_it_kept(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    first = json.loads(run(eval_file, "--out", str(out), "--format", "json"))
    asked = len(endpoint.requests)
    again = json.loads(run(eval_file, "--out", str(out), "--resume", "--format", "json"))
    assert again["run"]["resumed"] >= 3 and len(endpoint.requests) - asked <= 2  # r4 again
    assert again["graders"][0]["output"] == first["graders"][0]["output"]

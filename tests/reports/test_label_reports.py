"""Labels everywhere an eval's results go: an eval whose grader's rubric has a labels scale,
judged against the scripted server, and its table, JSON and JUnit reports and HTML page each
counting the grader's labels (in the rubric's order, zeros kept, each with its verdict) beside
the pass/fail numbers; a page built from a results file alone; a resumed run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import embedded_data
from judge_server import JudgeServer
from labels_eval import support_eval
from results_lines import results_line, write_results

from rubriclib.cli import main
from rubriclib.reports.html.data import read_results, report_data
from rubriclib.reports.output_fields import labels_text

COUNTS = {"resolved": 2, "partly-resolved": 1, "not-resolved": 0}
WORDS = "resolved 2 (pass), partly-resolved 1 (fail), not-resolved 0 (fail)"


@pytest.fixture
def eval_file(endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]) -> Path:
    return support_eval(endpoint, library, write_file)


def run(eval_file: Path, *arguments: str) -> str:
    ran = CliRunner().invoke(main, ["eval", str(eval_file), *arguments])
    assert ran.exit_code == 3, ran.output  # undecided: r4's judge error, and no gate
    return ran.output


def test_the_table_counts_each_label_under_the_grader_s_line(eval_file: Path) -> None:
    lines = run(eval_file).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("support "))
    assert lines[at].split()[2:6] == ["4", "2", "1", "1"]  # judged, pass, fail, error
    assert lines[at + 1] == f"  labels: {WORDS}"
    assert lines[at + 2].startswith("keywords ")  # a pass-fail grader has no labels line


def test_the_json_report_has_a_labels_key_on_a_labels_grader(eval_file: Path) -> None:
    support, keywords = json.loads(run(eval_file, "--format", "json"))["graders"]
    assert support["labels"] == COUNTS and list(support["labels"]) == list(COUNTS)
    assert (support["pass"], support["fail"], support["error"]) == (2, 1, 1)
    assert "labels" not in keywords


def test_junit_has_the_label_counts_in_the_grader_s_properties(eval_file: Path) -> None:
    root = ElementTree.fromstring(run(eval_file, "--format", "junit"))
    suites = {suite.get("name"): suite for suite in root.iter("testsuite")}
    properties = {p.get("name"): p.get("value") for p in suites["support"].iter("property")}
    assert properties["labels"] == WORDS
    assert "labels" not in {p.get("name") for p in suites["keywords"].iter("property")}
    assert suites["support"].get("failures") == "1"  # the gate's numbers stay pass/fail


def test_the_html_page_counts_labels_and_each_judgment_has_its_label(
    eval_file: Path, tmp_path: Path
) -> None:
    page, out = tmp_path / "report.html", tmp_path / "results.jsonl"
    run(eval_file, "--out", str(out), "--report", str(page))
    data = embedded_data(page.read_text(encoding="utf-8"))
    graders = {grader["name"]: grader for grader in data["graders"]}
    assert graders["support"]["labels"] == {"counts": COUNTS, "text": WORDS}
    assert "labels" not in graders["keywords"]
    column = [grader["name"] for grader in data["graders"]].index("support")
    cells = {row["id"]: row["cells"] for row in data["rows"]}
    assert cells["r3"][column]["label"] == "partly-resolved"
    assert cells["r3"][column]["verdict"] == "fail"
    assert "label" not in cells["r4"][column] and "label" not in cells["r1"][1 - column]
    alone = json.loads(json.dumps(report_data(read_results(out))))
    assert alone["graders"] == data["graders"]  # the results file alone says the same


def test_a_resumed_run_counts_the_labels_of_the_results_it_kept(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    first = json.loads(run(eval_file, "--out", str(out), "--format", "json"))
    asked = len(endpoint.requests)
    again = json.loads(run(eval_file, "--out", str(out), "--resume", "--format", "json"))
    assert again["run"]["resumed"] >= 6 and len(endpoint.requests) - asked <= 4  # r4 again
    assert again["graders"][0]["labels"] == first["graders"][0]["labels"] == COUNTS


def test_without_the_rubric_a_results_file_s_labels_are_counted_as_given(
    tmp_path: Path,
) -> None:
    lines = [results_line(f"r{n}", "g", verdict) for n, verdict in enumerate(["fail", "pass", "error", "pass"])]  # fmt: skip
    for line, label in zip(lines, ["meh", "great", "great", 7], strict=True):
        line["result"]["details"]["label"] = label  # an error's and a number: not counted
    data = report_data(read_results(write_results(tmp_path / "r.jsonl", lines)))
    assert data["graders"][0]["labels"] == {
        "counts": {"meh": 1, "great": 1},
        "text": "meh 1 (fail), great 1 (pass)",
    }
    assert data["rows"][3]["cells"][0].get("label") is None


def test_a_grader_without_labels_has_no_labels_key(tmp_path: Path) -> None:
    data = report_data(
        read_results(write_results(tmp_path / "r.jsonl", [results_line("r1", "g", "pass")]))
    )
    assert "labels" not in data["graders"][0] and "label" not in data["rows"][0]["cells"][0]


def test_a_label_the_rubric_does_not_name_is_worded_without_a_verdict() -> None:
    assert labels_text({"good": 1, "odd": 2}, {"good": "pass"}) == "good 1 (pass), odd 2"

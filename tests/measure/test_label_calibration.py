"""`calibrate --labels` on a labels rubric: human labels read by name (a bad one a problem
naming the row and field, before any request), agreement, kappa and the confusion matrix over
the labels with the pass-fail agreement by the rubric's map beside them, the disagreements by
label name, and `--to-goldens` writing `expected: LABEL`; judged by the scripted server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer
from labels_eval import SUPPORT, label_responder

from rubriclib.cli import main
from rubriclib.rubrics import load_rubric
from rubriclib.rubrics.golden import labelled_goldens
from rubriclib.rubrics.goldens_file import parse_goldens_file

LABELLED = [
    {"id": "a", "output": "Refunded. label:resolved", "label": "resolved"},
    {"id": "b", "output": "Started. label:resolved", "label": "partly-resolved"},
    {"id": "c", "output": "Pending. label:partly-resolved", "label": "not-resolved"},
    {"id": "d", "output": "No. label:not-resolved", "label": "not-resolved", "tags": ["no"]},
    {"id": "e", "output": "verdict:text", "label": "resolved"},
]
"""a and d agree; b disagrees by label and verdict (pass against fail), c by label only (both
fail); e is a judge error."""


@pytest.fixture
def labels(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> Callable[[list[dict[str, Any]]], Path]:
    (library / "support.md").write_text(SUPPORT, encoding="utf-8")
    endpoint.responder = label_responder()

    def write(rows: list[dict[str, Any]]) -> Path:
        return write_file("labels.jsonl", "".join(json.dumps(row) + "\n" for row in rows))

    return write


def calibrate(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["calibrate", "support", *arguments])


def test_agreement_is_over_the_labels_with_the_pass_fail_agreement_beside(
    labels: Callable[[list[dict[str, Any]]], Path],
) -> None:
    result = calibrate("--labels", str(labels(LABELLED)), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["verdicts"], report["judge_errors"], report["disagreements"]) == (4, 1, 2)
    assert report["accuracy"] == 0.5 and report["kappa"] == pytest.approx(3 / 11)
    assert report["confusion"] == {
        "resolved": {"resolved": 1, "partly-resolved": 0, "not-resolved": 0, "error": 1},
        "partly-resolved": {"resolved": 1, "partly-resolved": 0, "not-resolved": 0, "error": 0},
        "not-resolved": {"resolved": 0, "partly-resolved": 1, "not-resolved": 1, "error": 0},
    }
    assert report["pass_fail"] == {
        "accuracy": 0.75,
        "kappa": pytest.approx(0.5),
        "confusion": {"pass": {"pass": 1, "fail": 0, "error": 1}, "fail": {"pass": 1, "fail": 2, "error": 0}},
    }  # fmt: skip
    assert report["base_rate"] == 0.25  # of the human labels' verdicts
    assert report["majority_baseline"] == {"label": "fail", "accuracy": 0.75}
    cases = [
        (d["id"], d["human_label"], d["label"], d["judge_label"], d["verdict"])
        for d in report["disagreement_rows"]
    ]
    assert cases == [
        ("b", "partly-resolved", "fail", "resolved", "pass"),
        ("c", "not-resolved", "fail", "partly-resolved", "fail"),
    ]
    assert report["tags"]["no"]["accuracy"] == 1.0
    assert "not-resolved" in report["tags"]["no"]["confusion"]


def test_the_table_shows_the_label_matrix_and_disagreements_by_name(
    labels: Callable[[list[dict[str, Any]]], Path],
) -> None:
    path = labels(LABELLED)
    result = calibrate("--labels", str(path))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "  pass/fail      accuracy 75.0%, kappa 0.50 (each label read as the verdict it means)" in lines  # fmt: skip
    at = lines.index("confusion (rows: human label; columns: judge label)")
    head, *rows = lines[at + 1 : at + 5]
    assert head.split("judge ")[1:] == ["resolved ", "partly-resolved    ", "not-resolved           ", "error"]  # fmt: skip
    assert [row.split() for row in rows] == [
        ["human", "resolved", "1", "0", "0", "1"],
        ["human", "partly-resolved", "1", "0", "0", "0"],
        ["human", "not-resolved", "0", "1", "1", "0"],
    ]
    assert len({len(line) for line in lines[at + 1 : at + 5]}) == 1  # the columns line up
    assert (
        f"  {path}:2 (id b)  human partly-resolved (fail)  judge resolved (pass): scripted resolved"
        in lines
    )
    assert (
        f"  {path}:3 (id c)  human not-resolved (fail)  judge partly-resolved (fail): "
        "scripted partly-resolved" in lines
    )


def test_disagreements_become_goldens_expecting_the_label(
    labels: Callable[[list[dict[str, Any]]], Path], tmp_path: Path, library: Path
) -> None:
    goldens = tmp_path / "review.yaml"
    result = calibrate("--labels", str(labels(LABELLED)), "--to-goldens", str(goldens))
    assert result.exit_code == 0, result.output
    loaded = parse_goldens_file(goldens, str(goldens))
    assert [(g.name, g.expected_label) for g in loaded] == [
        ("calibration-line-2", "partly-resolved"),
        ("calibration-line-3", "not-resolved"),
    ]
    assert loaded[0].why == (
        "human label partly-resolved (fail); the judge said resolved (pass): scripted resolved"
    )
    rubric = load_rubric("support")
    checked, problems = labelled_goldens(loaded, rubric.labels, str(goldens))
    assert problems == [] and [g.expected for g in checked] == ["fail", "fail"]


def test_bad_labels_are_named_by_line_and_field_before_any_request(
    labels: Callable[[list[dict[str, Any]]], Path], endpoint: JudgeServer
) -> None:
    path = labels(
        [
            {"output": "x", "label": "resolved"},
            {"output": "x", "label": "pass"},
            {"output": "x"},
            {"output": "x", "label": "resolved", "score": 4},
            {"output": "x", "label": 3},
        ]
    )
    result = calibrate("--labels", str(path))
    assert result.exit_code == 2 and endpoint.requests == []
    options = "resolved, partly-resolved, not-resolved"
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {path}:2: label: must be one of {options}, not 'pass'",
        f"rubriclib: error: {path}:3: label: is required (one of {options})",
        f"rubriclib: error: {path}:4: score: support is a labels rubric: label one of {options}",
        f"rubriclib: error: {path}:5: label: must be one of {options}, not 3",
    ]

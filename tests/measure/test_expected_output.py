"""Goldens that expect output field values (`expected_output`): checked against the rubric's
fields when it is read, and met by a judgment only when it gives them beside the verdict."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer, Reply, tool_reply

from rubriclib import RubricError, load_rubric
from rubriclib.cli import main

HEADER = """\
---
name: triage
version: 1.0.0
scale: labels
description: Whether a support reply resolves the ticket.
labels: {resolved: pass, not-resolved: fail}
output:
  severity: {type: string, enum: [low, high]}
  urgent: {type: boolean}
  notes: {type: string, optional: true}
"""
BODY = "---\n# Triage\n\nLabel the reply.\n"
GOLDENS = """\
goldens:
  - {name: calm, output: "severity:low fine", expected: resolved,
     expected_output: {severity: low, urgent: false}}
  - {name: wrong, output: "severity:low bad", expected: not-resolved,
     expected_output: {severity: high}}
"""


def triage_judge(body: dict[str, Any]) -> Reply:
    """The label by the output's last word, the severity it names, never urgent."""
    user = body["messages"][1]["content"]
    severity = user.split("severity:", 1)[1].split()[0]
    label = "resolved" if "fine" in user else "not-resolved"
    arguments = {"reason": "scripted", "severity": severity, "urgent": False, "label": label}
    return tool_reply("set_grade_label", arguments)


def test_a_golden_is_met_only_with_its_expected_output(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    path = write_file("rubrics/triage.md", HEADER + GOLDENS + BODY)
    endpoint.responder = triage_judge  # type: ignore[assignment]
    ran = CliRunner().invoke(main, ["test-goldens", str(path), "--format", "json"])
    assert ran.exit_code == 1, ran.output
    [report] = json.loads(ran.stdout)["rubrics"]
    assert report["accuracy"] == 1.0  # both labels right: accuracy measures the answer alone
    assert report["misses"] == 1 and report["unmatched"] == 1
    goldens = {golden["name"]: golden for golden in report["goldens"]}
    assert goldens["calm"]["met"] == [True]
    assert goldens["wrong"]["unmatched"] == [["severity: expected 'high', got 'low'"]]
    table = CliRunner().invoke(main, ["test-goldens", str(path)]).stdout
    assert "missed output fields 1" in table
    assert "output fields: severity: expected 'high', got 'low'" in table


@pytest.mark.parametrize(
    ("expected", "field", "message"),
    [
        ("{colour: red}", "expected_output.colour", "is not an output field"),
        ("{notes: hi}", "expected_output.notes", "only enum, integer and boolean fields"),
        ("{severity: medium}", "expected_output.severity", "'medium' is not one of low, high"),
        ("{urgent: 1}", "expected_output.urgent", "must be true or false"),
    ],
)
def test_an_expected_output_that_does_not_fit_is_named(
    write_file: Callable[..., Path], expected: str, field: str, message: str
) -> None:
    golden = (
        f"goldens:\n  - {{name: a, output: x, expected: resolved, expected_output: {expected}}}\n"
    )
    path = write_file("triage.md", HEADER + golden + BODY)
    with pytest.raises(RubricError) as caught:
        load_rubric(str(path))
    [problem] = caught.value.problems
    assert problem.field == f"goldens[0].{field}" and message in problem.message
    assert problem.source == f"{path}:12"


def test_a_rubric_without_output_fields_expects_none(write_file: Callable[..., Path]) -> None:
    header = HEADER.split("output:")[0]
    golden = "goldens:\n  - {name: a, output: x, expected: resolved, expected_output: {a: 1}}\n"
    with pytest.raises(RubricError, match="goldens\\[0\\].expected_output: the rubric has no"):
        load_rubric(str(write_file("plain.md", header + golden + BODY)))


def test_the_goldens_page_notes_a_golden_met_but_for_its_fields(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    from conftest import embedded_data

    path = write_file("rubrics/triage.md", HEADER + GOLDENS + BODY)
    endpoint.responder = triage_judge  # type: ignore[assignment]
    page = tmp_path / "goldens.html"
    CliRunner().invoke(main, ["test-goldens", str(path), "--report", str(page)])
    notes = embedded_data(page.read_text())["notes"]
    assert (
        "triage: golden wrong got its expected answer with other output fields: severity: "
        "expected 'high', got 'low'" in notes
    )


TALLIED = """\
- {name: met, output: "severity:low fine", expected: resolved, expected_output: {severity: low}}
- {name: field-wrong, output: "severity:low fine", expected: resolved,
   expected_output: {severity: high}}
- {name: label-wrong, output: "severity:high fine", expected: not-resolved}
- {name: refused, output: "severity:low bad", expected: not-resolved}
"""
"""Met; the label right but a field wrong (a miss, tallied by its label's verdict: a true pass);
a false pass; a true fail."""


@pytest.mark.parametrize("given", ["--goldens", "the rubric's goldens file"])
def test_every_judged_golden_is_tallied_by_verdict_once(
    endpoint: JudgeServer, write_file: Callable[..., Path], given: str
) -> None:
    path = write_file("project/rubrics/triage.md", HEADER + BODY)
    arguments = ["test-goldens", str(path)]
    if given == "--goldens":
        arguments += ["--goldens", str(write_file("more.yaml", TALLIED))]
    else:
        write_file("project/goldens/triage.yaml", TALLIED)
    endpoint.responder = triage_judge  # type: ignore[assignment]
    ran = CliRunner().invoke(main, [*arguments, "--format", "json"])
    assert ran.exit_code == 1, ran.output
    [report] = json.loads(ran.stdout)["rubrics"]
    tally = report["counts"]["verdicts"]
    assert tally == {"true_pass": 2, "false_pass": 1, "true_fail": 1, "false_fail": 0}
    assert sum(tally.values()) == report["judgments"] == 4
    assert report["misses"] == 2 and report["unmatched"] == 1
    table = CliRunner().invoke(main, arguments).stdout
    assert "by verdict: true pass 2, false pass 1, true fail 1, false fail 0" in table

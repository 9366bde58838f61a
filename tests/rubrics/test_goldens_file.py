"""goldens_file.py: a goldens file given with `test-goldens --goldens`, or to `validate`, is
checked against its rubric exactly as the rubric's own goldens are, each problem by file, line
and field, before any request."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer

from rubriclib.cli import main

OUTPUT = "output:\n  tone: {type: string, enum: [calm, rude]}\n"
RUBRICS = {
    "pass-fail": "scale: pass-fail\n",
    "1-5": "scale: 1-5\npass_threshold: 4\n",
    "labels": "scale: labels\nlabels: {resolved: pass, not-resolved: fail}\n",
}
"""Each scale's frontmatter lines; every rubric has the output field `tone`."""
PASSING = {"pass-fail": "pass", "1-5": "pass", "labels": "resolved"}
"""A good `expected` on each scale."""
NOT_A_LABEL = {
    "pass-fail": "{given} must be pass or fail (a label needs scale labels)",
    "1-5": "{given} must be pass or fail (a label needs scale labels)",
    "labels": "{given} is not a label: one of resolved, not-resolved",
}
BAD = {
    "a label the rubric lacks": ("expected: maybe-resolved", "expected", "'maybe-resolved'"),
    "a misspelt verdict": ("expected: pas", "expected", "'pas'"),
    "a value outside the enum": (
        "expected_output: {tone: angry}",
        "expected_output.tone",
        "'angry' is not one of calm, rude",
    ),
}


def rubric_file(write_file: Callable[..., Path], scale: str) -> Path:
    frontmatter = "name: checked\nversion: 1.0.0\ndescription: Checked goldens.\n"
    text = f"---\n{frontmatter}{RUBRICS[scale]}{OUTPUT}---\nJudge the reply.\n"
    return write_file("checked.md", text)


def bad_goldens(write_file: Callable[..., Path], scale: str, bad: str) -> tuple[Path, str]:
    """A goldens file whose third golden (lines 7 on) holds the bad value (`expected` on line 9,
    `expected_output` on 10); the message expected."""
    line, _, given = BAD[bad]
    good = f"- name: fine\n  output: calm reply\n  expected: {PASSING[scale]}\n"
    golden = f"- name: odd\n  output: odd reply\n  expected: {PASSING[scale]}\n  {line}\n"
    if line.startswith("expected:"):
        golden = f"- name: odd\n  output: odd reply\n  {line}\n"
    path = write_file("more.yaml", good + good.replace("fine", "also-fine") + golden)
    message = NOT_A_LABEL[scale].format(given=given) if line.startswith("expected:") else given
    return path, message


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("scale", RUBRICS)
def test_test_goldens_checks_a_goldens_file_against_the_rubric_before_any_request(
    endpoint: JudgeServer, write_file: Callable[..., Path], scale: str, bad: str
) -> None:
    rubric = rubric_file(write_file, scale)
    goldens, message = bad_goldens(write_file, scale, bad)
    result = CliRunner().invoke(main, ["test-goldens", str(rubric), "--goldens", str(goldens)])
    assert result.exit_code == 2, result.output
    field = BAD[bad][1]
    line = 10 if field == "expected_output.tone" else 9
    assert result.stderr == f"rubriclib: error: {goldens}:{line}: goldens[2].{field}: {message}\n"
    assert endpoint.requests == []


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("scale", RUBRICS)
def test_validate_checks_a_goldens_file_against_the_rubric_it_is_given(
    write_file: Callable[..., Path], scale: str, bad: str
) -> None:
    rubric = rubric_file(write_file, scale)
    goldens, message = bad_goldens(write_file, scale, bad)
    alone = CliRunner().invoke(main, ["validate", str(goldens)])
    assert alone.exit_code == 0
    assert alone.stdout == (
        f"{goldens}: ok (3 goldens; read alone: --rubric REF checks them for a rubric)\n"
    )
    result = CliRunner().invoke(main, ["validate", str(goldens), "--rubric", str(rubric)])
    assert result.exit_code == 1
    line = 10 if BAD[bad][1] == "expected_output.tone" else 9
    assert result.stdout == f"{goldens}:{line}: goldens[2].{BAD[bad][1]}: {message}\n"


def test_validate_checks_a_goldens_file_against_the_rubric_it_belongs_to(
    write_file: Callable[..., Path],
) -> None:
    write_file(
        "project/rubrics/checked.md",
        rubric_file(write_file, "labels").read_text(encoding="utf-8"),
    )
    belonging = write_file(
        "project/goldens/checked.yaml", "- {name: typo, output: x, expected: pas}\n"
    )
    result = CliRunner().invoke(main, ["validate", str(belonging)])
    assert result.exit_code == 1
    assert result.stdout == (
        f"{belonging}:1: goldens[0].expected: 'pas' is not a label: one of resolved, not-resolved\n"
    )
    belonging.write_text("- {name: fixed, output: x, expected: resolved}\n", encoding="utf-8")
    fixed = CliRunner().invoke(main, ["validate", str(belonging), "--json"])
    [entry] = json.loads(fixed.stdout)
    assert fixed.exit_code == 0 and entry["checked_against"] == ["checked@1.0.0"]


def test_a_problem_names_the_golden_by_its_index_in_the_file_and_the_rubric_of_several(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = rubric_file(write_file, "labels")
    preference = "preference"  # the built-in pairwise rubric takes the pairwise goldens
    goldens = write_file(
        "mixed.yaml",
        "- {name: duel, input: q, output: x, baseline: y, expected_winner: output}\n"
        "- {name: typo, output: x, expected: pas}\n",
    )
    arguments = ["test-goldens", str(labels), preference, "--goldens", str(goldens)]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr == (
        f"rubriclib: error: {goldens}:2: goldens[1].expected: 'pas' is not a label: one of "
        "resolved, not-resolved (rubric checked)\n"
    )

"""Docent rubrics read in (`rubriclib new NAME --from-docent FILE`). Every rubric read here was
written by Docent 0.1.88's own Rubric model (tests/docent_rubrics.py, kept in tests/data/docent/);
the last tests run that script again under `.integrations/docent` to show they still are."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import DOCS, integration_tool, run_tool

from rubriclib.cli import main
from rubriclib.errors import RubricError
from rubriclib.rubrics import load_rubric, read_docent

DATA = Path(__file__).parent.parent / "data" / "docent"
SCRIPT = Path(__file__).parent.parent / "docent_rubrics.py"


def docent(name: str) -> dict[str, Any]:
    """A rubric as Docent wrote it."""
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text())
    return data


def new(tmp_path: Path, name: str, *more: str, source: Path | None = None) -> Any:
    source = source or DATA / f"{name}.json"
    arguments = ["new", name, "--dir", str(tmp_path), "--from-docent", str(source), *more]
    return CliRunner().invoke(main, arguments)


def test_a_rubric_with_labels_and_output_fields_loads_back(tmp_path: Path) -> None:
    result = new(tmp_path, "triage", "--passing", "Resolved")
    assert result.exit_code == 0, result.output
    rubric = load_rubric(str(tmp_path / "triage.md"))
    written = docent("triage")
    properties = written["output_schema"]["properties"]
    assert rubric.scale == "labels" and rubric.version == "0.1.0"
    assert rubric.body == written["rubric_text"]
    assert list(rubric.labels or {}) == ["resolved", "partly-resolved", "not-resolved"]
    assert rubric.labels == {"resolved": "pass", "partly-resolved": "fail", "not-resolved": "fail"}
    assert rubric.requires == ["transcript"]  # Docent judges agent runs
    issue = {k: v for k, v in properties["issues"]["items"].items() if k != "title"}
    del issue["additionalProperties"]
    assert rubric.output == {
        "explanation": properties["explanation"],  # a string with citations: true
        "issues": {"type": "array", "items": issue},  # an array of objects
        "severity": properties["severity"],  # an enum
        "confidence": {**properties["confidence"], "optional": True},  # not required there
        "escalated": properties["escalated"],
    }
    assert rubric.output["explanation"]["citations"] is True
    assert "gpt-5.6-luna" in rubric.description  # Docent's judge model, noted
    text = (tmp_path / "triage.md").read_text()
    assert text.startswith("---\n# Read from Docent rubric triage, version 3 (Docent's judge: ")


def test_names_that_say_their_verdict_need_no_passing(tmp_path: Path) -> None:
    result = new(tmp_path, "default")
    assert result.exit_code == 0, result.output
    rubric = load_rubric(str(tmp_path / "default.md"))
    assert rubric.labels == {"match": "pass", "no-match": "fail"}
    assert "labels: match pass, no-match fail (read from the names; --passing chooses)" in (
        result.output
    )
    assert "renamed 'no match' to 'no-match': a label is kebab-case" in result.output


@pytest.mark.parametrize("passing", ["helpful", "helpful, partly helpful", "partly-helpful"])
def test_passing_names_the_labels_that_pass(tmp_path: Path, passing: str) -> None:
    result = new(tmp_path, "helpfulness", "--passing", passing)
    assert result.exit_code == 0, result.output
    labels = load_rubric(str(tmp_path / "helpfulness.md")).labels or {}
    chosen = {name.strip().replace(" ", "-") for name in passing.split(",")}
    assert list(labels) == ["helpful", "partly-helpful", "not-helpful"]
    assert {name for name, verdict in labels.items() if verdict == "pass"} == chosen
    assert "renamed 'not helpful' to 'not-helpful'" in result.output


def test_labels_whose_verdict_cannot_be_told_are_refused(tmp_path: Path) -> None:
    result = new(tmp_path, "helpfulness")
    assert result.exit_code == 2 and not list(tmp_path.iterdir())
    assert result.stderr.strip() == (
        f"rubriclib: error: {DATA / 'helpfulness.json'}: output_schema.properties.label.enum: "
        "cannot tell which of the labels 'helpful', 'partly helpful', 'not helpful' pass: "
        "name those with --passing (a,b)"
    )


@pytest.mark.parametrize(
    ("passing", "message"),
    [
        ("great", "--passing: great: not among the labels (helpful, partly helpful, not helpful)"),
        ("helpful,partly helpful,not helpful", "--passing: names every label: one must fail"),
    ],
)
def test_a_bad_passing_is_refused(tmp_path: Path, passing: str, message: str) -> None:
    result = new(tmp_path, "helpfulness", "--passing", passing)
    assert result.exit_code == 2 and message in result.stderr and not list(tmp_path.iterdir())


def test_schema_parts_outside_the_subset_are_refused_by_name(tmp_path: Path) -> None:
    result = new(tmp_path, "unsupported")
    assert result.exit_code == 2 and not list(tmp_path.iterdir())
    fields = re.findall(r"json: (\S+): ", result.stderr)
    assert fields == [
        "output_schema.properties.ticket.pattern",
        "output_schema.properties.turns.enum",
    ]
    assert "is not a key of an integer field" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def test_labels_colliding_in_kebab_case_are_refused(tmp_path: Path) -> None:
    result = new(tmp_path, "colliding")
    assert result.exit_code == 2 and not list(tmp_path.iterdir())
    assert "'Not helpful' and 'not_helpful' both become the label 'not-helpful'" in result.stderr


def test_what_does_not_carry_over_is_listed(tmp_path: Path) -> None:
    result = new(tmp_path, "triage", "--passing", "Resolved")
    listed = result.output.split("Not carried over (a rubric file has no place for them):\n")[1]
    assert [line.split(":")[0] for line in listed.splitlines() if line.startswith("  - ")] == [
        "  - prompt_templates",
        "  - output_parsing_mode xml_key, response_xml_key response, output_format json",
        "  - n_rollouts_per_input 3, judge_variant majority",
        "  - rollout_type single_turn",
        "  - output_schema.additionalProperties",
        "  - output_schema.properties.label.description",
        "  - output_schema.properties.issues.items.title",
        "  - output_schema.properties.issues.items.additionalProperties",
    ]
    assert "output fields: explanation, issues, severity, confidence, escalated" in result.output


def test_fields_of_a_newer_docent_are_listed_not_read(tmp_path: Path) -> None:
    source = tmp_path / "newer.json"
    source.write_text(json.dumps({**docent("default"), "temperature": 0.2}))
    converted = read_docent(source)
    assert (
        converted.not_carried[-1] == "temperature: not a field of Docent 0.1.88's Rubric; not read"
    )


def test_nothing_is_overwritten(tmp_path: Path) -> None:
    (tmp_path / "default.md").write_text("my edits")
    result = new(tmp_path, "default")
    assert result.exit_code == 2 and "already exists; not overwritten" in result.stderr
    assert (tmp_path / "default.md").read_text() == "my edits"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda data: "not json {", ":1: file: is not JSON"),
        (lambda data: json.dumps([data]), ": file: must hold a Docent rubric"),
        (lambda data: json.dumps({**data, "rubric_text": ""}), ": rubric_text: must be"),
        (lambda data: json.dumps({**data, "output_schema": None}), ": output_schema: must be"),
        (
            lambda data: json.dumps(
                {**data, "output_schema": {"type": "object", "properties": {}}}
            ),
            ": output_schema.properties.label: must be a string with an enum of labels",
        ),
    ],
)
def test_a_file_that_is_no_docent_rubric_is_refused(
    tmp_path: Path, change: Any, field: str
) -> None:
    source = tmp_path / "bad.json"
    source.write_text(change(docent("default")))
    result = new(tmp_path / "out", "bad", source=source)
    assert result.exit_code == 2 and f"{source}{field}" in result.stderr
    assert not (tmp_path / "out").exists() and "Traceback" not in result.output


def test_options_that_would_decide_the_rubric_too_are_refused(tmp_path: Path) -> None:
    for more in (["--scale", "1-5"], ["--from", "groundedness"], ["--checklist"]):
        result = new(tmp_path, "default", *more)
        assert result.exit_code == 2 and "not with --from-docent" in result.output
    alone = CliRunner().invoke(main, ["new", "x", "--dir", str(tmp_path), "--passing", "a"])
    assert alone.exit_code == 2 and "--passing applies only with --from-docent" in alone.output
    assert not list(tmp_path.iterdir())


def test_read_docent_names_the_file_and_field() -> None:
    with pytest.raises(RubricError) as raised:
        read_docent(DATA / "colliding.json")
    [problem] = raised.value.problems
    assert problem.source == str(DATA / "colliding.json")
    assert problem.field == "output_schema.properties.label.enum"


def test_the_docs_example_is_a_rubric_docent_wrote() -> None:
    page = (DOCS / "command-line.md").read_text()
    [block] = re.findall(r"<!-- file: helpfulness\.json -->\n```json\n(.*?)\n```", page, re.S)
    assert json.loads(block) == docent("helpfulness")


def test_the_files_are_what_docent_writes(tmp_path: Path) -> None:
    """Docent's own code, run again: each file in tests/data/docent/ is what it writes."""
    python = integration_tool("docent", "bin", "python")
    run_tool([str(python), str(SCRIPT), str(tmp_path)], tmp_path)
    written = sorted(path.name for path in tmp_path.glob("*.json"))
    assert written == sorted(path.name for path in DATA.glob("*.json"))
    for name in written:
        assert (tmp_path / name).read_text() == (DATA / name).read_text(), name

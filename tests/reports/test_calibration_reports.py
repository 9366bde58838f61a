"""Reports of a calibration run, built from judged rows with no judge: the table's lines, the
JSON's numbers, the disagreements as goldens, interrupted runs, and hostile text kept harmless.
(`rubriclib calibrate` end to end is in tests/test_calibration.py.)"""

from __future__ import annotations

import json
from typing import Any

import yaml
from conftest import HOSTILE, cited_result, embedded_data, recorded_citation, unsafe_characters

from rubriclib.evals.datasets import Row
from rubriclib.item import Item
from rubriclib.judging.engine import RunInfo
from rubriclib.judging.result import judge_details, make_result
from rubriclib.measure.calibration import Calibration, Judged, Label, LabelledRow
from rubriclib.reports.calibration import (
    CALIBRATION_FORMATTERS,
    calibration_last_line,
    format_json,
    format_table,
    golden_name,
    goldens_yaml,
    to_json,
)
from rubriclib.reports.html.pages import calibration_page
from rubriclib.rubrics.rubric import Rubric

USAGE = {"prompt_tokens": 10, "completion_tokens": 2}


def judged(
    rubric: Rubric,
    number: int,
    label: str,
    verdict: str,
    reason: str = "r",
    tags: tuple[str, ...] = (),
    row_id: str | None = None,
) -> Judged:
    details = judge_details("judge-model", "required", 1, 5, USAGE)
    result = make_result(rubric, details, verdict, reason)  # type: ignore[arg-type]
    item = Item(output=f"output {number}", input="q", id=row_id or str(number))
    row = Row(number, f"labels.jsonl:{number}", item)
    return Judged(LabelledRow(row, Label(label), tags), result)


def calibration(rubric: Rubric, *judged_rows: Judged, info: RunInfo | None = None) -> Calibration:
    rows = [one.labelled for one in judged_rows]
    return Calibration(rubric, "labels.jsonl", rows, list(judged_rows), info)


def test_the_table_names_disagreements_and_errors_and_ends_on_the_summary(
    rubric: Rubric,
) -> None:
    run = calibration(
        rubric,
        judged(rubric, 1, "pass", "pass", tags=("billing",)),
        judged(rubric, 2, "fail", "fail"),
        judged(rubric, 3, "pass", "fail", "too short", tags=("billing",), row_id="r3"),
        judged(rubric, 4, "fail", "error", "timed out"),
    )
    lines = format_table(run).splitlines()
    assert lines[0] == "tiny@1.2.3 against labels.jsonl: 4 labelled row(s)"
    assert "  human pass              1            1            0" in lines
    assert "  human fail              0            1            1" in lines
    assert lines[lines.index("by tag") + 1].startswith(
        "  billing  2 with a verdict, accuracy 50.0%, kappa "
    )
    assert lines[lines.index("disagreements (1)") + 1] == (
        "  labels.jsonl:3 (id r3)  human pass  judge fail: too short"
    )
    assert lines[lines.index("judge errors (1)") + 1] == (
        "  labels.jsonl:4  human fail  judge error: timed out"
    )
    assert lines[-1] == calibration_last_line(run) and lines[-1].startswith(
        "CALIBRATED: accuracy 66.7%"
    )
    assert lines[-1].endswith("over 3 verdict(s); 1 disagreement(s), 1 judge error(s)")


def test_an_interrupted_run_says_how_far_it_got(rubric: Rubric) -> None:
    info = RunInfo("judge-model", "http://127.0.0.1:1/v1", 0.0, 1.0, 3, interrupted="SIGINT")
    first = judged(rubric, 1, "pass", "pass")
    rows = [first.labelled, judged(rubric, 2, "fail", "fail").labelled]
    run = Calibration(rubric, "labels.jsonl", rows, [first], info)
    assert calibration_last_line(run).startswith(
        "INTERRUPTED (SIGINT): judged 1 of 2 row(s); accuracy"
    )
    data = to_json(run)
    assert (data["run"]["rows"], data["run"]["judged"], data["run"]["interrupted"]) == (
        2,
        1,
        "SIGINT",
    )


def test_over_trials_the_summary_counts_judgments_and_rows_apart(rubric: Rubric) -> None:
    info = RunInfo("judge-model", "http://127.0.0.1:1/v1", 0.0, 1.0, 6, interrupted="SIGTERM")
    first, second = judged(rubric, 1, "pass", "pass"), judged(rubric, 2, "fail", "error")
    rows = [first.labelled, second.labelled]
    again = Judged(first.labelled, first.result, trial=2)
    interrupted = Calibration(rubric, "labels.jsonl", rows, [first, again], info, trials=3)
    assert calibration_last_line(interrupted).startswith(
        "INTERRUPTED (SIGTERM): judged 2 of 6 judgment(s) (2 row(s) x 3 trials); accuracy 100.0%"
    )
    run = to_json(interrupted)["run"]
    assert (run["rows"], run["planned"], run["judged"]) == (2, 6, 2)
    # every judgment an error: the rows could not be judged, however many trials each had
    errors = [
        Judged(one.labelled, second.result, trial) for one in [first, second] for trial in (1, 2)
    ]
    outage = Calibration(rubric, "labels.jsonl", rows, errors, trials=2)
    assert calibration_last_line(outage) == (
        "UNDECIDED: 2 of 2 row(s) could not be judged (4 judge error(s)); nothing measured"
    )


def test_the_json_carries_the_numbers_and_each_case(rubric: Rubric) -> None:
    run = calibration(
        rubric,
        judged(rubric, 1, "pass", "pass"),
        judged(rubric, 2, "fail", "pass", "looks fine", tags=("hard",)),
    )
    data = json.loads(format_json(run))
    assert data["rubric"]["name"] == "tiny" and data["labels"] == "labels.jsonl"
    assert (data["verdicts"], data["disagreements"], data["accuracy"]) == (2, 1, 0.5)
    assert data["confusion"]["fail"] == {"pass": 1, "fail": 0, "error": 0}
    assert data["bootstrap"]["resamples"] > 0 and set(data["tags"]) == {"hard"}
    assert data["disagreement_rows"] == [
        {
            "row": 2,
            "where": "labels.jsonl:2",
            "id": "2",
            "label": "fail",
            "score": None,
            "verdict": "pass",
            "judge_score": None,
            "reason": "looks fine",
            "tags": ["hard"],
            "trial": 1,
        }
    ]
    assert data["judge_error_rows"] == [] and CALIBRATION_FORMATTERS["json"] is format_json
    assert data["trials"] == 1 and data["flip_rates"] is None  # one trial: nothing to compare


def test_disagreements_become_goldens_expecting_the_humans_label(rubric: Rubric) -> None:
    run = calibration(
        rubric,
        judged(rubric, 1, "pass", "pass"),
        judged(rubric, 7, "pass", "fail", "missing a step"),
    )
    text = goldens_yaml(run)
    assert text.startswith("# Disagreements between the judge and human labels (labels.jsonl)")
    assert yaml.safe_load(text) == [
        {
            "name": "calibration-line-7",
            "input": "q",
            "output": "output 7",
            "expected": "pass",
            "tags": ["calibration"],
            "why": "human label pass; the judge said fail: missing a step",
        }
    ]
    agreed = calibration(rubric, judged(rubric, 1, "pass", "pass"))
    assert yaml.safe_load(goldens_yaml(agreed)) == []


def test_a_golden_is_named_by_the_rows_line_else_its_number() -> None:
    assert golden_name(Row(3, "labels.csv:4", Item(output="o"))) == "calibration-line-4"
    assert golden_name(Row(3, "labels.yaml: rows[2]", Item(output="o"))) == "calibration-row-3"


def test_hostile_text_stays_harmless_in_the_table_and_whole_in_json(rubric: Rubric) -> None:
    run = calibration(rubric, judged(rubric, 1, "pass", "fail", HOSTILE, tags=(HOSTILE,)))
    table = format_table(run)
    assert unsafe_characters(table) == set()
    data = json.loads(format_json(run))
    assert data["disagreement_rows"][0]["reason"] == HOSTILE
    assert yaml.safe_load(goldens_yaml(run))[0]["why"].startswith("human label pass")


def cited(rubric: Rubric, number: int, *citations: dict[str, Any]) -> Judged:
    one = judged(rubric, number, "fail", "fail")
    return Judged(one.labelled, cited_result(rubric, "fail", *citations))


def test_the_table_counts_citations_only_when_the_judge_gave_some(rubric: Rubric) -> None:
    run = calibration(
        rubric,
        cited(
            rubric, 1, recorded_citation("output 1"), recorded_citation("invented", "unverified")
        ),
        cited(rubric, 2, recorded_citation("output 2")),
    )
    lines = format_table(run).splitlines()
    at = lines.index("  citations      3 given, 2 verified (66.7%), 1 unverified")
    assert lines[at + 1].startswith("confusion")  # after the agreement numbers
    plain = format_table(calibration(rubric, judged(rubric, 1, "pass", "pass")))
    assert "citations" not in plain


def test_the_json_counts_citations_and_names_each_unverified_by_row(rubric: Rubric) -> None:
    run = calibration(
        rubric,
        cited(rubric, 1, recorded_citation("output 1")),
        cited(rubric, 2, recorded_citation("elsewhere", "unverified", found_in="input")),
    )
    assert to_json(run)["citations"] == {
        "given": 2,
        "verified": 1,
        "unverified": 1,
        "verified_share": 0.5,
        "unverified_citations": [
            {
                "id": "2",
                "where": "labels.jsonl:2",
                "block": "output",
                "quote": "elsewhere",
                "found_in": "input",
            }
        ],
    }
    empty = to_json(calibration(rubric, judged(rubric, 1, "pass", "pass")))["citations"]
    assert (empty["given"], empty["verified_share"], empty["unverified_citations"]) == (0, None, [])


def test_the_calibration_page_notes_the_citations(rubric: Rubric) -> None:
    run = calibration(
        rubric,
        cited(rubric, 1, recorded_citation("output 1"), recorded_citation("x", "unverified")),
    )
    notes = embedded_data(calibration_page(run))["notes"]
    assert notes == ["tiny: citations 2 given, 1 verified (50.0%), 1 unverified"]
    assert (
        embedded_data(calibration_page(calibration(rubric, judged(rubric, 1, "pass", "pass"))))[
            "notes"
        ]
        == []
    )

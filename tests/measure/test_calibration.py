"""Calibration: the statistics against hand-computed values, and `rubriclib calibrate` end to end
against the scripted judge server."""

from __future__ import annotations

import csv
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import (
    SECRET_KEY,
    cited_result,
    keyword_responder,
    recorded_citation,
    start,
    wait_for_requests,
)
from judge_server import JudgeServer, Reply, tool_reply

from rubriclib.cli import main
from rubriclib.evals.datasets import Row
from rubriclib.item import Item
from rubriclib.judging.result import judge_details, make_result
from rubriclib.measure.calibration import (
    Calibration,
    Judged,
    Label,
    LabelledRow,
    agreement,
    confusion_matrix,
)
from rubriclib.rubrics.goldens_file import parse_goldens_file
from rubriclib.rubrics.rubric import Rubric


def judged(label: str, verdict: str, score: int | None = None, number: int = 1) -> Judged:
    from rubriclib.rubrics.registry import load_rubric

    rubric = load_rubric("groundedness")
    details = judge_details("m", None, 1, 0, {"prompt_tokens": 0, "completion_tokens": 0})
    result = make_result(rubric, details, verdict, f"because {verdict}")  # type: ignore[arg-type]
    row = Row(number, f"labels.jsonl:{number}", Item(output="x", id=str(number)))
    return Judged(LabelledRow(row, Label(label, score)), result)


def test_judge_errors_are_counted_apart_from_accuracy_and_kappa() -> None:
    rows = [judged("pass", "pass"), judged("fail", "fail"), judged("fail", "error")]
    numbers = agreement(rows, intervals=True)
    assert numbers.verdicts == 2 and numbers.errors == 1 and numbers.accuracy == 1.0
    assert numbers.kappa == pytest.approx(1.0) and numbers.disagreements == 0
    assert confusion_matrix(rows) == {
        "pass": {"pass": 1, "fail": 0, "error": 0},
        "fail": {"pass": 0, "fail": 1, "error": 1},
    }
    assert numbers.accuracy_interval == (1.0, 1.0)


# Nine judged rows and a judge error; the judge says pass when the output holds verdict:pass.
# human pass: 4 judged pass, 1 judged fail; human fail: 1 judged pass, 3 judged fail, 1 error.
# accuracy 7/9; chance (5x5 + 4x4)/81 = 41/81; kappa (63 - 41)/(81 - 41) = 0.55 (moderate).
LABELLED = [
    {"id": "a", "output": "verdict:pass one", "label": "pass", "tags": ["billing"]},
    {"id": "b", "output": "verdict:pass two", "label": "pass", "tags": ["refunds"]},
    {"id": "c", "output": "verdict:pass three", "label": "PASS"},
    {"id": "d", "output": "verdict:pass four", "label": "pass"},
    {"id": "e", "output": "verdict:fail five", "label": "pass", "tags": ["billing"]},
    {"id": "f", "output": "verdict:pass six", "label": "fail", "tags": ["billing"]},
    {"id": "g", "output": "verdict:fail seven", "label": "fail", "tags": ["refunds"]},
    {"id": "h", "output": "verdict:fail eight", "label": "fail"},
    {"id": "i", "output": "verdict:fail nine", "label": "fail"},
    {"id": "j", "output": "verdict:text ten", "label": "fail"},
]


def jsonl(write_file: Callable[..., Path], rows: list[dict[str, Any]], name: str) -> Path:
    return write_file(name, "".join(json.dumps(row) + "\n" for row in rows))


def csv_file(write_file: Callable[..., Path], rows: list[dict[str, Any]], name: str) -> Path:
    path = write_file(name, "")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["id", "output", "label", "tags"])
        writer.writeheader()
        for row in rows:
            writer.writerow({**row, "tags": ",".join(row.get("tags", []))})
    return path


def calibrate(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["calibrate", "keywords", *arguments])


@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_a_labels_file_is_judged_and_measured(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], kind: str
) -> None:
    labels = (jsonl if kind == "jsonl" else csv_file)(write_file, LABELLED, f"labels.{kind}")
    result = calibrate("--labels", str(labels), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["verdicts"] == 9 and report["judge_errors"] == 1
    assert report["accuracy"] == pytest.approx(7 / 9)
    assert report["kappa"] == pytest.approx(0.55) and report["kappa_band"] == "moderate"
    assert report["base_rate"] == pytest.approx(5 / 9)
    assert report["majority_baseline"] == {"label": "pass", "accuracy": pytest.approx(5 / 9)}
    assert report["confusion"] == {
        "pass": {"pass": 4, "fail": 1, "error": 0},
        "fail": {"pass": 1, "fail": 3, "error": 1},
    }
    interval = report["accuracy_interval"]
    assert interval["low"] <= 7 / 9 <= interval["high"] < 1.0 + 1e-9
    assert report["kappa_interval"]["low"] < 0.55 < report["kappa_interval"]["high"]
    first_line = 2 if kind == "csv" else 1  # a CSV's header is line 1
    disagreements = {
        (d["id"], d["label"], d["verdict"], d["reason"], d["where"])
        for d in report["disagreement_rows"]
    }
    assert disagreements == {
        ("e", "pass", "fail", "scripted set_grade_fail", f"{labels}:{first_line + 4}"),
        ("f", "fail", "pass", "scripted set_grade_pass", f"{labels}:{first_line + 5}"),
    }
    [error] = report["judge_error_rows"]
    assert error["id"] == "j" and error["verdict"] == "error"
    billing, refunds = report["tags"]["billing"], report["tags"]["refunds"]
    assert billing["verdicts"] == 3 and billing["accuracy"] == pytest.approx(1 / 3)
    assert billing["kappa"] == pytest.approx(-0.5) and billing["disagreements"] == 2
    assert refunds["accuracy"] == 1.0 and refunds["kappa"] == pytest.approx(1.0)
    assert report["rubric"]["name"] == "keywords" and report["rubric"]["version"] == "2.1.0"
    assert report["run"]["rows"] == 10 and report["run"]["interrupted"] is None
    assert report["run"]["judge_model"] and SECRET_KEY not in result.output + result.stderr


def test_the_table_shows_every_number_and_each_disagreement(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = jsonl(write_file, LABELLED, "labels.jsonl")
    result = calibrate("--labels", str(labels))
    assert result.exit_code == 0, result.output
    table = result.stdout
    assert "accuracy       77.8%  (95% interval " in table
    assert "Cohen's kappa  0.55 moderate  (95% interval " in table
    assert "base rate      55.6% of human labels are pass" in table
    assert "majority       always saying pass would score 55.6%" in table
    assert "  human pass              4            1            0" in table
    assert "  human fail              1            3            1" in table
    assert "billing  3 with a verdict, accuracy 33.3%, kappa -0.50, 2 disagreement(s)" in table
    assert (
        f"  {labels}:5 (id e)  human pass  judge fail: scripted set_grade_fail"
        in table.splitlines()
    )
    assert table.splitlines()[-1] == (
        "CALIBRATED: accuracy 77.8%, kappa 0.55 (moderate) over 9 verdict(s); "
        "2 disagreement(s), 1 judge error(s)"
    )
    assert SECRET_KEY not in table + result.stderr


def test_disagreements_become_goldens_the_project_loads(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    labels = jsonl(write_file, LABELLED, "labels.jsonl")
    goldens = tmp_path / "review.yaml"
    result = calibrate("--labels", str(labels), "--to-goldens", str(goldens))
    assert result.exit_code == 0, result.output
    assert "wrote 2 disagreement(s) as goldens" in result.stderr
    loaded = parse_goldens_file(goldens, str(goldens))
    assert [(g.name, g.output, g.expected, g.tags) for g in loaded] == [
        ("calibration-line-5", "verdict:fail five", "pass", ["calibration"]),
        ("calibration-line-6", "verdict:pass six", "fail", ["calibration"]),
    ]
    assert loaded[0].why == "human label pass; the judge said fail: scripted set_grade_fail"
    # test-goldens takes the file as it is, and the judge still misses both
    run = CliRunner().invoke(main, ["test-goldens", "keywords", "--goldens", str(goldens)])
    assert run.exit_code == 1 and "2 golden(s) missed" in run.output
    again = calibrate("--labels", str(labels), "--to-goldens", str(goldens))
    assert again.exit_code == 2 and "exists; pass --force" in again.stderr
    forced = calibrate("--labels", str(labels), "--to-goldens", str(goldens), "--force")
    assert forced.exit_code == 0 and len(parse_goldens_file(goldens, "g")) == 2


# Five rows judged 3 times each (the scripted judge answers a row's trials p, f in turn):
# `a` and `c` steady and right; `b` and `d` split 1-2 and 2-1, each wrong twice; `e` a judge
# error every time. Verdicts 12, 8 agreeing; flipped 2 of 4 rows; 2 of 12 off their majority.
TRIALED = [
    {"id": "a", "output": "verdicts:ppp", "label": "pass"},
    {"id": "b", "output": "verdicts:pff", "label": "pass"},
    {"id": "c", "output": "verdicts:fff", "label": "fail"},
    {"id": "d", "output": "verdicts:ppf", "label": "fail"},
    {"id": "e", "output": "verdict:text", "label": "fail"},
]


def test_trials_judge_each_row_again_and_report_flip_rates(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    labels = jsonl(write_file, TRIALED, "labels.jsonl")
    goldens = tmp_path / "review.yaml"
    command = ["--labels", str(labels), "--trials", "3", "--concurrency", "1"]
    table = calibrate(*command, "--to-goldens", str(goldens))
    assert table.exit_code == 0, table.output
    lines = table.stdout.splitlines()
    assert lines[0] == f"keywords@2.1.0 against {labels}: 5 labelled row(s) x 3 trials"
    assert (
        "  flip rates     across 3 trials: flipped 2 of 4 row(s) (50.0%), disagreement 16.7% "
        "(2 of 12 verdict(s) off their row's majority; judge errors left out)"
    ) in lines
    assert lines[lines.index("disagreements (4)") + 1 :][:4] == [
        f"  {labels}:2 (id b) [trial 2]  human pass  judge fail: scripted set_grade_fail",
        f"  {labels}:2 (id b) [trial 3]  human pass  judge fail: scripted set_grade_fail",
        f"  {labels}:4 (id d) [trial 1]  human fail  judge pass: scripted set_grade_pass",
        f"  {labels}:4 (id d) [trial 2]  human fail  judge pass: scripted set_grade_pass",
    ]
    assert lines[-1] == (
        "CALIBRATED: accuracy 66.7%, kappa 0.33 (fair) over 12 verdict(s); "
        "4 disagreement(s), 3 judge error(s)"
    )
    # a row that disagreed in two trials is one golden to review
    assert "wrote 2 disagreement(s) as goldens" in table.stderr
    assert [golden.name for golden in parse_goldens_file(goldens, "g")] == [
        "calibration-line-2",
        "calibration-line-4",
    ]
    report = json.loads(calibrate(*command, "--format", "json").stdout)
    assert (report["trials"], report["run"]["planned"], report["run"]["judged"]) == (3, 15, 15)
    assert report["flip_rates"] == {
        "flipped": 2,
        "compared": 4,
        "flipped_share": 0.5,
        "disagreement": 2 / 12,
        "differing": 2,
        "judgments": 12,
    }
    assert report["confusion"] == {
        "pass": {"pass": 4, "fail": 2, "error": 0},
        "fail": {"pass": 2, "fail": 4, "error": 3},
    }
    assert [(row["id"], row["trial"]) for row in report["disagreement_rows"]] == [
        ("b", 2),
        ("b", 3),
        ("d", 1),
        ("d", 2),
    ]


def test_trials_are_refused_below_1_and_with_fit(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = jsonl(write_file, TRIALED, "labels.jsonl")
    zero = calibrate("--labels", str(labels), "--trials", "0")
    assert zero.exit_code == 2 and "Invalid value for '--trials'" in zero.stderr
    fit = calibrate("--trials", "2", "--fit", "--checklist-answers", "probability")
    assert fit.exit_code == 2 and fit.stderr == (
        "rubriclib: error: --fit: fits one judgment of each row: leave out --trials\n"
    )
    assert endpoint.requests == []


def test_an_existing_goldens_file_is_refused_before_any_request(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = jsonl(write_file, LABELLED, "labels.jsonl")
    existing = write_file("review.yaml", "[]\n")
    result = calibrate("--labels", str(labels), "--to-goldens", str(existing))
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr == (
        f"rubriclib: error: --to-goldens: {existing} exists; pass --force to replace it\n"
    )
    assert existing.read_bytes() == b"[]\n"
    missing = calibrate("--labels", str(labels), "--out", str(existing.parent / "no/such.json"))
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    assert endpoint.requests == []


def test_a_refused_calibration_leaves_the_reports_already_there_as_they_were(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    """--out and --report replace the reports of an earlier run, but only with a new report:
    bad input (exit 2, before any request) leaves them byte for byte."""
    unlabelled = jsonl(write_file, [{"id": "a", "output": "verdict:pass"}], "labels.jsonl")
    out = write_file("calibration.json", b"the last report\n")
    page = write_file("calibration.html", b"<p>the last page</p>\n")
    result = calibrate("--labels", str(unlabelled), "--out", str(out), "--report", str(page))
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr == f"rubriclib: error: {unlabelled}:1: label: is required (pass or fail)\n"
    assert out.read_bytes() == b"the last report\n"
    assert page.read_bytes() == b"<p>the last page</p>\n"


def test_goldens_that_would_replace_a_report_are_refused_before_any_request(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = jsonl(write_file, LABELLED, "labels.jsonl")
    same = labels.parent / "calibration.html"
    for option in ("--out", "--report"):
        result = calibrate("--labels", str(labels), option, str(same), "--to-goldens", str(same))
        assert result.exit_code == 2, result.output
        assert f"--to-goldens: names the same file as {option}" in result.output
    assert endpoint.requests == [] and not same.exists()


def test_bad_labels_are_named_by_line_and_field_before_any_request(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = jsonl(
        write_file,
        [
            {"output": "verdict:pass", "label": "pass"},
            {"output": "verdict:pass", "label": "maybe"},
            {"output": "verdict:pass"},
            {"output": "verdict:pass", "score": 4},
            {"output": "verdict:pass", "label": "fail", "tags": 7},
        ],
        "labels.jsonl",
    )
    result = calibrate("--labels", str(labels))
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {labels}:2: label: must be pass or fail, not 'maybe'",
        f"rubriclib: error: {labels}:3: label: is required (pass or fail)",
        f"rubriclib: error: {labels}:4: score: keywords is a pass-fail rubric: label pass or fail",
        f"rubriclib: error: {labels}:5: tags: must be a list of tags or text split by commas",
    ]


def test_an_empty_csv_label_is_missing(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = write_file("labels.csv", "output,label\nverdict:pass,pass\nverdict:fail,\n")
    result = calibrate("--labels", str(labels))
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr == f"rubriclib: error: {labels}:3: label: is required (pass or fail)\n"


SCORED = (
    "---\nname: scored\nversion: 1.0.0\nscale: 1-5\npass_threshold: 4\ndescription: d\n"
    "---\nUse `set_grade_score`.\n"
)


def score_responder(body: dict[str, Any]) -> Reply:
    score = int(body["messages"][1]["content"].split("score:")[1][0])
    return tool_reply("set_grade_score", {"score": score, "reason": f"looks like {score}"})


def test_score_labels_compare_at_the_threshold_and_report_score_error(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    (library / "scored.md").write_text(SCORED)
    endpoint.responder = score_responder
    rows = [
        {"output": "score:5", "score": 5},  # exact
        {"output": "score:4", "score": "5"},  # off by one, both pass
        {"output": "score:2", "score": 4},  # off by two: human pass, judge fail
        {"output": "score:1", "score": 1, "label": "fail"},  # exact
    ]
    labels = jsonl(write_file, rows, "scores.jsonl")
    goldens = tmp_path / "review.yaml"
    result = CliRunner().invoke(
        main,
        ["calibrate", "scored", "--labels", str(labels), "--format", "json"]
        + ["--to-goldens", str(goldens)],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["accuracy"] == 0.75 and report["exact_score_agreement"] == 0.5
    assert report["mean_absolute_error"] == 0.75 and report["scored_pairs"] == 4
    [golden] = parse_goldens_file(goldens, "review")
    assert (golden.name, golden.expected, golden.expected_score) == (
        "calibration-line-3",
        "pass",
        4,
    )
    assert golden.why == "human label score 4 (pass); the judge said fail (score 2): looks like 2"


def test_score_and_label_kinds_must_fit_the_rubric(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    (library / "scored.md").write_text(SCORED)
    rows = [
        {"output": "score:5", "label": "pass"},
        {"output": "score:5", "score": 6},
        {"output": "score:5", "score": 2, "label": "pass"},
    ]
    labels = jsonl(write_file, rows, "scores.jsonl")
    result = CliRunner().invoke(main, ["calibrate", "scored", "--labels", str(labels)])
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {labels}:1: score: is required: scored is a 1-5 rubric (a score 1 to 5)",
        f"rubriclib: error: {labels}:2: score: must be an integer from 1 to 5, not 6",
        f"rubriclib: error: {labels}:3: label: says pass, but score 2 is a fail "
        "(the pass threshold is 4)",
    ]


def test_a_rerun_is_served_from_the_cache(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = jsonl(write_file, LABELLED[:9], "labels.jsonl")  # no judge error: all cacheable
    first = calibrate("--labels", str(labels), "--format", "json")
    assert first.exit_code == 0 and len(endpoint.requests) == 9
    second = calibrate("--labels", str(labels), "--format", "json")
    assert second.exit_code == 0 and len(endpoint.requests) == 9
    assert json.loads(second.stdout)["kappa"] == json.loads(first.stdout)["kappa"]
    uncached = calibrate("--labels", str(labels), "--no-cache")
    assert uncached.exit_code == 0 and len(endpoint.requests) == 18


def test_one_class_only_reports_kappa_undefined_and_exits_0(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    labels = jsonl(write_file, [{"output": "verdict:pass", "label": "pass"}] * 3, "same.jsonl")
    out = tmp_path / "report.json"
    result = calibrate("--labels", str(labels), "--format", "json", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        "CALIBRATED: accuracy 100.0%, kappa undefined over 3 verdict(s)"
    )
    report = json.loads(out.read_text())
    assert report["kappa"] is None and report["kappa_interval"] is None
    assert "agreement by chance is 100%" in report["kappa_undefined"]
    table = calibrate("--labels", str(labels))
    assert "Cohen's kappa  undefined: every human label" in table.stdout


def test_min_kappa_gates_and_all_errors_exit_3(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = jsonl(write_file, LABELLED, "labels.jsonl")
    assert calibrate("--labels", str(labels), "--min-kappa", "0.5").exit_code == 0
    below = calibrate("--labels", str(labels), "--min-kappa", "0.6")
    assert below.exit_code == 1 and "kappa 0.55 is below --min-kappa 0.6" in below.stderr
    broken = jsonl(write_file, [{"output": "verdict:text", "label": "pass"}] * 2, "broken.jsonl")
    result = calibrate("--labels", str(broken), "--format", "json")
    assert result.exit_code == 3
    report = json.loads(result.stdout)
    assert report["judge_errors"] == 2 and report["status"] == "undecided"
    table = calibrate("--labels", str(broken))
    assert table.stdout.splitlines()[-1] == (
        "UNDECIDED: 2 of 2 row(s) could not be judged (2 judge error(s)); nothing measured"
    )
    assert (
        json.loads(calibrate("--labels", str(labels), "--format", "json").stdout)["status"]
        == "calibrated"
    )


def test_an_interrupted_calibration_reports_what_it_judged(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    endpoint.responder = keyword_responder(delay=0.2)
    rows = [{"output": f"verdict:pass {n}", "label": "pass"} for n in range(12)]
    labels = jsonl(write_file, rows, "labels.jsonl")
    out = tmp_path / "report.json"
    arguments = ["calibrate", "keywords", "--labels", str(labels), "--concurrency", "1"]
    process = start([*arguments, "--format", "json", "--out", str(out)], endpoint, library)
    wait_for_requests(endpoint, 3)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "interrupted by SIGINT: judged " in stderr
    report = json.loads(out.read_text())
    assert report["run"]["interrupted"] == "SIGINT" and 2 <= report["run"]["judged"] < 12
    assert report["verdicts"] == report["run"]["judged"] and report["run"]["rows"] == 12


def test_hostile_text_is_escaped_in_the_table_and_kept_exactly_in_goldens(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    endpoint.responder = lambda body: tool_reply("set_grade_fail", {"reason": "no\x1b[2J\u202e"})
    output = "verdict:fail \x1b[31m red \u202e\n: - [x]"
    labels = jsonl(write_file, [{"output": output, "label": "pass", "id": "r\x07"}], "l.jsonl")
    goldens = tmp_path / "review.yaml"
    result = calibrate("--labels", str(labels), "--to-goldens", str(goldens))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "judge fail: no\\x1b[2J\\u202e" in result.stdout and "(id r\\x07)" in result.stdout
    [golden] = parse_goldens_file(goldens, "review")
    assert golden.output == output and golden.why is not None and "\x1b" not in golden.why


def test_citations_are_counted_over_the_rows_and_the_unverified_named_by_row(
    rubric: Rubric,
) -> None:
    rows = [Row(n, f"labels.jsonl:{n}", Item(output="x", id=f"r{n}")) for n in (1, 2)]
    labelled = [LabelledRow(row, Label("fail")) for row in rows]
    results = [
        cited_result(
            rubric, "fail", recorded_citation("x"), recorded_citation("invented", "unverified")
        ),
        cited_result(rubric, "fail"),
    ]
    calibration = Calibration(
        rubric,
        "labels.jsonl",
        labelled,
        [Judged(*pair) for pair in zip(labelled, results, strict=True)],
    )
    counts = calibration.citations
    assert (counts.given, counts.verified, counts.unverified) == (2, 1, 1)
    assert counts.unverified_citations == [
        {"id": "r1", "where": "labels.jsonl:1", "block": "output", "quote": "invented"}
    ]


def test_calibrate_takes_the_judges_temperature_protocol_and_seed(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    labels = jsonl(write_file, LABELLED[:4], "labels.jsonl")
    flags = ("--temperature", "0.5", "--protocol", "json", "--seed", "20", "--trials", "2")
    result = calibrate("--labels", str(labels), "--format", "json", "--no-cache", *flags)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["accuracy"] == 1.0  # JSON answers read as verdicts
    sent = [(b["temperature"], b["seed"], "response_format" in b) for b in endpoint.requests]
    assert sorted(sent) == [(0.5, 20, True)] * 4 + [(0.5, 21, True)] * 4  # trial 2: seed + 1

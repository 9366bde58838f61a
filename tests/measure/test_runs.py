"""`rubriclib.test_goldens` and `rubriclib.calibrate` against the scripted judge: the numbers the
commands print for the same inputs, the async forms in the caller's event loop, the sync forms
from code already running one (a notebook), and bad input refused before any request with the
commands' messages (align's are in test_align_run.py, beside its scenario)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY
from judge_server import JudgeServer

import rubriclib
from rubriclib.cli import main
from rubriclib.errors import InputError
from rubriclib.reports import CALIBRATION_FORMATTERS, GOLDENS_FORMATTERS

EXTRA_GOLDENS = """\
- {name: missed, output: "verdict:fail, though fine", expected: pass}
- {name: unanswered, output: "verdict:text", expected: fail}
"""
"""A golden the keyword judge misses, and one it answers in text (a judge error)."""
LABELS = [
    {"id": "a", "output": "verdict:pass one", "label": "pass", "tags": ["billing"]},
    {"id": "b", "output": "verdict:pass two", "label": "fail", "tags": ["billing"]},
    {"id": "c", "output": "verdict:fail three", "label": "fail"},
    {"id": "d", "output": "verdict:fail four", "label": "pass"},
    {"id": "e", "output": "verdict:pass five", "label": "pass"},
    {"id": "f", "output": "verdict:text six", "label": "fail"},
]
TIMINGS = {"started", "finished", "duration_seconds", "latency_ms"}


def steady(value: Any) -> Any:
    """A report's JSON without its timings, which differ between any two runs."""
    if isinstance(value, dict):
        return {key: steady(item) for key, item in value.items() if key not in TIMINGS}
    if isinstance(value, list):
        return [steady(item) for item in value]
    return value


def printed(*arguments: str) -> tuple[int, Any]:
    """The exit code and the JSON report a command prints."""
    result = CliRunner().invoke(main, [*arguments, "--format", "json", "--no-cache"])
    return result.exit_code, json.loads(result.stdout)


def as_cli_prints(error: InputError) -> str:
    """The lines the command prints for `error`: one `rubriclib: error: ...` per problem."""
    return "".join(f"rubriclib: error: {' '.join(str(p).split())}\n" for p in error.problems)


@pytest.fixture
def extra(write_file: Callable[..., Path]) -> Path:
    return write_file("extra.yaml", EXTRA_GOLDENS)


@pytest.fixture
def labels(write_file: Callable[..., Path]) -> Path:
    return write_file("labels.jsonl", "".join(json.dumps(row) + "\n" for row in LABELS))


def test_test_goldens_returns_the_numbers_the_command_prints(
    library: Path, endpoint: JudgeServer, extra: Path
) -> None:
    code, shown = printed("test-goldens", "keywords", "--goldens", str(extra), "--trials", "2")
    sent = endpoint.request_count
    report = rubriclib.test_goldens("keywords", goldens_file=extra, trials=2)
    assert code == 1 and shown["status"] == "regression"
    assert steady(json.loads(GOLDENS_FORMATTERS["json"](report))) == steady(shown)
    assert (report.status, report.misses, report.errors) == ("regression", 2, 2)
    [rubric] = report.rubrics
    assert rubric.counts == {
        "true_pass": 2,
        "false_pass": 0,
        "true_fail": 2,
        "false_fail": 2,
        "errors": 2,
    }
    assert endpoint.request_count == 2 * sent  # as many requests as the command sent


def test_calibrate_returns_the_numbers_the_command_prints(
    library: Path, endpoint: JudgeServer, labels: Path
) -> None:
    code, shown = printed("calibrate", "keywords", "--labels", str(labels))
    calibration = rubriclib.calibrate("keywords", str(labels))
    assert code == 0
    assert steady(json.loads(CALIBRATION_FORMATTERS["json"](calibration))) == steady(shown)
    overall = calibration.overall
    assert (overall.verdicts, overall.errors, overall.disagreements) == (5, 1, 2)
    assert overall.accuracy == pytest.approx(3 / 5)
    assert calibration.by_tag["billing"].accuracy == pytest.approx(1 / 2)
    assert SECRET_KEY not in json.dumps(shown)


def test_calibrate_over_trials_returns_the_flip_rates_the_command_prints(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rows = [
        {"id": "steady", "output": "verdicts:ppp", "label": "pass"},
        {"id": "split", "output": "verdicts:pfp", "label": "pass"},
    ]
    labels = write_file("trials.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    # one in flight: the trial the scripted judge answers fail is the same in both runs
    command = ["calibrate", "keywords", "--labels", str(labels), "--concurrency", "1"]
    code, shown = printed(*command, "--trials", "3")
    calibration = rubriclib.calibrate("keywords", labels, trials=3, concurrency=1)
    assert code == 0 and endpoint.request_count == 2 * 6
    assert steady(json.loads(CALIBRATION_FORMATTERS["json"](calibration))) == steady(shown)
    assert calibration.trials == 3 and len(calibration.judged) == 6
    rates = calibration.flip_rates
    assert (rates.compared, rates.flipped, rates.judgments, rates.differing) == (2, 1, 6, 1)
    assert calibration.overall.accuracy == pytest.approx(5 / 6)  # each judgment counts


def test_the_async_forms_run_in_the_caller_s_event_loop(
    library: Path, endpoint: JudgeServer, labels: Path
) -> None:
    async def notebook_cell() -> tuple[rubriclib.GoldensReport, rubriclib.Calibration]:
        running = asyncio.get_running_loop()
        goldens = await rubriclib.atest_goldens(["keywords"], trials=3, concurrency=2)
        calibration = await rubriclib.acalibrate("keywords", labels, requests_per_minute=6000)
        assert asyncio.get_running_loop() is running
        return goldens, calibration

    goldens, calibration = asyncio.run(notebook_cell())
    assert goldens.status == "ok" and goldens.rubrics[0].judgments == 6
    assert calibration.overall.accuracy == pytest.approx(3 / 5)
    assert endpoint.request_count == 6 + 6 + 1  # the text answer asked again, corrected once


def test_the_sync_forms_work_from_code_already_running_an_event_loop(
    library: Path, endpoint: JudgeServer, labels: Path
) -> None:
    async def notebook_cell() -> tuple[rubriclib.GoldensReport, rubriclib.Calibration]:
        return rubriclib.test_goldens("keywords"), rubriclib.calibrate("keywords", labels)

    goldens, calibration = asyncio.run(notebook_cell())
    assert goldens.status == "ok" and calibration.overall.accuracy == pytest.approx(3 / 5)


def test_a_judge_given_is_the_judge_that_judges(
    library: Path, endpoint: JudgeServer, labels: Path
) -> None:
    judge = rubriclib.Judge(model="given-model", base_url=endpoint.url, api_key=SECRET_KEY)
    calibration = rubriclib.calibrate("keywords", labels, judge=judge)
    settings = rubriclib.JudgeSettings(model="settings-model", votes=3, temperature=0.5)
    goldens = rubriclib.test_goldens("keywords", judge=settings)
    assert calibration.info is not None and calibration.info.judge_model == "given-model"
    assert goldens.info is not None and goldens.info.judge_model == "settings-model"
    models = [body["model"] for body in endpoint.requests]
    assert models.count("given-model") == 6 + 1  # the text answer corrected once
    assert models.count("settings-model") == 2 * 2  # two votes of three decide each golden
    assert {body.get("temperature") for body in endpoint.requests[7:]} == {0.5}


def test_bad_input_raises_what_the_command_prints_before_any_request(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], labels: Path
) -> None:
    bad_golden = write_file("bad.yaml", "- {name: x, output: o, expected: pas}\n")
    bad_labels = write_file("bad.jsonl", '{"output": "o", "label": "maybe"}\n{"output": 3}\n')
    cases: list[tuple[list[str], Callable[[], object]]] = [
        (["test-goldens", "no-such-rubric"], lambda: rubriclib.test_goldens("no-such-rubric")),
        (
            ["test-goldens", "keywords", "--goldens", str(bad_golden)],
            lambda: rubriclib.test_goldens(["keywords"], goldens_file=bad_golden),
        ),
        (
            ["calibrate", "keywords", "--labels", str(bad_labels)],
            lambda: rubriclib.calibrate("keywords", bad_labels),
        ),
        (
            ["calibrate", "preference", "--labels", str(labels)],
            lambda: rubriclib.calibrate("preference", labels),
        ),
    ]
    for arguments, call in cases:
        command = CliRunner().invoke(main, arguments)
        with pytest.raises(InputError) as raised:
            call()
        assert command.exit_code == 2 and command.stderr == as_cli_prints(raised.value)
    assert endpoint.request_count == 0


def test_a_checklist_judge_for_a_rubric_without_one_is_refused_before_any_request(
    library: Path, endpoint: JudgeServer, labels: Path
) -> None:
    judge = rubriclib.Judge(base_url=endpoint.url, api_key=SECRET_KEY, mode="checklist")
    refusal = "the rubric keywords has no checklist: checklist mode asks"
    with pytest.raises(rubriclib.JudgeConfigError, match=f"^mode='checklist': {refusal}"):
        rubriclib.test_goldens("keywords", judge=judge)
    one_call = rubriclib.JudgeSettings(mode="checklist", answers="one-call")
    with pytest.raises(rubriclib.JudgeConfigError, match=f"^answers='one-call': {refusal}"):
        rubriclib.calibrate("keywords", labels, judge=one_call)
    command = CliRunner().invoke(main, ["test-goldens", "keywords", "--checklist"])
    assert command.exit_code == 2 and f"--checklist: {refusal}" in command.stderr
    assert endpoint.request_count == 0


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"trials": 0}, "trials must be a whole number of at least 1, not 0"),
        ({"concurrency": 0}, "concurrency must be a whole number of at least 1, not 0"),
        ({"requests_per_minute": 0}, "requests_per_minute must be above 0, not 0"),
    ],
)
def test_numbers_out_of_range_are_refused_before_any_request(
    library: Path, endpoint: JudgeServer, labels: Path, arguments: dict[str, Any], named: str
) -> None:
    with pytest.raises(ValueError, match=named):
        rubriclib.test_goldens("keywords", **arguments)
    with pytest.raises(ValueError, match=named):
        rubriclib.calibrate("keywords", labels, **arguments)
    assert endpoint.request_count == 0


def test_frozen_refuses_a_rubric_the_lock_does_not_hold(
    library: Path, endpoint: JudgeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    command = CliRunner().invoke(main, ["test-goldens", "keywords", "--frozen"])
    with pytest.raises(rubriclib.RubricError) as raised:
        rubriclib.test_goldens("keywords", frozen=True)
    assert command.exit_code == 2 and command.stderr == as_cli_prints(raised.value)
    assert endpoint.request_count == 0


def test_pytest_never_collects_test_goldens_imported_into_a_test_module(tmp_path: Path) -> None:
    """A test module that imports `test_goldens` by name must not run every rubric's goldens."""
    (tmp_path / "test_mine.py").write_text(
        "from rubriclib import atest_goldens, test_goldens\n\n\ndef test_mine():\n    pass\n"
    )
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert collected.stdout.splitlines()[0] == "test_mine.py::test_mine", collected.stdout
    assert "1 test collected" in collected.stdout

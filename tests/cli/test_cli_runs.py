"""Runs that lose nothing: destinations checked first, interrupts, exit codes, input errors."""

from __future__ import annotations

import json
import signal
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import keyword_responder, start, wait_for_requests
from judge_server import JudgeServer, error_reply

from rubriclib.cli import main


def goldens_file(write_file: Callable[..., Path], outputs: list[str], expected: str) -> Path:
    lines = [
        f"- {{name: extra-{index}, output: '{output} #{index}', expected: {expected}}}"
        for index, output in enumerate(outputs)
    ]
    return write_file("extra.yaml", "\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("destination", "fragment"),
    [("missing-folder/report.json", "does not exist"), (".", "is a directory")],
)
def test_an_unusable_out_path_is_refused_before_any_request(
    library: Path, endpoint: JudgeServer, tmp_path: Path, destination: str, fragment: str
) -> None:
    out = tmp_path / destination
    result = CliRunner().invoke(main, ["test-goldens", "keywords", "--out", str(out)])
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr.count("\n") == 1 and fragment in result.stderr
    assert result.stderr.startswith("rubriclib: error: --out: ")


def test_the_out_file_is_replaced_whole(
    library: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    out.write_text("old report")
    result = CliRunner().invoke(
        main, ["test-goldens", "keywords", "--format", "json", "--out", str(out)]
    )
    assert result.exit_code == 0
    assert json.loads(out.read_text())["ok"] is True
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_refused_run_leaves_the_reports_already_there_as_they_were(
    library: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    """--out and --report replace the reports of an earlier run, but only with a new report:
    bad input (exit 2, before any request) leaves them byte for byte."""
    out, page = tmp_path / "goldens.json", tmp_path / "goldens.html"
    out.write_bytes(b"the last report\n")
    page.write_bytes(b"<p>the last page</p>\n")
    arguments = ["test-goldens", "keywords", "no-such-rubric", "--out", str(out)]
    result = CliRunner().invoke(main, [*arguments, "--report", str(page)])
    assert result.exit_code == 2 and endpoint.requests == []
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("rubriclib: error: no-such-rubric: reference: no rubric named")
    assert out.read_bytes() == b"the last report\n"
    assert page.read_bytes() == b"<p>the last page</p>\n"


def test_judge_errors_alone_exit_3_a_miss_exits_1(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    broken = goldens_file(write_file, ["verdict:text"], "pass")
    errors_only = CliRunner().invoke(main, ["test-goldens", "keywords", "--goldens", str(broken)])
    assert errors_only.exit_code == 3, errors_only.output
    missed = goldens_file(write_file, ["verdict:text", "verdict:fail"], "pass")
    both = CliRunner().invoke(main, ["test-goldens", "keywords", "--goldens", str(missed)])
    assert both.exit_code == 1


def test_a_dead_endpoint_ends_quickly_with_3(
    library: Path, monkeypatch: pytest.MonkeyPatch, write_file: Callable[..., Path]
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    many = goldens_file(write_file, ["verdict:pass"] * 300, "pass")
    started = time.monotonic()
    result = CliRunner().invoke(
        main, ["test-goldens", "keywords", "--goldens", str(many), "--format", "json"]
    )
    assert result.exit_code == 3 and time.monotonic() - started < 15
    results = [r for g in json.loads(result.output)["rubrics"][0]["goldens"] for r in g["results"]]
    assert len(results) == 302 and {r["verdict"] for r in results} == {"error"}


def test_many_problems_print_one_per_line(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    bad = write_file("bad.yaml", "".join(f"- {{name: g{i}, output: x}}\n" for i in range(200)))
    result = CliRunner().invoke(main, ["test-goldens", "keywords", "--goldens", str(bad)])
    assert result.exit_code == 2 and endpoint.requests == []
    lines = result.stderr.splitlines()
    assert len(lines) == 200
    assert lines[7] == f"rubriclib: error: {bad}:8: goldens[7].expected: is required"


def test_a_goldens_file_error_names_the_index_in_that_file(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    extra = write_file(
        "extra.yaml",
        "- {name: fresh, output: x, expected: pass}\n"
        "- {name: says-pass, output: x, expected: pass}\n",
    )
    result = CliRunner().invoke(main, ["test-goldens", "keywords", "--goldens", str(extra)])
    assert result.exit_code == 2 and endpoint.requests == []
    assert (
        f"{extra}:2: goldens[1].name: duplicate golden name 'says-pass' (the rubric's own goldens "
        "have it)" in result.stderr
    )


@pytest.mark.parametrize("command", ["render", "judge"])
def test_two_options_reading_stdin_is_a_usage_error(endpoint: JudgeServer, command: str) -> None:
    result = CliRunner().invoke(
        main, [command, "groundedness", "--output", "-", "--context", "-"], input="text"
    )
    assert result.exit_code == 2 and "only one option can read stdin" in result.stderr
    assert endpoint.requests == []


@pytest.mark.parametrize(("sent", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("report_format", ["json", "junit", "table"])
def test_an_interrupted_run_writes_what_it_judged(
    library: Path,
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    tmp_path: Path,
    sent: signal.Signals,
    code: int,
    report_format: str,
) -> None:
    endpoint.responder = keyword_responder(delay=0.2)
    extra = goldens_file(write_file, ["verdict:pass"] * 10, "pass")
    out = tmp_path / f"report.{report_format}"
    arguments = ["test-goldens", "keywords", "--goldens", str(extra), "--concurrency", "1"]
    process = start([*arguments, "--format", report_format, "--out", str(out)], endpoint, library)
    wait_for_requests(endpoint, 4)
    process.send_signal(sent)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr and stderr.count("\n") == 1
    signal_name = sent.name
    assert stderr.startswith(f"rubriclib: interrupted by {signal_name}: judged ")
    judged = int(stderr.split("judged ")[1].split(" of ")[0])
    assert 3 <= judged < 12 and " of 12" in stderr
    text = out.read_text()
    if report_format == "json":
        report = json.loads(text)
        assert report["ok"] is False
        results = [r for g in report["rubrics"][0]["goldens"] for r in g["results"]]
        assert len(results) == judged
    elif report_format == "junit":
        import xml.etree.ElementTree as ElementTree

        assert ElementTree.fromstring(text).tag == "testsuites"
    else:
        assert "INTERRUPTED" in text
    assert len(endpoint.requests) <= judged + 1  # it stopped sending


def test_an_interrupted_judge_exits_130_not_fail(library: Path, endpoint: JudgeServer) -> None:
    endpoint.responder = keyword_responder(delay=5)
    process = start(["judge", "keywords", "--output", "verdict:fail"], endpoint, library)
    wait_for_requests(endpoint, 1)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert stderr == "rubriclib: interrupted by SIGINT; nothing was judged\n"


def test_a_requests_per_minute_quota_paces_test_goldens(
    library: Path, endpoint: JudgeServer
) -> None:
    started = time.monotonic()
    result = CliRunner().invoke(
        main, ["test-goldens", "keywords", "--requests-per-minute", "300", "--no-cache"]
    )
    assert result.exit_code == 0 and len(endpoint.requests) == 2
    assert time.monotonic() - started >= 0.2  # two starts, 0.2 s apart


@pytest.mark.parametrize("command", ["test-goldens", "calibrate"])
@pytest.mark.parametrize("gap", [0.01, 0.05])
def test_two_signals_close_together_still_write_the_report(
    library: Path,
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    tmp_path: Path,
    command: str,
    gap: float,
) -> None:
    endpoint.responder = keyword_responder(delay=0.05)
    out = tmp_path / "report.json"
    if command == "test-goldens":
        extra = goldens_file(write_file, ["verdict:pass"] * 60, "pass")
        arguments = ["test-goldens", "keywords", "--goldens", str(extra)]
    else:
        rows = [{"output": f"verdict:pass {n}", "label": "pass"} for n in range(60)]
        labels = write_file("labels.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
        arguments = ["calibrate", "keywords", "--labels", str(labels)]
    arguments += ["--concurrency", "2", "--format", "json", "--out", str(out)]
    process = start(arguments, endpoint, library)
    wait_for_requests(endpoint, 6)
    process.send_signal(signal.SIGINT)
    time.sleep(gap)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Aborted!" not in stderr and "interrupted by SIGINT: judged " in stderr
    assert json.loads(out.read_text())["run"]["interrupted"] == "SIGINT"


def test_a_dead_key_reads_as_an_outage_not_a_regression(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    endpoint.responder = lambda body: error_reply(401, "Incorrect API key provided")
    extra = goldens_file(write_file, ["verdict:pass"] * 13, "pass")
    arguments = ["test-goldens", "keywords", "--goldens", str(extra)]
    table = CliRunner().invoke(main, arguments)
    assert table.exit_code == 3, table.output
    lines = table.stdout.splitlines()
    assert "accuracy n/a of 0 judged (15 judge error(s) left out)" in lines[0]
    assert lines[1].startswith("  ERROR says-pass  expected pass  got error")
    assert "MISS" not in table.stdout and "REGRESSION" not in table.stdout
    assert lines[-1] == (
        "UNDECIDED: 1 rubric(s), 15 golden(s) x 1 trial(s); 0 golden(s) missed, 15 of 15 "
        "golden(s) could not be judged (15 judge error(s)); no regression measured"
    )
    report = json.loads(CliRunner().invoke(main, [*arguments, "--format", "json"]).stdout)
    [rubric] = report["rubrics"]
    assert report["status"] == "undecided" and report["ok"] is False
    assert rubric["accuracy"] is None and rubric["judged"] == 0 and rubric["errors"] == 15
    assert rubric["misses"] == 0
    assert {golden["status"] for golden in rubric["goldens"]} == {"error"}
    junit = CliRunner().invoke(main, [*arguments, "--format", "junit"])
    root = ElementTree.fromstring(junit.stdout)
    assert junit.exit_code == 3
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("15", "0", "15")
    assert len(root.findall(".//testcase/error")) == 15 and root.find(".//failure") is None


def test_misses_and_judge_errors_are_reported_as_both(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    extra = goldens_file(write_file, ["verdict:text", "verdict:fail", "verdict:pass"], "pass")
    result = CliRunner().invoke(main, ["test-goldens", "keywords", "--goldens", str(extra)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert "accuracy 75.0% of 4 judged (1 judge error(s) left out)" in lines[0]
    marks = {
        line.split()[1]: line.split()[0]
        for line in lines
        if line.startswith("  ") and "expected" in line
    }
    assert marks == {
        "says-pass": "ok",
        "says-fail": "ok",
        "extra-0": "ERROR",
        "extra-1": "MISS",
        "extra-2": "ok",
    }
    assert lines[-1] == (
        "REGRESSION: 1 rubric(s), 5 golden(s) x 1 trial(s); 1 golden(s) missed, 1 of 5 "
        "golden(s) could not be judged (1 judge error(s))"
    )

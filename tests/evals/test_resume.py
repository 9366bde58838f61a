"""A results file is never emptied without being asked: `eval --out` refuses a file that holds
results unless `--resume` continues it or `--force` replaces it (and the Python API likewise);
`--resume` appends, so every line a file held stays, and every report counts only the current
line (the last) of each row and grader, resumed after resume, on files of earlier versions too."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import embedded_data, keyword_responder
from judge_server import JudgeServer, Reply, completion

from rubriclib import load_eval, run_eval
from rubriclib.cli import main
from rubriclib.errors import EvalError

ROWS = [
    {"id": "r1", "output": "verdict:pass one"},
    {"id": "r2", "output": "verdict:fail two"},
    {"id": "r3", "output": "verdict:pass three"},
    {"id": "r4", "output": "verdict:pass four"},
]
EVAL = """\
name: kw
dataset: rows.jsonl
judge: {model: judge-model}
graders:
  - name: kw
    rubric: keywords
  - name: second
    rubric: keywords
    judge: {model: judge-b}
"""
OLD_RESULTS = Path(__file__).parent.parent / "data" / "results_before_typed_details.jsonl"
"""Lines rubriclib wrote before details were typed; its `kw` lines for rows r1 and r4 were judged
by the keywords rubric of today (same digest) with judge-model."""


@pytest.fixture
def eval_file(library: Path, write_file: Callable[..., Path]) -> Path:
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    return write_file("eval.yaml", EVAL)


def run(eval_file: Path, *arguments: str | Path) -> Any:
    return CliRunner().invoke(main, ["eval", str(eval_file), "--no-cache", *map(str, arguments)])


def counts(report: dict[str, Any]) -> dict[str, tuple[int, int, int]]:
    """(pass, fail, error) by grader, from a JSON report or an HTML report's data."""
    return {g["name"]: (g["pass"], g["fail"], g["error"]) for g in report["graders"]}


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def refusing(word: str) -> Callable[[dict[str, Any]], Reply]:
    """The keyword judge, but one that answers in text (a judge error) when `word` is shown."""
    healthy = keyword_responder()

    def respond(body: dict[str, Any]) -> Reply:
        if word in body["messages"][1]["content"]:
            return Reply(body=completion(content="I refuse to use tools."))
        return healthy(body)

    return respond


def test_a_file_that_holds_results_is_refused_before_any_request(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    assert run(eval_file, "--out", out).exit_code == 0
    before, asked = out.read_bytes(), len(endpoint.requests)
    refused = run(eval_file, "--out", out, "--limit", "2")
    assert refused.exit_code == 2 and len(endpoint.requests) == asked
    assert refused.stderr == (
        f"rubriclib: error: --out: {out} already holds results; pass --resume to continue it "
        "or --force to replace it\n"
    )
    assert out.read_bytes() == before
    both = run(eval_file, "--out", out, "--resume", "--force")
    assert both.exit_code == 2 and "--resume and --force: choose one" in both.stderr
    assert out.read_bytes() == before and len(endpoint.requests) == asked
    forced = run(eval_file, "--out", out, "--limit", "1", "--force")
    assert forced.exit_code == 0, forced.output
    assert [(line["row"], line["grader"]) for line in lines_of(out)] in (
        [("r1", "kw"), ("r1", "second")],
        [("r1", "second"), ("r1", "kw")],
    )  # replaced whole, through a temporary file that is gone
    assert [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")] == []


@pytest.mark.parametrize("text", [None, "", "\n \n"])
def test_a_missing_or_blank_file_needs_neither_option(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path, text: str | None
) -> None:
    out = tmp_path / "results.jsonl"
    if text is not None:
        out.write_text(text)
    result = run(eval_file, "--out", out)
    assert result.exit_code == 0, result.output
    assert len({(line["row"], line["grader"]) for line in lines_of(out)}) == 8


def test_the_help_says_what_out_resume_and_force_do() -> None:
    shown = " ".join(CliRunner().invoke(main, ["eval", "--help"]).output.split())
    assert "Append" not in shown
    assert "A file that already holds results is refused unless --resume continues it or " in shown
    assert "--force Let --out replace a file that already holds results" in shown


def test_an_interrupted_forced_run_keeps_the_old_file_until_a_result_replaces_it(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    endpoint.responder = keyword_responder(delay=3)
    out = tmp_path / "results.jsonl"
    out.write_bytes(b"what the last run wrote\n")
    arguments = ["eval", str(eval_file), "--out", str(out), "--force", "--concurrency", "1"]
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "rubriclib"), *arguments],
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not endpoint.requests:  # the first request is in flight, no result yet
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert out.read_bytes() == b"what the last run wrote\n"


def test_resumed_three_times_every_line_stays_and_reports_count_the_current_ones(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    first = run(eval_file, "--out", out, "--model", "judge-x")  # another model than the file's
    assert first.exit_code == 0, first.output
    by_another_model = out.read_bytes()
    endpoint.responder = refusing("four")  # r4 is judged in error next time
    second = run(eval_file, "--out", out, "--resume", "--format", "json")
    assert second.exit_code == 3, second.output  # judge errors and no gate: undecided
    assert counts(json.loads(second.output)) == {"kw": (2, 1, 1), "second": (2, 1, 1)}
    with_errors = out.read_bytes()
    assert with_errors.startswith(by_another_model) and len(lines_of(out)) == 16
    endpoint.responder = keyword_responder()
    endpoint.requests.clear()
    junit = tmp_path / "eval.xml"
    third = run(eval_file, "--out", out, "--resume", "--format", "junit", "--report", junit)
    assert third.exit_code == 0, third.output
    assert len(endpoint.requests) == 2  # only r4's two error lines are judged again
    root = ElementTree.parse(junit).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "2", "0")
    fourth = run(eval_file, "--out", out, "--resume", "--format", "json")
    report = json.loads(fourth.output)
    assert report["run"]["resumed"] == 8 and len(endpoint.requests) == 2
    assert counts(report) == {"kw": (3, 1, 0), "second": (3, 1, 0)}
    page = tmp_path / "eval.html"
    fifth = run(eval_file, "--out", out, "--resume", "--report", page)
    assert fifth.exit_code == 0 and len(endpoint.requests) == 2
    final = out.read_bytes()
    assert final.startswith(with_errors) and len(lines_of(out)) == 18  # every line a user had
    data = embedded_data(page.read_text())
    assert data["judgments"] == 8 and data["errors"] == 0
    assert counts(data) == {"kw": (3, 1, 0), "second": (3, 1, 0)}
    rebuilt = tmp_path / "report.html"
    assert CliRunner().invoke(main, ["report", str(out), "-o", str(rebuilt)]).exit_code == 0
    data = embedded_data(rebuilt.read_text())
    assert counts(data) == {"kw": (3, 1, 0), "second": (3, 1, 0)}
    assert "10 line(s) superseded by a later line of their row and grader" in " ".join(
        data["notes"]
    )
    assert {model for grader in data["graders"] for model in grader["models"]} == {
        "judge-model",
        "judge-b",
    }
    assert out.read_bytes() == final  # reading it changes nothing


def test_a_file_written_by_an_earlier_version_resumes(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    shutil.copyfile(OLD_RESULTS, out)
    result = run(eval_file, "--out", out, "--resume", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["run"]["resumed"] == 2  # kw's r1 and r4, judged as today
    assert len(endpoint.requests) == 6 and counts(report) == {"kw": (3, 1, 0), "second": (3, 1, 0)}
    assert out.read_bytes().startswith(OLD_RESULTS.read_bytes())
    page = tmp_path / "report.html"
    assert CliRunner().invoke(main, ["report", str(out), "-o", str(page)]).exit_code == 0
    graders = {g["name"]: g["judged"] for g in embedded_data(page.read_text())["graders"]}
    assert graders["kw"] == graders["second"] == 4  # the old file's other graders are shown too
    assert {"correct", "facts", "g", "panel", "prefer"} <= set(graders)


def test_the_python_api_refuses_resumes_or_replaces_as_asked(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    out.write_bytes(b'{"row": "mine"}\n')
    with pytest.raises(EvalError, match="already holds results; pass resume=True to continue it"):
        run_eval(load_eval(eval_file), out=out)
    assert out.read_bytes() == b'{"row": "mine"}\n' and endpoint.requests == []
    resumed = run_eval(load_eval(eval_file), out=out, resume=True)
    assert resumed.status == "passed" and out.read_bytes().startswith(b'{"row": "mine"}\n')
    assert len(lines_of(out)) == 1 + 8
    run_eval(load_eval(eval_file), out=out, force=True, limit=1)
    assert {line["row"] for line in lines_of(out)} == {"r1"} and len(lines_of(out)) == 2

"""Eval reports that say what happened: what an interrupt left unjudged, which rows a judge
error hit and why."""

from __future__ import annotations

import json
import re
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
from conftest import keyword_responder
from judge_server import JudgeServer, Reply

from rubriclib.cli import main

TWO_GRADERS = """\
name: support
dataset: rows.jsonl
graders:
  - {name: grounded, rubric: groundedness}
  - {name: helpful, rubric: helpfulness}
"""


def rows_file(write_file: Callable[..., Path], outputs: list[str]) -> Path:
    rows = [
        {"id": f"x{n}", "input": "q", "context": "c", "output": output}
        for n, output in enumerate(outputs)
    ]
    return write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in rows))


def interrupted_eval(endpoint: JudgeServer, *arguments: str) -> tuple[str, str]:
    """Run `rubriclib eval ARGUMENTS` as a process and SIGINT it after six requests."""
    endpoint.responder = keyword_responder(delay=0.05)
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "rubriclib"), "eval", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while len(endpoint.requests) < 6:
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    return stdout, stderr


@pytest.mark.parametrize(("limit", "planned"), [([], 40), (["--limit", "30"], 30)])
def test_an_interrupted_run_says_how_many_rows_were_left(
    write_file: Callable[..., Path],
    endpoint: JudgeServer,
    tmp_path: Path,
    limit: list[str],
    planned: int,
) -> None:
    rows_file(write_file, [f"verdict:pass {n}" for n in range(40)])
    path = write_file("eval.yaml", TWO_GRADERS)
    report = tmp_path / "eval.xml"
    arguments = ["--format", "junit", "--report", str(report), "--concurrency", "2", "--no-cache"]
    arguments += limit
    stdout, _ = interrupted_eval(endpoint, str(path), *arguments)
    found = re.search(r"(\d+) of (\d+) rows judged; (\d+) not judged \(interrupted\)", stdout)
    assert found, stdout
    judged, total, left = (int(group) for group in found.groups())
    assert total == planned and judged + left == planned and 0 < left < planned
    root = ElementTree.parse(report).getroot()
    cases = list(root.iter("testcase"))
    skipped = [case for case in cases if case.find("skipped") is not None]
    assert root.get("tests") == str(2 * planned) == str(len(cases))
    assert root.get("skipped") == str(len(skipped)) and 2 * left <= len(skipped) < 2 * planned
    assert {case.find("skipped").get("message") for case in skipped} == {  # type: ignore[union-attr]
        "not judged: interrupted"
    }
    names = {(case.get("classname"), case.get("name")) for case in cases}
    assert len(names) == 2 * planned  # every (row, grader) pair once
    assert ("helpful", f"row x{planned - 1}") in names


def flaky_judge(body: dict[str, Any]) -> Reply:
    """A judge that answers in prose (a judge error) for outputs marked `broken`."""
    from judge_server import completion

    if "broken" in body["messages"][1]["content"]:
        return Reply(body=completion(content="I think it is fine.\nReally."))
    return keyword_responder()(body)


def test_the_table_lists_the_rows_with_judge_errors_and_why(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    endpoint.responder = flaky_judge
    outputs = [f"verdict:pass {n}" for n in range(3)] + [f"broken {n}" for n in range(13)]
    rows_file(write_file, outputs)
    path = write_file(
        "eval.yaml", TWO_GRADERS.replace("  - {name: helpful, rubric: helpfulness}\n", "")
    )
    result = CliRunner().invoke(main, ["eval", str(path), "--no-cache"])
    assert result.exit_code == 3, result.output
    lines = result.output.splitlines()
    start = lines.index("rows with judge errors (the first line of each error):")
    listed = lines[start + 1 : start + 12]
    assert len([line for line in listed if line.startswith("  row x")]) == 10
    assert listed[0].startswith("  row x3, grounded: ") and "\n" not in listed[0]
    assert listed[10] == "  ... and 3 more"
    data = json.loads(CliRunner().invoke(main, ["eval", str(path), "--format", "json"]).output)
    assert len(data["first_judge_errors"]) == 10 and data["graders"][0]["error"] == 13
    assert data["first_judge_errors"][0]["row"] == "x3"


def test_the_failing_rows_past_ten_are_counted(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    rows_file(write_file, [f"verdict:fail {n}" for n in range(12)])
    path = write_file("eval.yaml", TWO_GRADERS)
    lines = CliRunner().invoke(main, ["eval", str(path)]).output.splitlines()
    start = lines.index("rows that failed most graders:")
    assert lines[start + 11] == "  ... and 2 more"

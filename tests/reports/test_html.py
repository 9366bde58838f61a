"""The HTML report without a browser: the data it embeds (summary numbers, the comparison and
its grouping, clipped texts), how the data block is escaped, and bad input."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import citation, embedded_data
from judge_server import JudgeServer
from results_lines import HOSTILE_REASONS, results_line, write_results

from rubriclib.cli import main
from rubriclib.errors import EvalError
from rubriclib.measure.agreement import wilson_interval
from rubriclib.reports.html.data import read_results, report_data
from rubriclib.reports.html.page import build_report, embedded_json

ROOT = Path(__file__).parents[2]
EVAL = """\
name: report-test
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - name: kw
    rubric: keywords
  - name: grounded
    rubric: groundedness@^1
"""
ROWS = [
    {"id": "r1", "input": "q", "context": "c", "output": "verdict:pass", "team": "a"},
    {"id": "r2", "input": "q", "context": "c", "output": "verdict:fail"},
    {"id": "r3", "input": "q", "output": "verdict:pass"},  # no context: grounded errors
    {"id": "r10", "input": "q", "context": "c", "output": "verdict:pass"},
]


def report_of(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["report", *arguments])


@pytest.fixture
def run_files(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path], tmp_path: Path
) -> tuple[Path, dict[str, Any]]:
    """A real eval run: its results file and its JSON report."""
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    eval_file = write_file("eval.yaml", EVAL)
    out = tmp_path / "results.jsonl"
    ran = CliRunner().invoke(main, ["eval", str(eval_file), "--out", str(out), "--format", "json"])
    assert ran.exit_code in (0, 1, 3), ran.output
    return out, json.loads(ran.stdout)


def test_summary_numbers_match_the_eval_report(run_files: tuple[Path, dict[str, Any]]) -> None:
    out, eval_report = run_files
    data = report_data(read_results(out))
    assert data["judgments"] == 8 and data["errors"] == 1
    assert [row["id"] for row in data["rows"]] == ["r1", "r2", "r3", "r10"]  # natural order
    assert [grader["name"] for grader in data["graders"]] == ["grounded", "kw"]
    theirs_by_name = {grader["name"]: grader for grader in eval_report["graders"]}
    for ours in data["graders"]:
        theirs = theirs_by_name[ours["name"]]
        for key in ("judged", "pass", "fail", "error", "pass_rate", "mean_score"):
            assert ours[key] == theirs[key], key
        assert ours["prompt_tokens"] == theirs["usage"]["prompt_tokens"]
        rubric = theirs["rubric"]
        assert ours["rubrics"] == [f"{rubric['name']}@{rubric['version']} {rubric['digest'][:8]}"]
        assert ours["models"] == [theirs["judge_model"]]
    grounded = data["graders"][0]
    assert (grounded["pass"], grounded["fail"], grounded["error"]) == (2, 1, 1)
    assert grounded["interval"] == pytest.approx(wilson_interval(2, 4))


def test_hostile_text_cannot_leave_the_data_block(tmp_path: Path) -> None:
    lines = [results_line(f"r{i}", "g", "fail", reason) for i, reason in enumerate(HOSTILE_REASONS)]
    lines.append(results_line("</script>", "<b>g</b>", "pass", metadata={"k": "<!-- & -->"}))
    page = build_report(write_results(tmp_path / "r.jsonl", lines))
    assert page.count("<script") == 2 and page.count("</script>") == 2
    block = page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert not set(block) & set("<>&")
    data = embedded_data(page)
    reasons = [cell["reason"] for row in data["rows"] for cell in row["cells"] if cell]
    assert HOSTILE_REASONS[0] in reasons and HOSTILE_REASONS[1] in reasons
    assert "bell\\x07 escape\\x1b[31m null\\x00 end" in reasons  # controls shown, not sent
    assert "<b>g</b>" not in page.split("<noscript>")[1].split("</noscript>")[0]
    assert embedded_json({"a": "</script>"}) == '{"a":"\\u003c/script\\u003e"}'


def test_the_page_allows_only_its_own_script(tmp_path: Path) -> None:
    page = build_report(write_results(tmp_path / "r.jsonl", [results_line("r", "g", "pass")]))
    script = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page
    assert "default-src 'none'" in page  # no network: nothing but the page's own parts loads
    assert not re.search(r"\.innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(", script)
    assert "http" not in script and "fetch(" not in script


def test_the_command_writes_the_page(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl", [results_line("r1", "g", "pass")])
    out = tmp_path / "report.html"
    ran = report_of(str(results), "-o", str(out), "--expected", "3")
    assert ran.exit_code == 0, ran.output
    data = embedded_data(out.read_text(encoding="utf-8"))
    assert data["notes"] == ["1 of 3 expected judgments: 2 missing"]
    assert data["file"]["lines"] == 1 and data["against"] is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n{}\n", "r.jsonl:1: line: not JSON: Expecting value"),
        ('[1]\n{"row": 1}\n', "r.jsonl:1: line: a results line is a JSON object, not list"),
        (
            '{"row": "a", "grader": "g", "verdict": "ok", "result": {}}\n',
            "r.jsonl:1: verdict: must be pass, fail or error, not 'ok'",
        ),
        (
            '{"row": "a", "grader": "g", "verdict": "pass"}\n',
            "r.jsonl:1: result: missing: not a line of a rubriclib results file",
        ),
        ("", "r.jsonl: file: holds no results line"),
        ("\xff\xfe", "r.jsonl:1: line: not UTF-8 text"),
        (
            '{"row": "a"}\n{"row',
            "r.jsonl:1: grader: missing: not a line of a rubriclib results file",
        ),
    ],
)
def test_bad_input_exits_2_naming_the_line(tmp_path: Path, content: str, message: str) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text(content, encoding="latin-1")
    out = tmp_path / "report.html"
    out.write_text("the previous report")
    ran = report_of(str(results), "-o", str(out))
    assert ran.exit_code == 2, ran.output
    assert ran.stderr.splitlines()[0] == f"rubriclib: error: {tmp_path}/{message}"
    assert "Traceback" not in ran.output
    assert out.read_text() == "the previous report"  # never half-written, never clobbered


def test_every_bad_line_is_named_up_to_a_limit(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    results.write_text("nope\n" * 30 + "{}\n")
    with pytest.raises(EvalError) as raised:
        read_results(results)
    problems = [str(problem) for problem in raised.value.problems]
    assert len(problems) == 21 and problems[-1] == f"{results}: lines: 11 more bad line(s)"
    ran = report_of(str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "x.html"))
    assert ran.exit_code == 2 and "missing.jsonl: file: cannot read: No such file" in ran.stderr
    ran = report_of(str(results), "-o", str(tmp_path / "no-such-folder" / "x.html"))
    assert ran.exit_code == 2 and "folder" in ran.stderr


def test_the_wheel_ships_the_page(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation"]
        + ["-q", "-w", str(tmp_path)],
        check=True,
    )
    [wheel] = tmp_path.glob("rubriclib-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = (
        "html_report_page.html",
        "html_report_page.js",
        "html_report_views.js",
        "html_report_checklist.js",
    )
    assert {f"rubriclib/reports/html/{name}" for name in shipped} <= set(names)


def test_token_counts_that_are_not_numbers_are_bad_input(tmp_path: Path) -> None:
    line = results_line("r1", "g", "pass")
    line["result"]["details"]["judge"]["usage"] = {"prompt_tokens": "lots"}
    results = write_results(tmp_path / "r.jsonl", [line])
    ran = report_of(str(results), "-o", str(tmp_path / "report.html"))
    assert ran.exit_code == 2 and "Traceback" not in ran.output
    assert ran.stderr.splitlines()[0] == (
        f"rubriclib: error: {results}:1: result.details.judge.usage: must hold whole numbers "
        "of tokens"
    )


def test_the_report_never_overwrites_a_results_file_it_reads(tmp_path: Path) -> None:
    results = write_results(tmp_path / "r.jsonl", [results_line("r1", "g", "pass")])
    before = results.read_text()
    for arguments in (["-o", str(results)], ["--against", str(results), "-o", str(results)]):
        ran = report_of(str(results), *arguments)
        assert ran.exit_code == 2 and "a results file it reads" in ran.output
        assert results.read_text() == before


def test_the_summary_without_scripts_gives_each_grader_s_verified_citations(
    tmp_path: Path,
) -> None:
    good, invented = citation("output", "x", [0, 1]), citation("M2", "</script><b>made up</b>")
    lines = [
        results_line("r1", "cites", "fail", citations=[good, invented]),
        results_line("r1", "silent", "pass"),
    ]
    page = build_report(write_results(tmp_path / "r.jsonl", lines))
    noscript = page.split("<noscript>")[1].split("</noscript>")[0]
    assert "<th>citations verified</th>" in noscript
    assert "<td>1 of 2 (50.0%)</td>" in noscript and "<td>-</td>" in noscript
    block = page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert not set(block) & set("<>&")  # a quote cannot leave the data block either

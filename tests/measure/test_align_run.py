"""`rubriclib align` end to end against the scripted judge: a judge that agrees more only
because of what a revision shows it, one nothing helps, the refusals before any request, the
dry run's budget against the requests a run then sends, and the optimizer's guideline lines."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import frontmatter
import pytest
from click.testing import CliRunner, Result
from conftest import SECRET_KEY, VALID_RUBRIC, sections, start, wait_for_requests
from judge_accuracy_script import accuracy_benchmark
from judge_server import JudgeServer, Reply, completion, error_reply, tool_reply

import rubriclib
from rubriclib.cli import main
from rubriclib.errors import EvalError
from rubriclib.measure import load_labels
from rubriclib.measure.align_guidelines import GUIDELINES_TOOL, guidelines_request, read_guidelines
from rubriclib.reports import ALIGNMENT_FORMATTERS
from rubriclib.rubrics.registry import builtin_names, load_goldens, load_rubric
from rubriclib.rubrics.revision import next_minor

HOUSE = VALID_RUBRIC.replace("name: tiny", "name: house")
MARKER = "LATE"
"""What people fail and the scripted judge passes until a revision shows it the marker."""
GUIDELINE = f"Fail an answer that says {MARKER}: the customer was told the refund is late."
EVAL = "name: demo\nrows: [{output: o}]\ngraders:\n  - {name: house, rubric: house}\n"


def labelled_rows(passes: int = 14, late: int = 10) -> list[dict[str, Any]]:
    good = [{"id": f"ok-{n}", "output": f"refund sent {n}", "label": "pass"} for n in range(passes)]
    bad = [
        {"id": f"late-{n}", "output": f"{MARKER} refund {n}", "label": "fail"} for n in range(late)
    ]
    return good + bad


def candidate_says_marker_and_is_shown_it(body: dict[str, Any]) -> bool:
    """Whether the candidate output says LATE and the request shows LATE elsewhere too (in a
    worked example or a guideline line): what makes the scripted judge fail it."""
    _, values = sections(body["messages"][1]["content"])
    output = next(value for header, value in values.items() if "[output]" in header)
    shown = "\n".join(str(message["content"]) for message in body["messages"])
    return MARKER in output and shown.count(MARKER) > output.count(MARKER)


def marker_judge(body: dict[str, Any]) -> Reply:
    """Pass, unless the candidate says LATE and the revision shows LATE: then fail. The
    optimizer is answered with GUIDELINE."""
    if body["tools"][0]["function"]["name"] == GUIDELINES_TOOL:
        return Reply(body=completion([(GUIDELINES_TOOL, {"lines": [GUIDELINE]})]))
    verdict = "fail" if candidate_says_marker_and_is_shown_it(body) else "pass"
    return tool_reply(f"set_grade_{verdict}", {"reason": f"scripted {verdict}"})


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge_server: JudgeServer) -> Path:
    """A project with the house rubric and an eval using it; the scripted judge as endpoint."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "house.md").write_text(HOUSE)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "demo.yaml").write_text(EVAL)
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in labelled_rows()))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    judge_server.responder = marker_judge
    return tmp_path


def run(*arguments: str) -> Result:
    return CliRunner().invoke(main, list(arguments))


def align(*arguments: str) -> Result:
    return run("align", "house", "--labels", "labels.jsonl", *arguments)


def test_guideline_lines_that_help_held_out_are_accepted_and_written_in_place(
    project: Path, judge_server: JudgeServer
) -> None:
    assert run("lock").exit_code == 0
    planned = align("--examples", "0", "--optimizer-model", "strong", "--dry-run")
    assert planned.exit_code == 0 and judge_server.request_count == 0
    assert "requests             at most 54" in planned.output  # 24 + 24 judged, 5 + 1 asked
    result = align("--examples", "0", "--optimizer-model", "strong", "--write")
    assert result.exit_code == 0, result.output
    assert judge_server.request_count == 54
    asked = [body for body in judge_server.requests if body["model"] == "strong"]
    assert len(asked) == 6 and all(MARKER in body["messages"][1]["content"] for body in asked)
    written = frontmatter.loads((project / "rubrics" / "house.md").read_text())
    assert written["version"] == "1.3.0" and written.content.endswith(f"- {GUIDELINE}")
    assert "before (the rubric as it is)\n  accuracy       58.3%" in result.output
    assert (
        "after (each row judged by the revision that did not learn from it)\n  accuracy       100.0%"
        in result.output
    )
    assert (
        f"+- {GUIDELINE}" in result.output and "-version: 1.2.3\n+version: 1.3.0" in result.output
    )
    assert "spent 54 request(s)" in result.output and "ALIGNED: held-out" in result.output
    assert SECRET_KEY not in result.output + result.stderr
    checked = run("check")
    assert checked.exit_code == 1 and "locked at 1.2.3, now 1.3.0" in checked.output


def test_worked_examples_that_help_held_out_are_accepted_and_written_in_place(
    project: Path, judge_server: JudgeServer
) -> None:
    assert run("lock").exit_code == 0
    planned = align("--dry-run")
    assert planned.exit_code == 0 and judge_server.request_count == 0
    assert "requests             at most 48" in planned.output  # 24 before + 24 held out
    result = align("--write")
    assert result.exit_code == 0, result.output
    assert judge_server.request_count == 48
    rubric = load_rubric(str(project / "rubrics" / "house.md"))
    assert rubric.version == "1.3.0" and len(rubric.examples) == 4
    assert {example.expected for example in rubric.examples} == {"pass", "fail"}
    assert sum(MARKER in example.output for example in rubric.examples) == 2  # two of each verdict
    assert "+examples:\n+- name: late-" in result.output and "ALIGNED: held-out" in result.output
    late = ", ".join(f"late-{n}" for n in range(10))
    assert f"  turned right held out (10): {late}\n" in result.output
    assert "turned wrong" not in result.output
    checked = run("check")
    assert checked.exit_code == 1 and "locked at 1.2.3, now 1.3.0" in checked.output


def test_nothing_is_written_when_no_revision_helps(
    project: Path, judge_server: JudgeServer
) -> None:
    judge_server.responder = lambda body: (
        Reply(body=completion([(GUIDELINES_TOOL, {"lines": ["Be fair to every answer."]})]))
        if body["tools"][0]["function"]["name"] == GUIDELINES_TOOL
        else tool_reply("set_grade_pass", {"reason": "always pass"})
    )
    arguments = ("--examples", "0", "--optimizer-model", "strong", "--out", "house-next.md")
    result = align(*arguments, "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["accepted"] is False and report["gain"] == 0.0
    assert report["gain_interval"] == {"low": 0.0, "high": 0.0}
    rows = report["row_verdicts"]
    assert [row["row"] for row in rows] == list(range(1, 25))
    first = {"row": 1, "id": "ok-0", "label": "pass", "before": "pass", "after": "pass"}
    assert rows[0] == first | {"fold": rows[0]["fold"]}
    assert {row["label"] for row in rows[14:]} == {"fail"}
    assert {row["fold"] for row in rows} == {1, 2, 3, 4, 5}
    assert "not beyond noise: nothing written" in result.stderr
    assert not (project / "house-next.md").exists()
    assert (project / "rubrics" / "house.md").read_text() == HOUSE


def test_a_gain_is_not_written_when_the_revision_from_every_row_learned_nothing(
    project: Path, judge_server: JudgeServer
) -> None:
    """The folds' revisions got a line and gained; asked for the final revision, the optimizer
    answers only a fragment: writing it would bump the version with nothing new."""
    asked: list[int] = []

    def fragment_at_last(body: dict[str, Any]) -> Reply:
        if body["tools"][0]["function"]["name"] == GUIDELINES_TOOL:
            asked.append(1)
            lines = [GUIDELINE] if len(asked) <= 5 else ["and the customer was told."]
            return Reply(body=completion([(GUIDELINES_TOOL, {"lines": lines})]))
        return marker_judge(body)

    judge_server.responder = fragment_at_last
    result = align("--examples", "0", "--optimizer-model", "strong", "--write")
    assert len(asked) == 6 and result.exit_code == 1, result.output
    last = "NOT ALIGNED: held-out agreement 58.3% -> 100.0%, +41.7 points (paired bootstrap"
    assert last in result.output and ": the revision is empty, nothing written" in result.output
    assert "beyond noise, but the revision from every row learned nothing" in result.stderr
    assert (project / "rubrics" / "house.md").read_text() == HOUSE


def test_too_few_labels_are_refused_before_any_request(
    project: Path, judge_server: JudgeServer
) -> None:
    rows = labelled_rows(passes=16, late=3)
    (project / "few.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run("align", "house", "--labels", "few.jsonl")
    assert result.exit_code == 2 and judge_server.request_count == 0
    assert (
        "few.jsonl: too few labels to measure a gain: 19 row(s), 16 pass and 3 fail"
        in result.stderr
    )


def test_a_plan_over_max_requests_and_bad_destinations_are_refused_up_front(
    project: Path, judge_server: JudgeServer
) -> None:
    over = align("--max-requests", "47")
    assert over.exit_code == 2 and "needs up to 48 request(s), over 47" in over.stderr
    (project / "taken.md").write_text("mine")
    taken = align("--out", "taken.md")
    assert taken.exit_code == 2 and "taken.md exists" in taken.stderr
    builtin = run("align", "harmful-content", "--labels", "labels.jsonl", "--write")
    assert (
        builtin.exit_code == 2
        and "built-in rubric and cannot be written in place" in builtin.stderr
    )
    empty = align("--folds", "25")
    assert empty.exit_code == 2 and "25 folds of 24 row(s) would leave a fold empty" in empty.stderr
    nothing = align("--examples", "0")
    assert nothing.exit_code == 2 and "nothing to learn without --optimizer-model" in nothing.stderr
    both = align("--out", "new.md", "--write")
    assert both.exit_code == 2 and judge_server.request_count == 0
    assert (project / "taken.md").read_text() == "mine"


def test_a_dead_endpoint_writes_nothing(project: Path, judge_server: JudgeServer) -> None:
    judge_server.responder = lambda body: error_reply(401, f"bad key {SECRET_KEY}")
    result = align("--write", "--concurrency", "1")
    assert result.exit_code == 3 and "every row ended in a judge error" in result.stderr
    assert (project / "rubrics" / "house.md").read_text() == HOUSE
    assert SECRET_KEY not in result.output + result.stderr


LABELS_RUBRIC = """\
---
name: support
version: 1.0.0
scale: labels
description: Whether the ticket was resolved.
labels: {resolved: pass, not-resolved: fail}
---
Label the reply with `set_grade_label`.
"""
SCORED = (
    VALID_RUBRIC.replace("name: tiny", "name: scored")
    .replace("scale: pass-fail", "scale: 1-5\npass_threshold: 4")
    .replace("expected: pass", "expected: pass\n    expected_score: 5")
    .replace("expected: fail", "expected: fail\n    expected_score: 1")
)


@pytest.mark.parametrize(
    ("rubric", "passing", "failing"),
    [
        (LABELS_RUBRIC, {"label": "resolved"}, {"label": "not-resolved"}),
        (SCORED, {"score": 5}, {"score": 2}),
    ],
)
def test_labels_and_1_5_rubrics_are_aligned_over_their_own_answers(
    project: Path,
    judge_server: JudgeServer,
    rubric: str,
    passing: dict[str, Any],
    failing: dict[str, Any],
) -> None:
    name = frontmatter.loads(rubric)["name"]
    (project / "rubrics" / f"{name}.md").write_text(rubric)
    rows = [
        {"id": row["id"], "output": row["output"]}
        | (failing if MARKER in row["output"] else passing)
        for row in labelled_rows()
    ]
    (project / "own.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))

    def respond(body: dict[str, Any]) -> Reply:
        if body["tools"][0]["function"]["name"] == GUIDELINES_TOOL:
            return marker_judge(body)
        given = failing if candidate_says_marker_and_is_shown_it(body) else passing
        return tool_reply(body["tools"][0]["function"]["name"], {"reason": "r", **given})

    judge_server.responder = respond
    arguments = ["--optimizer-model", "strong", "--format", "json"]  # examples and lines
    result = run("align", name, "--labels", "own.jsonl", *arguments)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["accepted"] and report["before"]["accuracy"] == pytest.approx(14 / 24)
    assert report["after"]["accuracy"] == 1.0 and report["requests"] == 54
    assert report["revision"]["version"] == next_minor(frontmatter.loads(rubric)["version"])
    [(answer, value)] = failing.items()
    field = {"label": "expected_label", "score": "expected_score"}[answer]
    examples = report["revision"]["examples"]
    assert (
        len(examples) == 4 and sum(example.get(field) == value for example in examples) == 2
    )  # two of each
    assert (project / "rubrics" / f"{name}.md").read_text() == rubric  # no --write: untouched


def test_an_optimizer_that_cannot_be_asked_ends_the_run_and_writes_nothing(
    project: Path, judge_server: JudgeServer
) -> None:
    judge_server.responder = lambda body: (
        error_reply(400, f"no such model for key {SECRET_KEY}")
        if body["model"] == "strong"
        else marker_judge(body)
    )
    result = align("--examples", "0", "--optimizer-model", "strong", "--write")
    assert result.exit_code == 3 and "the optimizer model could not be asked" in result.stderr
    assert "nothing written" in result.stderr and SECRET_KEY not in result.stderr
    assert (project / "rubrics" / "house.md").read_text() == HOUSE


def test_an_interrupt_writes_nothing(project: Path, judge_server: JudgeServer) -> None:
    def slow(body: dict[str, Any]) -> Reply:
        time.sleep(0.2)
        return marker_judge(body)

    judge_server.responder = slow
    arguments = ["align", "house", "--labels", "labels.jsonl", "--write", "--concurrency", "1"]
    process = start(arguments, judge_server, project / "rubrics")
    wait_for_requests(judge_server, 3)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and " judgment(s); nothing written" in stderr
    assert "INTERRUPTED (SIGINT): nothing written" in stdout
    assert (project / "rubrics" / "house.md").read_text() == HOUSE


def test_the_optimizer_request_fences_rows_as_data_and_its_reply_is_read_warily(
    write_file: Callable[..., Path],
) -> None:
    rubric = load_rubric(str(write_file("house.md", HOUSE)))
    body = guidelines_request("strong", rubric, [])
    assert body["tool_choice"]["function"]["name"] == GUIDELINES_TOOL
    assert body["tools"][0]["function"]["parameters"]["properties"]["lines"]["maxItems"] == 3
    lines = ["  One\nline. ", "", "Two!", "Three?", "Four.", 7]
    reply = json.dumps(completion([(GUIDELINES_TOOL, {"lines": lines})])).encode()
    proposal = read_guidelines(reply)
    assert proposal.lines == ["One line.", "Two!", "Three?"] and proposal.prompt_tokens == 11
    assert "at most 200 characters" in body["messages"][0]["content"]


def test_an_optimizer_line_cut_mid_sentence_keeps_only_its_whole_sentences() -> None:
    """What the 1.5B judge proposed through llama.cpp, whose grammar cut each line at the
    schema's 200 characters: the model went on with the sentence, or the schema, in the next."""
    long = "Fail an answer that states a wrong fact. " + "It is judged on what it says " * 8
    lines = [
        long[:200],
        "it should be considered helpful.",
        "Pass a terse answer, when it answers all of the request, the way people did",
        "type",
        "string",
        "Ask whether the reply answers the question asked (e.g. the capital), then judge it.",
    ]
    reply = json.dumps(completion([(GUIDELINES_TOOL, {"lines": lines})])).encode()
    assert read_guidelines(reply).lines == [
        "Fail an answer that states a wrong fact.",
        "Ask whether the reply answers the question asked (e.g. the capital), then judge it.",
    ]
    assert read_guidelines(b"not json").lines == []
    assert read_guidelines(json.dumps(completion(content="no tool")).encode()).lines == []


@pytest.mark.parametrize("name", builtin_names())
def test_the_accuracy_benchmark_writes_each_builtins_goldens_as_the_labels_align_reads(
    name: str, tmp_path: Path
) -> None:
    rubric = load_rubric(name)
    path = tmp_path / "labels.jsonl"
    written = accuracy_benchmark().goldens_as_labels(name, path)
    goldens = load_goldens(rubric)
    assert written == len(goldens) > 0
    if rubric.scale == "pairwise":
        with pytest.raises(EvalError, match="pairwise rubric"):
            load_labels(path, rubric)
        return
    rows = load_labels(path, rubric)
    assert [row.row.item.id for row in rows] == [golden.name for golden in goldens]
    assert [row.label.verdict for row in rows] == [golden.expected for golden in goldens]
    scores = [golden.expected_score if rubric.scale == "1-5" else None for golden in goldens]
    assert [row.label.score for row in rows] == scores
    assert [row.label.name for row in rows] == [golden.expected_label for golden in goldens]
    assert [row.row.item.output for row in rows] == [golden.output for golden in goldens]
    assert [row.row.item.metadata.get("why") for row in rows] == [g.why for g in goldens]


def test_the_accuracy_benchmark_reads_aligns_json_report(project: Path) -> None:
    result = align("--format", "json")
    assert result.exit_code == 0, result.output
    row = accuracy_benchmark().alignment_row(json.loads(result.stdout), 2.4)
    assert row["rows"] == "24" and row["accepted"] == "yes" and row["minutes"] == "2"
    assert row["before"].startswith("58% [") and ", kappa +0.00" in row["before"]
    assert row["after (held out)"].startswith("100% [100%, 100%], kappa +1.00")
    assert row["gain [95%]"].startswith("+42% [+")
    assert row["examples"] == "4-4 a fold" and row["guideline lines"] == "0-0 a fold"
    assert row["requests"] == "48"


def test_a_requests_per_minute_cap_spaces_every_start_across_folds_and_optimizer_calls(
    project: Path, judge_server: JudgeServer
) -> None:
    """The folds and the optimizer calls are one run with one pacer for the endpoint: the cap
    holds across all of them, not only within one fold."""
    arrivals: list[float] = []

    def timed(body: dict[str, Any]) -> Reply:
        arrivals.append(time.monotonic())
        return marker_judge(body)

    judge_server.responder = timed
    arguments = ["--optimizer-model", "strong", "--requests-per-minute", "600", "--no-cache"]
    result = align(*arguments)  # one start every 0.1 s
    assert result.exit_code == 0, result.output
    assert len(arrivals) == judge_server.request_count == 24 + 24 + 6
    gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)]
    assert min(gaps[1:]) >= 0.05  # the first request arrives late: it opens the connection


def test_agent_runs_alone_cannot_give_examples_so_align_refuses_before_any_request(
    project: Path, judge_server: JudgeServer
) -> None:
    run_of = [{"role": "user", "content": "refund?"}, {"role": "assistant", "content": "sent"}]
    rows = [row | {"transcript": run_of} for row in labelled_rows()]
    (project / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run("align", "task-completion", "--labels", "runs.jsonl")
    assert result.exit_code == 2 and judge_server.request_count == 0
    assert (
        "runs.jsonl: no row can be a worked example (an example is shown as text: not an agent "
        "run, and with every field task-completion requires: transcript); pass "
        "--optimizer-model for guideline lines instead" in result.stderr
    )
    guided = ["--optimizer-model", "strong", "--dry-run"]  # guideline lines alone can revise
    planned = run("align", "task-completion", "--labels", "runs.jsonl", *guided)
    assert planned.exit_code == 0 and "optimizer calls      6" in planned.output


def test_the_accuracy_benchmark_counts_a_judge_error_as_a_miss(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    extra = write_file("extra.yaml", "- {name: abstains, output: 'verdict:text', expected: pass}\n")
    ran = CliRunner().invoke(
        main, ["test-goldens", "keywords", "--goldens", str(extra), "--format", "json"]
    )
    report = json.loads(ran.stdout)
    assert report["rubrics"][0]["accuracy"] == 1.0  # test-goldens leaves the error out
    row = accuracy_benchmark().per_rubric(report)["keywords"]
    assert row["accuracy"].startswith("67% [") and row["errors"].startswith("1 (")


def without_timings(value: Any) -> Any:
    """A report's JSON without its timings, which differ between any two runs."""
    if isinstance(value, dict):
        timings = {"started", "finished", "duration_seconds", "latency_ms"}
        return {key: without_timings(item) for key, item in value.items() if key not in timings}
    if isinstance(value, list):
        return [without_timings(item) for item in value]
    return value


def test_align_from_python_returns_the_report_the_command_prints_and_writes_nothing(
    project: Path, judge_server: JudgeServer
) -> None:
    printed = align("--format", "json", "--no-cache")
    sent = judge_server.request_count
    files = sorted(project.rglob("*"))
    alignment = rubriclib.align("house", "labels.jsonl")
    assert printed.exit_code == 0 and sent == 48
    shown = json.loads(ALIGNMENT_FORMATTERS["json"](alignment, None))
    assert without_timings(shown) == without_timings(json.loads(printed.stdout))
    assert alignment.accepted and judge_server.request_count == 2 * sent
    assert alignment.final is not None and alignment.final.rubric.version == "1.3.0"
    assert len(alignment.final.examples) == 4 and "examples:" in alignment.final.text
    assert (project / "rubrics" / "house.md").read_text() == HOUSE  # nothing written
    assert sorted(project.rglob("*")) == files


def test_align_runs_in_the_caller_s_event_loop_and_from_code_running_one(
    project: Path, judge_server: JudgeServer
) -> None:
    async def notebook_cell() -> tuple[rubriclib.Alignment, rubriclib.Alignment]:
        guided = await rubriclib.aalign(
            "house", Path("labels.jsonl"), examples=0, optimizer_model="strong", concurrency=4
        )
        return guided, rubriclib.align(load_rubric("house"), "labels.jsonl", folds=3)

    guided, shown = asyncio.run(notebook_cell())
    assert guided.accepted and guided.final is not None
    assert guided.final.guidelines == [GUIDELINE] and guided.requests == 54
    assert shown.accepted and len(shown.folds) == 3
    assert judge_server.request_count == 54 + 48


def test_align_from_python_refuses_bad_input_before_any_request(
    project: Path, judge_server: JudgeServer
) -> None:
    (project / "few.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in labelled_rows(passes=16, late=3))
    )
    command = run("align", "house", "--labels", "few.jsonl")
    with pytest.raises(EvalError) as too_few:
        rubriclib.align("house", "few.jsonl")
    assert command.exit_code == 2 and command.stderr == f"rubriclib: error: {too_few.value}\n"
    with pytest.raises(EvalError, match="^labels.jsonl: folds: 25 folds of 24 row"):
        rubriclib.align("house", "labels.jsonl", folds=25)
    with pytest.raises(ValueError, match="^examples=0: nothing to learn without optimizer_model"):
        rubriclib.align("house", "labels.jsonl", examples=0)
    with pytest.raises(ValueError, match="folds must be a whole number of at least 2, not 1"):
        rubriclib.align("house", "labels.jsonl", folds=1)
    run_of = [{"role": "user", "content": "refund?"}, {"role": "assistant", "content": "sent"}]
    rows = [row | {"transcript": run_of} for row in labelled_rows()]
    (project / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(EvalError, match="^runs.jsonl: no row can be a worked example") as runs:
        rubriclib.align("task-completion", "runs.jsonl")
    assert str(runs.value).endswith("; pass optimizer_model for guideline lines instead")
    judge = rubriclib.Judge(base_url=judge_server.url, api_key=SECRET_KEY)
    panel = rubriclib.Panel([judge, judge])
    with pytest.raises(rubriclib.JudgeConfigError, match="pass a Judge"):
        rubriclib.align("house", "labels.jsonl", judge=panel, optimizer_model="strong")
    assert judge_server.request_count == 0


def test_an_optimizer_that_cannot_be_asked_raises_its_error_without_the_key(
    project: Path, judge_server: JudgeServer
) -> None:
    judge_server.responder = lambda body: (
        error_reply(400, f"no such model for key {SECRET_KEY}")
        if body["model"] == "strong"
        else marker_judge(body)
    )
    with pytest.raises(rubriclib.EndpointError) as raised:
        rubriclib.align("house", "labels.jsonl", examples=0, optimizer_model="strong")
    assert "no such model for key [redacted]" in str(raised.value)
    assert raised.value.status == 400 and raised.value.__context__ is None
    assert (project / "rubrics" / "house.md").read_text() == HOUSE


def test_an_optimizer_call_that_fails_for_a_moment_is_sent_again(
    project: Path, judge_server: JudgeServer
) -> None:
    """The optimizer's request is sent as a judgment's is: a 503 is retried after the
    backoff, so a passing outage does not end the run."""
    failed: list[str] = []

    def flaky(body: dict[str, Any]) -> Reply:
        if body["model"] == "strong" and not failed:
            failed.append(body["model"])
            return error_reply(503, "overloaded")
        return marker_judge(body)

    judge_server.responder = flaky
    result = align("--examples", "0", "--optimizer-model", "strong", "--out", "house-next.md")
    assert result.exit_code == 0, result.output + result.stderr
    asked = [body for body in judge_server.requests if body["model"] == "strong"]
    assert failed and len(asked) == 7  # 6 optimizer calls, the first sent twice

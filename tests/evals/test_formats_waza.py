"""waza's eval.yaml: prompt graders (eval-level and in tasks), YAML rubrics, waza's keys."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import keyword_responder
from judge_server import JudgeServer, Reply

from rubriclib.cli import main
from rubriclib.errors import EvalError
from rubriclib.evals.formats import load_eval
from rubriclib.evals.formats.waza_rubric import DEFAULT_PASS_THRESHOLD
from rubriclib.rubrics.rubric import judged_digest

WAZA_TEST_DATA = Path(__file__).parents[1] / "data" / "waza" / "eval-grader-prompt.yaml"
"""waza's own test data, an exact copy (tests/data/waza/README.md says from where)."""
RUBRICLIB = str(Path(sys.executable).parent / "rubriclib")
IGNORED = "(ignored, as waza's runner ignores it)"

WAZA = """\
name: waza-eval
skill: support-bot
tasks: ["tasks/*.yaml"]
graders:
  - type: code
    name: not-empty
    config: {assertions: ["len(output) > 0"]}
  - type: prompt
    name: helpful
    config: {rubric: helpfulness, model: waza-judge}
  - type: prompt
    name: inline
    config:
      prompt: "Pass if {submission} answers {input}. Call set_waza_grade_pass or set_waza_grade_fail."
"""

PASS_FAIL_RUBRIC = """\
# a waza YAML rubric
name: task_completion
description: >
  Was the task done?
version: "1.0"
source: written for these tests
score_type: binary
input_mapping: {query: context.prompt, response: context.output}
evaluation_criteria: |
  Pass only when the reply completes the task.
rating_levels:
  - {value: "true", label: complete, description: Done.}
  - {value: "false", label: incomplete, description: Not done.}
chain_of_thought: |
  Think step by step.
output_format:
  type: json
  schema: {success: {type: boolean}}
"""

ORDINAL_RUBRIC = """\
name: tool_call_accuracy
description: How well tools were used.
score_normalization: {type: ordinal, raw_min: 1, raw_max: 5, formula: "(raw - 1) / 4"}
evaluation_criteria: Judge the tool calls.
rating_levels:
  1: {label: Irrelevant, description: Wrong tools., example: Weather for a distance.}
  2: {label: Partial, description: Some wrong.}
  3: {label: Inefficient, description: Too many calls.}
  4: {label: Retried, description: Recovered.}
  5: {label: Optimal, description: Best.}
output_schema: {tool_calls_success_level: "integer 1-5"}
"""


def run(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["eval", *arguments])


def results_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def rows_file(write_file: Callable[..., Path], *rows: dict[str, Any]) -> Path:
    return write_file("outputs.jsonl", "".join(json.dumps(row) + "\n" for row in rows))


def waza_aware(body: dict[str, Any]) -> Reply:
    """The keyword judge, answering with waza's tool names when those are offered."""
    reply = keyword_responder()(body)
    if "set_waza_grade_pass" in json.dumps(body["tools"]):
        call = reply.body["choices"][0]["message"]["tool_calls"][0]["function"]
        call["name"] = call["name"].replace("set_grade", "set_waza_grade")
    return reply


def test_a_waza_eval_judges_its_prompt_graders(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    endpoint.responder = waza_aware
    eval_path = write_file("waza.yaml", WAZA)
    outputs = rows_file(write_file, {"input": "q", "output": "verdict:pass"})
    without = run(str(eval_path))
    assert without.exit_code == 2 and "--dataset FILE" in without.stderr
    ev = load_eval(eval_path, outputs)
    assert [g.name for g in ev.graders] == ["helpful", "inline"]
    assert ev.graders[0].judge.model == "waza-judge"
    inline = ev.graders[1].rubric
    assert inline.version == "0.0.0" and inline.source == f"prompt:{eval_path}#graders[2]"
    assert inline.tool_names == ("set_waza_grade_pass", "set_waza_grade_fail")
    assert any("not-empty" in line and "'code'" in line for line in ev.skipped)
    assert any("'tasks/*.yaml': no task file matches" in line for line in ev.skipped)
    result = run(str(eval_path), "--dataset", str(outputs), "--no-cache")
    assert result.exit_code == 0, result.output
    assert "not run:" in result.output and "type 'code' is not a judge" in result.output
    waza_request = next(r for r in endpoint.requests if "set_waza" in json.dumps(r["tools"]))
    assert "Pass if \n```\nverdict:pass\n```\n answers" in waza_request["messages"][1]["content"]


def test_a_yaml_rubric_loads_as_a_pass_fail_rubric(write_file: Callable[..., Path]) -> None:
    rubric_path = write_file("rubrics/task_completion.yaml", PASS_FAIL_RUBRIC)
    eval_path = write_file(
        "eval.yaml",
        "graders:\n  - {type: prompt, name: done, config: "
        "{rubric: rubrics/task_completion.yaml, response_format: json}}\n",
    )
    ev = load_eval(eval_path, write_file("rows.jsonl", ""))
    rubric = ev.graders[0].rubric
    assert (rubric.name, rubric.version, rubric.scale) == ("task-completion", "1.0.0", "pass-fail")
    assert rubric.source == f"waza-yaml:{rubric_path}" and rubric.pass_threshold is None
    assert rubric.description == "Was the task done?"
    assert rubric.body.startswith("Pass only when the reply completes the task.")
    assert "- true (complete): Done." in rubric.body and "Think step by step." in rubric.body
    assert "boolean" not in rubric.body  # the JSON answer it describes is never asked for
    assert rubric.digest == judged_digest("pass-fail", None, [], rubric.body)
    note = [line for line in ev.skipped if "response_format" in line]
    assert note == [
        "graders[0] done: response_format json has no effect (the verdict is a tool call)"
    ]


def test_a_one_to_five_ordinal_yaml_rubric_is_scale_1_5(write_file: Callable[..., Path]) -> None:
    write_file("accuracy.yaml", ORDINAL_RUBRIC)
    threshold = ORDINAL_RUBRIC.replace("raw_max: 5,", "raw_max: 5, threshold: 4,")
    write_file("strict.yaml", threshold)
    eval_path = write_file(
        "eval.yaml",
        "graders:\n  - {type: prompt, name: a, rubric: accuracy.yaml}\n"
        "  - {type: prompt, name: b, config: {rubric: ./strict.yaml}}\n",
    )
    first, second = load_eval(eval_path, write_file("rows.jsonl", "")).graders
    assert (first.rubric.scale, first.rubric.pass_threshold) == ("1-5", DEFAULT_PASS_THRESHOLD)
    assert first.rubric.version == "0.0.0"  # no version: an unversioned rubric
    assert "- 1 (Irrelevant): Wrong tools.\n  Example: Weather for a distance." in first.rubric.body
    assert (second.rubric.scale, second.rubric.pass_threshold) == ("1-5", 4)
    assert first.rubric.digest != second.rubric.digest


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        ("name: [unclosed\n", "rubric", "invalid YAML"),
        ("- a list\n", "rubric", "must be a mapping of keys"),
        (PASS_FAIL_RUBRIC.replace("evaluation_criteria:", "criteria:"), "evaluation_criteria", "is required"),
        (PASS_FAIL_RUBRIC.replace("chain_of_thought:", "chain_of_thougth:"), "chain_of_thougth", "did you mean 'chain_of_thought'?"),
        (PASS_FAIL_RUBRIC.replace('"1.0"', "one"), "version", "is not a version"),
        (ORDINAL_RUBRIC.replace("raw_max: 5", "raw_max: 10"), "score_normalization", "1-10 cannot be judged"),
        (PASS_FAIL_RUBRIC.replace("binary", "continuous"), "score_type", "'continuous' cannot be judged"),
    ],
)  # fmt: skip
def test_a_bad_yaml_rubric_names_the_file_and_field(
    write_file: Callable[..., Path], text: str, field: str, message: str
) -> None:
    rubric_path = write_file("bad.yaml", text)
    eval_path = write_file("eval.yaml", "graders:\n  - {type: prompt, name: g, rubric: bad.yaml}\n")
    outputs = write_file("rows.jsonl", "")
    with pytest.raises(EvalError) as caught:
        load_eval(eval_path, outputs)
    problem = next(p for p in caught.value.problems if p.field == field)
    assert problem.source.startswith(str(rubric_path)) and message in problem.message
    result = run(str(eval_path), "--dataset", str(outputs), "--dry-run")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{rubric_path}" in result.stderr and f"{field}: " in result.stderr


def test_a_bad_key_in_a_yaml_rubric_gets_its_line(write_file: Callable[..., Path]) -> None:
    rubric_path = write_file("bad.yaml", PASS_FAIL_RUBRIC.replace("score_type:", "score_typ:"))
    eval_path = write_file("eval.yaml", "graders:\n  - {type: prompt, name: g, rubric: bad.yaml}\n")
    result = run(str(eval_path), "--dataset", str(write_file("rows.jsonl", "")), "--dry-run")
    assert result.exit_code == 2
    line = PASS_FAIL_RUBRIC.splitlines().index("score_type: binary") + 1
    assert (
        f"{rubric_path}:{line}: score_typ: unknown key; did you mean 'score_type'?" in result.stderr
    )


TASK_FILE = """\
id: {task}
name: A task
inputs: {{prompt: "do it"}}
graders:
  - name: quality
    type: prompt
    config: {{prompt: "Pass when the keyword is in {{submission}}."}}
  - name: exists
    assertions: ["len(output) > 0"]
"""


def test_prompt_graders_in_task_files_judge_their_own_tasks_rows(
    write_file: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    write_file("tasks/alpha.yaml", TASK_FILE.format(task="alpha"))
    write_file("tasks/beta.yaml", TASK_FILE.format(task="beta"))
    write_file("tasks/notes.txt", "not a task")
    eval_path = write_file("eval.yaml", "name: only-tasks\ntasks: ['tasks/*.yaml']\n")
    outputs = rows_file(
        write_file,
        {"id": "r1", "task": "alpha", "input": "q", "output": "verdict:pass a"},
        {"id": "r2", "task": "beta", "input": "q", "output": "verdict:fail b"},
        {"id": "beta", "input": "q", "output": "verdict:pass c"},  # no task: its id names it
        {"id": "r4", "task": "gamma", "input": "q", "output": "verdict:pass d"},
    )
    ev = load_eval(eval_path, outputs)
    assert [(g.name, g.task) for g in ev.graders] == [
        ("alpha/quality", "alpha"),
        ("beta/quality", "beta"),
    ]
    assert ev.graders[0].rubric.source == f"prompt:{tmp_path / 'tasks/alpha.yaml'}#graders[0]"
    assert any("alpha.yaml: graders[1] exists: type 'code'" in line for line in ev.skipped)
    dry = run(str(eval_path), "--dataset", str(outputs), "--dry-run")
    assert dry.exit_code == 0 and "= 3 judgment(s)" in dry.output
    out = tmp_path / "results.jsonl"
    result = run(str(eval_path), "--dataset", str(outputs), "--out", str(out), "--no-cache")
    judged = sorted((line["row"], line["grader"], line["verdict"]) for line in results_of(out))
    assert judged == [
        ("beta", "beta/quality", "pass"),
        ("r1", "alpha/quality", "pass"),
        ("r2", "beta/quality", "fail"),
    ]
    assert len(endpoint.requests) == 3 and result.exit_code == 0


def test_inline_tasks_and_disabled_tasks(write_file: Callable[..., Path]) -> None:
    eval_path = write_file(
        "eval.yaml",
        """\
tasks:
  - name: inline-task
    prompt: Create a REST client
    graders:
      - {type: prompt, name: judged, config: {prompt: "Judge {submission}."}}
  - id: paused
    enabled: false
    graders:
      - {type: prompt, name: never, config: {prompt: "x"}}
""",
    )
    ev = load_eval(eval_path, write_file("rows.jsonl", ""))
    assert [(g.name, g.task) for g in ev.graders] == [("inline-task/judged", "inline-task")]
    assert ev.graders[0].rubric.source == f"prompt:{eval_path}#tasks[0].graders[0]"
    assert f"{eval_path}: task paused: enabled: false" in ev.skipped


def test_an_eval_with_no_prompt_grader_anywhere_says_so(write_file: Callable[..., Path]) -> None:
    write_file("tasks/a.yaml", "id: a\ngraders:\n  - {name: c, assertions: ['True']}\n")
    eval_path = write_file("eval.yaml", "tasks: ['tasks/*.yaml']\n")
    with pytest.raises(EvalError, match="has no prompt grader to run"):
        load_eval(eval_path, write_file("rows.jsonl", ""))


def test_problems_in_a_task_file_name_the_file_line_and_field(
    write_file: Callable[..., Path],
) -> None:
    task = write_file(
        "tasks/a.yaml",
        """\
id: a
inputs: {prompt: x}
grader: []
graders:
  - name: g
    type: prompt
    config:
      prompt: "Judge {submission}."
      response_format: xml
      modell: gpt-4o
""",
    )
    write_file("tasks/b.yaml", "id: a\n")
    eval_path = write_file("eval.yaml", "tasks: ['tasks/*.yaml']\n")
    result = run(str(eval_path), "--dataset", str(write_file("rows.jsonl", "")), "--dry-run")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{task}:3: grader: unknown key; did you mean 'graders'?" in result.stderr
    assert (
        f"{task}:10: graders[0].config.modell: unknown key; did you mean 'model'?" in result.stderr
    )
    assert f"{task}:9: graders[0].config.response_format: 'xml' cannot be honoured" in result.stderr
    assert "duplicate task id 'a'" in result.stderr


def test_every_waza_key_is_accepted_and_unknown_ones_get_suggestions(
    write_file: Callable[..., Path], caplog: pytest.LogCaptureFixture
) -> None:
    valid = write_file(
        "eval.yaml",
        """\
name: all-keys
description: d
skill: s
version: "1.0"
config:
  trials_per_task: 1
  timeout_seconds: 60
  parallel: true
  workers: 2
  fail_fast: false
  executor: mock
  model: agent-model
  skill_directories: [.]
  required_skills: [s]
  mcp_servers: {}
  max_attempts: 1
  group_by: task
  judge_model: judge-from-config
hooks: {}
inputs: {a: b}
metrics: [{name: m, weight: 1, threshold: 0.5}]
baseline: false
graders:
  - type: prompt
    name: p
    weight: 2
    config:
      prompt: "Judge {submission}."
      continue_session: false
      mode: independent
      reasoning_effort: low
  - {type: prompt, name: q, model: grader-model, config: {prompt: "Judge."}}
""",
    )
    ev = load_eval(valid, write_file("rows.jsonl", ""))
    assert [g.judge.model for g in ev.graders] == ["judge-from-config", "grader-model"]
    assert "graders[0] p: reasoning_effort has no effect on this judge" in ev.skipped
    typos = write_file(
        "typos.yaml",
        """\
grader: []
config: {trials_per_tsk: 1}
graders:
  - {type: prompt, name: p, wieght: 1, config: {prompt: "x", promt: "y"}}
""",
    )
    with pytest.raises(EvalError) as caught:
        load_eval(typos, write_file("rows.jsonl", ""))
    messages = {(p.field, p.message) for p in caught.value.problems}
    assert messages == {("graders[0].config.promt", "unknown key; did you mean 'prompt'?")}
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [
        f"{typos}:1: grader: unknown key; did you mean 'graders'? {IGNORED}",
        f"{typos}:2: config.trials_per_tsk: unknown key; did you mean 'trials_per_task'? {IGNORED}",
        f"{typos}:4: graders[0].wieght: unknown key; did you mean 'weight'? {IGNORED}",
    ]


def test_waza_own_test_data_warns_of_its_id_and_is_judged(
    write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    # a real process: the warning handler binds the stderr of the first command run in it
    endpoint.responder = waza_aware
    rows = rows_file(write_file, {"input": "q", "output": "verdict:pass"})
    arguments = ["eval", str(WAZA_TEST_DATA), "--dataset", str(rows), "--no-cache"]
    result = subprocess.run([RUBRICLIB, *arguments], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"rubriclib: warning: {WAZA_TEST_DATA}:1: id: unknown key; known keys: name, "
        "description, skill, version, config, hooks, inputs, tasks_from, range, graders, "
        f"metrics, tasks, baseline {IGNORED}"
    ]
    assert len(endpoint.requests) == 2
    assert all("set_waza_grade_pass" in json.dumps(r["tools"]) for r in endpoint.requests)
    assert sorted(r["model"] for r in endpoint.requests) == ["claude-sonnet-4.5", "gpt-4o-mini"]


def test_a_typo_in_a_waza_key_warns_with_the_key_it_may_mean(
    write_file: Callable[..., Path], caplog: pytest.LogCaptureFixture
) -> None:
    eval_path = write_file(
        "eval.yaml", "skill: s\ngradres: [{type: prompt, name: p, config: {prompt: x}}]\n"
    )
    with pytest.raises(EvalError, match="graders: has no prompt grader to run"):
        load_eval(eval_path, write_file("rows.jsonl", ""))
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            "rubriclib",
            logging.WARNING,
            f"{eval_path}:2: gradres: unknown key; did you mean 'graders'? {IGNORED}",
        )
    ]


def test_our_shape_still_refuses_an_unknown_key(write_file: Callable[..., Path]) -> None:
    eval_path = write_file(
        "eval.yaml", "id: x\nname: n\nrows: []\ngraders: [{name: g, rubric: helpfulness}]\n"
    )
    with pytest.raises(EvalError) as caught:
        load_eval(eval_path)
    assert [str(p) for p in caught.value.problems] == [
        f"{eval_path}:1: id: unknown key; known keys: name, description, dataset, rows, judge, "
        "graders, gate, target"
    ]

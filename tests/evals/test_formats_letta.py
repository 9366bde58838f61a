"""letta-evals suites under `rubriclib eval`: the prompt letta would send (rubric_vars, a row's
own rubric), per-turn rows, today's letta keys, and what is refused before any request. The
same rows are run through letta-evals' own code in tests/integrations/test_letta.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from judge_server import JudgeServer

from rubriclib.cli import main
from rubriclib.errors import EvalError
from rubriclib.evals.formats import Condition, load_eval

PROMPT = "Q: {input}\nA: {submission}\nGT: {ground_truth}\nASCII only: {reference_ascii}\n"
SUITE = """\
name: letta-suite
dataset: dataset.jsonl
target: {kind: letta_code, model_handles: [openai/gpt-4.1-mini]}
graders:
  quality:
    kind: model_judge
    prompt_path: quality.txt
    model: letta-judge
reward: {kind: metric, metric_key: quality}
"""


def run(*arguments: str) -> Any:
    return CliRunner().invoke(main, ["eval", *arguments])


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def users(server: JudgeServer) -> list[str]:
    return [request["messages"][1]["content"] for request in server.requests]


@pytest.fixture
def suite(write_file: Callable[..., Path]) -> Callable[..., Path]:
    """Write quality.txt, the dataset and suite.yaml (SUITE with `changes` applied)."""

    def write(rows: list[dict[str, Any]], *changes: tuple[str, str], prompt: str = PROMPT) -> Path:
        write_file("quality.txt", prompt)
        write_file("dataset.jsonl", jsonl(rows))
        text = SUITE
        for old, new in changes:
            text = text.replace(old, new)
        return write_file("suite.yaml", text)

    return write


def test_rubric_vars_fill_the_prompt_as_letta_does(
    suite: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = suite(
        [
            {
                "input": "Say hi",
                "rubric_vars": {"reference_ascii": "{hi} 3"},
                "submission": "verdict:pass",
            },
            {
                "input": ["a", "b"],
                "ground_truth": "g",
                "rubric_vars": {"reference_ascii": 7},
                "submission": "verdict:fail",
            },
        ]
    )
    result = run(str(path), "--no-cache", "--format", "json")
    assert result.exit_code == 0, result.output
    assert sorted(users(endpoint)) == [
        "Q: Say hi\nA: verdict:pass\nGT: \nASCII only: {hi} 3\n",
        "Q: ['a', 'b']\nA: verdict:fail\nGT: g\nASCII only: 7\n",
    ]  # str.format by name: braces in values kept, no fences, str() of a list and a number
    system = endpoint.requests[0]["messages"][0]["content"]
    assert "set_grade_pass" in system and "data, never instructions" in system
    assert [request["model"] for request in endpoint.requests] == ["letta-judge"] * 2


def test_a_csv_dataset_carries_rubric_vars_as_json_text(
    suite: Callable[..., Path], write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = suite([], ("dataset.jsonl", "dataset.csv"))
    write_file(
        "dataset.csv",
        "input,ground_truth,rubric_vars,submission\n"
        '"  Say hi ",g,"{""reference_ascii"": ""x y""}",verdict:pass\n',
    )
    result = run(str(path), "--no-cache")
    assert result.exit_code == 0, result.output
    assert users(endpoint) == ["Q: Say hi\nA: verdict:pass\nGT: g\nASCII only: x y\n"]


def test_a_missing_variable_or_reserved_name_stops_the_run_before_any_request(
    suite: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = suite(
        [
            {"input": "q1", "submission": "s"},
            {
                "input": "q2",
                "rubric_vars": {"reference_ascii": "x", "input": "clash"},
                "submission": "s",
            },
            {"input": "q3", "rubric": "Own rubric: {submission}", "submission": "s"},
            {"input": "q4", "rubric": "Own {tone}", "submission": "s"},
        ],
        prompt=PROMPT + "Tone: {tone}\n",
    )
    for arguments in ([str(path), "--dry-run"], [str(path)]):
        result = run(*arguments)
        assert result.exit_code == 2
        data = path.parent / "dataset.jsonl"
        assert result.stderr.splitlines() == [
            f"rubriclib: error: {data}:1: rubric_vars.reference_ascii: grader quality needs it (its prompt uses {{reference_ascii}})",
            f"rubriclib: error: {data}:1: rubric_vars.tone: grader quality needs it (its prompt uses {{tone}})",
            f"rubriclib: error: {data}:2: rubric_vars.input: collides with letta's reserved {{input}}",
            f"rubriclib: error: {data}:4: rubric_vars.tone: grader quality needs it (its prompt uses {{tone}})",
        ]
    assert endpoint.requests == []


def test_a_prompt_letta_cannot_fill_is_refused_once_when_a_row_uses_it(
    suite: Callable[..., Path], endpoint: JudgeServer
) -> None:
    rows = [{"input": f"q{n}", "submission": "s"} for n in range(3)]
    path = suite(rows, prompt='Reply as {"score": 1}: {submission}')
    result = run(str(path), "--dry-run")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {path.parent / 'quality.txt'}: graders.quality: uses "
        '{"score"...}, which letta-evals reads as a placeholder: write {{ and }} for literal braces'
    ]
    path = suite([{"input": "q", "rubric": "Positional {}", "submission": "s"}])
    result = run(str(path), "--dry-run")
    assert result.exit_code == 2
    assert "rubric: uses {}: letta-evals fills placeholders by name only" in result.stderr
    own = [{"input": "q", "rubric": "Own: {submission}", "submission": "verdict:pass"}]
    path = suite(own, prompt='Reply as {"score": 1}')  # no row uses it: letta runs it too
    assert run(str(path), "--no-cache").exit_code == 0
    assert users(endpoint) == ["Own: verdict:pass"]


def test_a_rows_own_rubric_replaces_the_graders_prompt_and_says_so(
    suite: Callable[..., Path],
    write_file: Callable[..., Path],
    endpoint: JudgeServer,
    tmp_path: Path,
) -> None:
    write_file("rubrics/strict.txt", "Strict: is {submission} right for {input}?")
    path = suite(
        [
            {
                "id": "plain",
                "input": "q1",
                "rubric_vars": {"reference_ascii": "r"},
                "submission": "verdict:pass",
            },
            {
                "id": "inline",
                "input": "q2",
                "rubric": "Inline: {submission}",
                "submission": "verdict:pass",
            },
            {
                "id": "file",
                "input": "q3",
                "rubric_path": "rubrics/strict.txt",
                "submission": "verdict:fail",
            },
        ]
    )
    out = tmp_path / "results.jsonl"
    result = run(str(path), "--no-cache", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(users(endpoint)) == sorted(
        [
            "Q: q1\nA: verdict:pass\nGT: \nASCII only: r\n",
            "Inline: verdict:pass",
            "Strict: is verdict:fail right for q3?",
        ]
    )
    identity = {
        line["row"]: line["result"]["details"]["rubric"]
        for line in map(json.loads, out.read_text().splitlines())
    }
    data = path.parent / "dataset.jsonl"
    assert identity["plain"]["source"] == f"prompt:{path.parent / 'quality.txt'}"
    assert identity["inline"]["source"] == f"prompt:{data}:2"
    assert identity["file"]["source"] == f"file:{path.parent / 'rubrics' / 'strict.txt'}"
    assert len({entry["digest"] for entry in identity.values()}) == 3

    endpoint.requests.clear()
    before = out.read_text()
    write_file("rubrics/strict.txt", "Stricter: is {submission} right?")
    again = run(str(path), "--no-cache", "--out", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert users(endpoint) == ["Stricter: is verdict:fail right?"]  # only the changed rubric
    after = out.read_text()
    assert after.startswith(before)  # every line kept; the new one supersedes row file's
    [added] = [json.loads(line) for line in after.removeprefix(before).splitlines()]
    assert added["row"] == "file" and added["result"]["details"]["rubric"]["digest"] not in {
        entry["digest"] for entry in identity.values()
    }


def test_per_turn_rows_are_judged_turn_by_turn_and_scored_by_the_mean(
    suite: Callable[..., Path], endpoint: JudgeServer, tmp_path: Path
) -> None:
    path = suite(
        [
            {
                "id": "turns",
                "input": ["first?", "second?", "third?"],
                "ground_truth": ["one", "two", "three"],
                "rubric_vars": {"reference_ascii": "x"},
                "submission": ["verdict:pass", "verdict:fail", "verdict:pass"],
            }
        ]
    )
    out = tmp_path / "results.jsonl"
    result = run(str(path), "--no-cache", "--out", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    assert sorted(users(endpoint)) == sorted(
        f"Q: {q}\nA: {a}\nGT: {g}\nASCII only: x\n"
        for q, a, g in [
            ("first?", "verdict:pass", "one"),
            ("second?", "verdict:fail", "two"),
            ("third?", "verdict:pass", "three"),
        ]
    )
    [line] = [json.loads(text) for text in out.read_text().splitlines()]
    assert line["verdict"] == "fail" and line["result"]["score"] == pytest.approx(2 / 3)
    assert [turn["verdict"] for turn in line["result"]["details"]["turns"]] == [
        "pass",
        "fail",
        "pass",
    ]
    assert line["result"]["reason"].startswith("2/3 turns passed; turn 1: scripted set_grade_fail")
    assert line["result"]["details"]["judge"]["attempts"] == 3
    assert json.loads(result.output)["graders"][0]["mean_score"] == pytest.approx(2 / 3)


def test_a_per_turn_row_without_a_submission_per_turn_is_refused(
    suite: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = suite(
        [
            {"input": ["a", "b"], "ground_truth": ["x", "y"], "submission": "only one"},
            {"input": ["a", "b"], "ground_truth": ["x"], "submission": ["s", "t"]},
            {"input": ["a", 3], "submission": "s"},
            {"input": "a", "submission": ["s", "t"]},
        ]
    )
    result = run(str(path), "--dry-run")
    assert result.exit_code == 2 and endpoint.requests == []
    data = path.parent / "dataset.jsonl"
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {data}:1: submission: a per-turn row (2 turns in input and ground_truth) needs a list of 2 recorded submissions, one per turn; it has one text",
        f"rubriclib: error: {data}:2: ground_truth: has 1 item(s) but input has 2: per-turn grading needs one ground truth per turn",
        f"rubriclib: error: {data}:3: input: must be text or a list of texts; this list holds int",
        f"rubriclib: error: {data}:4: submission: is a list, which only a per-turn row takes (input and ground_truth as lists)",
    ]


def test_todays_letta_keys_are_known_and_listed_as_not_run(
    suite: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = suite(
        [{"input": "q", "rubric_vars": {"reference_ascii": "r"}, "submission": "verdict:pass"}],
        (
            "    model: letta-judge\n",
            "    model: letta-judge\n    system_prompt: You grade support answers.\n"
            "    extractor: custom_evaluators.py:last_json\n    extractor_config: {key: answer}\n"
            "  ascii:\n    kind: tool\n    function: ascii_printable_only\n"
            "  claude:\n    kind: model_judge\n    prompt: '{submission}'\n    provider: anthropic\n",
        ),
        (
            "reward:",
            "setup_script: setup.py:prepare\nsample_tags: [smoke]\nnum_runs: 1\ncleanup: true\n"
            "output: results/\nsandbox: {kind: modal, image: registry/evals:1}\nreward:",
        ),
    )
    ev = load_eval(path)
    assert [grader.name for grader in ev.graders] == ["quality"]
    assert ev.graders[0].rubric.system_prompt == "You grade support answers."
    assert [line.split(":")[0] for line in ev.skipped] == [
        "target",
        "setup_script",
        "sandbox",
        "sample_tags",
        "output",
        "cleanup",
        "graders.quality.extractor",
        "graders.ascii",
        "graders.claude",
    ]
    assert "provider anthropic" in ev.skipped[-1]
    result = run(str(path), "--no-cache")
    assert result.exit_code == 0, result.output
    system = endpoint.requests[0]["messages"][0]["content"]
    assert system.startswith("You grade support answers.\n\nJudge impartially")


def test_a_key_neither_tool_knows_is_still_a_typo(suite: Callable[..., Path]) -> None:
    path = suite([], ("reward:", "setup_scrpt: s.py:f\nreward:"), ("    model:", "    modle:"))
    with pytest.raises(EvalError) as caught:
        load_eval(path)
    messages = {problem.field: problem.message for problem in caught.value.problems}
    assert messages["setup_scrpt"] == "unknown key; did you mean 'setup_script'?"
    assert messages["graders.quality.modle"] == "unknown key; did you mean 'model'?"


def test_settings_rubriclib_cannot_run_are_refused_with_the_reason(
    suite: Callable[..., Path], write_file: Callable[..., Path]
) -> None:
    write_file(
        "correct.md",
        (Path(__file__).parents[2] / "examples" / "letta" / "correctness.md").read_text(),
    )
    path = suite(
        [],
        ("reward:", "num_runs: 3\nreward:"),
        ("    prompt_path: quality.txt", "    prompt_path: correct.md"),
    )
    with pytest.raises(EvalError) as caught:
        load_eval(path)
    messages = {problem.field: problem.message for problem in caught.value.problems}
    assert messages["num_runs"].startswith("a letta setting rubriclib cannot run: 3 runs")
    assert "function: rubriclib_grader.py:./correct.md" in messages["graders.quality.prompt_path"]


def test_the_old_gate_still_decides_the_exit(
    suite: Callable[..., Path], endpoint: JudgeServer
) -> None:
    path = suite(
        [
            {
                "input": f"q{n}",
                "rubric_vars": {"reference_ascii": "r"},
                "submission": "verdict:fail",
            }
            for n in range(2)
        ],
        (
            "reward: {kind: metric, metric_key: quality}",
            "gate: {metric_key: quality, metric: accuracy, op: gte, value: 50}",
        ),
    )
    assert load_eval(path).gate == [Condition("quality", "pass_rate", ">=", 0.5)]
    assert run(str(path), "--no-cache").exit_code == 1


def test_a_suite_naming_rubrics_through_our_grader_file_is_judged_by_eval(
    write_file: Callable[..., Path], endpoint: JudgeServer, library: Path
) -> None:
    """The suite letta-evals itself runs (`kind: tool`, `function: rubriclib_grader.py:REF`)
    is judged with the same rubric, turn by turn on a per-turn row as letta grades it; a tool
    grader of any other file is not run."""
    from rubriclib.integrations.letta import SHIM_TEXT

    write_file("rubriclib_grader.py", SHIM_TEXT)
    write_file("other_graders.py", "def keywords(sample, submission): ...\n")
    rows = [
        {"input": "q", "ground_truth": "r", "submission": "verdict:pass"},
        {
            "input": ["t1", "t2"],
            "ground_truth": ["g1", "g2"],
            "submission": ["verdict:pass", "verdict:pass"],
        },
    ]
    write_file("dataset.jsonl", jsonl(rows))
    suite = write_file(
        "suite.yaml",
        "name: s\ndataset: dataset.jsonl\ntarget: {kind: letta_code}\ngraders:\n"
        "  judged: {kind: tool, function: 'rubriclib_grader.py:keywords@^2'}\n"
        "  skipped: {kind: tool, function: 'other_graders.py:keywords'}\n"
        "reward: {kind: metric, metric_key: judged}\n",
    )
    ev = load_eval(suite)
    assert [(g.name, g.rubric.name, g.rubric.version) for g in ev.graders] == [
        ("judged", "keywords", "2.1.0")
    ]
    assert any(line.startswith("graders.skipped: kind tool") for line in ev.skipped)
    result = run(str(suite), "--no-cache", "--format", "json")
    assert result.exit_code == 0, result.output
    assert len(endpoint.requests) == 3
    assert any("## Task input [input]\n\n```\nt2\n```" in user for user in users(endpoint))


def test_the_example_suite_ships_the_grader_file_rubriclib_writes() -> None:
    from rubriclib.integrations.letta import SHIM_TEXT

    example = Path(__file__).parents[2] / "examples" / "letta" / "rubriclib_grader.py"
    assert example.read_text() == SHIM_TEXT


def test_a_row_with_no_turns_or_a_rubric_outside_the_suite_is_refused(
    suite: Callable[..., Path], write_file: Callable[..., Path], endpoint: JudgeServer
) -> None:
    """An empty turn list would make no judgment (a lost result); a rubric_path may not reach
    outside the suite's folder (its text would be sent to the judge)."""
    write_file("secret.txt", "not a rubric")
    suite_path = suite(
        [
            {"input": [], "ground_truth": [], "submission": []},
            {"input": "q", "rubric_path": "../secret.txt", "submission": "s"},
            {"input": "q", "rubric_path": "/etc/hostname", "submission": "s"},
        ]
    )
    result = run(str(suite_path), "--dry-run")
    assert result.exit_code == 2 and endpoint.requests == []
    data = suite_path.parent / "dataset.jsonl"
    outside = (
        "rubric_path: leaves the suite's folder; rubriclib reads a row's rubric file only inside it"
    )
    assert result.stderr.splitlines() == [
        f"rubriclib: error: {data}:1: input: is an empty list: a row has at least one turn",
        f"rubriclib: error: {data}:2: {outside}",
        f"rubriclib: error: {data}:3: {outside}",
    ]

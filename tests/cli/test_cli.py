"""Every command and exit code of the `rubriclib` console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from conftest import KEYWORD_RUBRIC, SECRET_KEY, VALID_RUBRIC, keyword_responder
from judge_server import JudgeServer, Reply, tool_reply

from rubriclib.cli import main


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_version_and_help(runner: CliRunner) -> None:
    assert runner.invoke(main, ["--version"]).output.strip() == "rubriclib, version 0.1.0"
    top = runner.invoke(main, ["--help"]).output
    assert (
        "Exit codes:" in top and "3    judge / test-goldens: judge errors and nothing else" in top
    )
    assert "130  interrupted" in top
    for command in ("list", "show", "validate", "render", "judge", "new", "test-goldens"):
        result = runner.invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "Example" in result.output, command


def test_list_marks_shadowed_builtins(runner: CliRunner, library: Path) -> None:
    (library / "helpfulness.md").write_text(
        KEYWORD_RUBRIC.replace("name: keywords", "name: helpfulness")
    )
    table = runner.invoke(main, ["list"])
    assert table.exit_code == 0
    assert "keywords" in table.output and "2.1.0" in table.output
    assert table.output.count("(shadows built-in)") == 1
    assert "(by pin only: helpfulness@1.4.0)" in table.output  # the shadowed built-in
    listed = json.loads(runner.invoke(main, ["list", "--json"]).output)
    rows = {row["name"]: row for row in listed if row["default"]}
    assert (
        rows["helpfulness"]["shadows_builtin"] is True and rows["helpfulness"]["version"] == "2.1.0"
    )
    assert rows["groundedness"] == {
        **rows["groundedness"],
        "source": "builtin:groundedness",
        "shadows_builtin": False,
    }


def test_show(runner: CliRunner) -> None:
    result = runner.invoke(main, ["show", "groundedness"])
    assert result.exit_code == 0
    assert "name: groundedness" in result.output and "goldens: 15" in result.output
    assert "# Groundedness" in result.output
    data = json.loads(runner.invoke(main, ["show", "groundedness", "--json"]).output)
    assert (
        data["version"] == "1.4.0"
        and data["goldens"] == 15
        and data["body"].startswith("# Groundedness")
    )


def test_show_names_the_citation_policy(runner: CliRunner, write_file: Callable[..., Path]) -> None:
    path = write_file("cited.md", VALID_RUBRIC.replace("goldens:", "citations: required\ngoldens:"))
    assert "citations: required" in runner.invoke(main, ["show", str(path)]).output
    data = json.loads(runner.invoke(main, ["show", str(path), "--json"]).output)
    assert data["citations"] == "required"
    plain = json.loads(runner.invoke(main, ["show", "preference", "--json"]).output)
    assert plain["citations"] == "optional"


def test_bad_reference_is_one_line_on_stderr_and_exit_2(runner: CliRunner) -> None:
    result = runner.invoke(main, ["show", "groundednes"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("rubriclib: error: groundednes: reference: no rubric named")
    assert "Traceback" not in result.stderr


def test_validate_exit_codes(runner: CliRunner, write_file: Callable[..., Path]) -> None:
    good = write_file("good.md", VALID_RUBRIC)
    bad = write_file("bad.md", VALID_RUBRIC.replace("1.2.3", "1.0").replace("pass-fail", "ternary"))
    ok = runner.invoke(main, ["validate", str(good), "groundedness"])
    assert ok.exit_code == 0 and "groundedness: ok (groundedness@1.4.0, 15 goldens)" in ok.output
    result = runner.invoke(main, ["validate", str(good), str(bad)])
    assert result.exit_code == 1
    assert f"{bad}:3: version: YAML read 1.0 as a number" in result.output
    assert f"{bad}:4: scale: 'ternary' is not allowed" in result.output
    assert runner.invoke(main, ["validate"]).exit_code == 2
    entries = json.loads(runner.invoke(main, ["validate", str(good), str(bad), "--json"]).output)
    assert entries[0] == {
        "ref": str(good),
        "valid": True,
        "goldens": 2,
        "rubric": {**entries[0]["rubric"], "name": "tiny", "version": "1.2.3"},
    }
    assert entries[1]["valid"] is False
    assert {
        "source": f"{bad}:4",
        "field": "scale",
        "message": "'ternary' is not allowed; input should be 'pass-fail', '1-5', 'pairwise' or 'labels'",
    } in entries[1]["problems"]


def test_render_reads_files_and_stdin(runner: CliRunner, write_file: Callable[..., Path]) -> None:
    answer = write_file("answer.txt", "From a file.")
    result = runner.invoke(
        main,
        ["render", "groundedness", "--output", f"@{answer}", "--context", "-", "--json"],
        input="From stdin.",
    )
    assert result.exit_code == 0
    messages = json.loads(result.output)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "```\nFrom a file.\n```" in messages[1]["content"]
    assert "## Source context [context]\n\n```\nFrom stdin.\n```" in messages[1]["content"]
    text = runner.invoke(main, ["render", "groundedness", "--output", "@@literal"])
    assert "=== system ===" in text.output and "```\n@literal\n```" in text.output


def test_render_missing_file_is_exit_2(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        main, ["render", "groundedness", "--output", f"@{tmp_path / 'none.txt'}"]
    )
    assert result.exit_code == 2 and "--output: cannot read" in result.stderr


def test_judge_exit_codes(runner: CliRunner, endpoint: JudgeServer) -> None:
    def judge(*arguments: str) -> Any:
        return runner.invoke(main, ["judge", "groundedness", "--context", "c", *arguments])

    passing = judge("--output", "verdict:pass")
    assert passing.exit_code == 0 and passing.output.startswith("PASS groundedness@1.4.0:")
    failing = judge("--output", "verdict:fail", "--json")
    assert failing.exit_code == 1 and json.loads(failing.output)["verdict"] == "fail"
    erroring = judge("--output", "verdict:text")
    assert erroring.exit_code == 3 and erroring.output.startswith("ERROR")
    model = judge("--output", "verdict:pass", "--model", "m-9")
    assert model.exit_code == 0 and endpoint.requests[-1]["model"] == "m-9"


def test_a_required_field_missing_is_an_error_without_a_request(
    runner: CliRunner, endpoint: JudgeServer
) -> None:
    result = runner.invoke(main, ["judge", "groundedness", "--output", "x", "--json"])
    assert result.exit_code == 3 and endpoint.requests == []
    reason = json.loads(result.output)["reason"]
    assert reason == "not judged: no context (the rubric groundedness requires it)"


def test_judge_without_key_is_exit_2(runner: CliRunner) -> None:
    result = runner.invoke(main, ["judge", "groundedness", "--output", "x"])
    assert result.exit_code == 2 and "OPENAI_API_KEY" in result.stderr


def test_new_writes_a_valid_rubric_and_never_overwrites(runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    result = runner.invoke(
        main, ["new", "house-style", "--dir", str(folder), "--description", "Style."]
    )
    assert result.exit_code == 0 and f"Wrote {folder / 'house-style.md'}" in result.output
    assert "test-goldens" in result.output
    written = (folder / "house-style.md").read_text()
    assert "version: 0.1.0" in written and written.count("PLACEHOLDER") >= 4
    assert written.rstrip().endswith("it is fail, with a reason that starts with the failure kind.")
    assert "set_grade" not in written  # the system message names the tools of the mode used
    assert runner.invoke(main, ["validate", str(folder / "house-style.md")]).exit_code == 0
    (folder / "house-style.md").write_text("my edits")
    again = runner.invoke(main, ["new", "house-style", "--dir", str(folder)])
    assert again.exit_code == 2 and "already exists" in again.stderr
    assert (folder / "house-style.md").read_text() == "my edits"
    bad = runner.invoke(main, ["new", "House Style", "--dir", str(folder)])
    assert bad.exit_code == 2 and "kebab-case" in bad.stderr


def test_new_from_a_builtin_copies_body_and_goldens(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(
        main, ["new", "strict-grounding", "--dir", str(tmp_path), "--from", "groundedness"]
    )
    assert result.exit_code == 0
    show = json.loads(
        runner.invoke(main, ["show", str(tmp_path / "strict-grounding.md"), "--json"]).output
    )
    assert show["name"] == "strict-grounding" and show["version"] == "0.1.0"
    assert show["goldens"] == 15 and show["body"].startswith("# Groundedness")
    clash = runner.invoke(
        main, ["new", "x", "--dir", str(tmp_path), "--from", "groundedness", "--scale", "1-5"]
    )
    assert clash.exit_code == 2


def test_new_on_the_1_to_5_scale(runner: CliRunner, tmp_path: Path) -> None:
    assert (
        runner.invoke(main, ["new", "scored", "--dir", str(tmp_path), "--scale", "1-5"]).exit_code
        == 0
    )
    show = json.loads(runner.invoke(main, ["show", str(tmp_path / "scored.md"), "--json"]).output)
    assert show["scale"] == "1-5" and show["pass_threshold"] == 4 and "## Levels" in show["body"]


def test_goldens_all_agree(runner: CliRunner, library: Path, endpoint: JudgeServer) -> None:
    result = runner.invoke(main, ["test-goldens", "keywords"])
    assert result.exit_code == 0, result.output
    assert "keywords@2.1.0  accuracy 100.0%" in result.output
    assert (
        "true pass 1, false pass 0, true fail 1, false fail 0, judge errors 0, flaky 0"
        in result.output
    )
    assert result.output.rstrip().endswith(
        "2 golden(s) x 1 trial(s); 0 golden(s) missed, 0 judge error(s)"
    )
    assert len(endpoint.requests) == 2


def test_goldens_disagreement_and_error_exit_1(
    runner: CliRunner, library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    extra = write_file(
        "extra.yaml",
        (
            "- {name: wrongly-passed, output: 'verdict:pass', expected: fail}\n"
            "- {name: judge-breaks, output: 'verdict:text', expected: pass}\n"
        ),
    )
    result = runner.invoke(
        main, ["test-goldens", "keywords", "--goldens", str(extra), "--format", "json"]
    )
    assert result.exit_code == 1
    report = json.loads(result.output)
    [rubric] = report["rubrics"]
    assert report["ok"] is False
    assert rubric["counts"] == {
        "true_pass": 1,
        "false_pass": 1,
        "true_fail": 1,
        "false_fail": 0,
        "errors": 1,
    }
    # over the three judgments with a verdict: the judge error is counted apart, never as
    # agreement nor as a miss
    assert rubric["accuracy"] == pytest.approx(2 / 3)
    assert rubric["judged"] == 3 and rubric["errors"] == 1 and rubric["misses"] == 1
    assert report["status"] == "regression"
    goldens = {golden["name"]: golden for golden in rubric["goldens"]}
    assert goldens["wrongly-passed"]["status"] == "miss"
    assert goldens["judge-breaks"]["status"] == "error"
    assert (
        goldens["judge-breaks"]["verdicts"] == ["error"] and not goldens["judge-breaks"]["agreed"]
    )
    assert goldens["wrongly-passed"]["results"][0]["details"]["rubric"]["version"] == "2.1.0"


def test_goldens_trials_concurrency_and_flaky(
    runner: CliRunner, library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    endpoint.responder = keyword_responder(delay=0.05)
    extra = write_file("extra.yaml", "- {name: coin, output: 'verdict:flip', expected: pass}\n")
    result = runner.invoke(
        main,
        [
            "test-goldens",
            "keywords",
            "--goldens",
            str(extra),
            "--trials",
            "4",
            "--concurrency",
            "2",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 1
    assert len(endpoint.requests) == 3 * 4
    assert endpoint.max_in_flight == 2
    rubric = json.loads(result.output)["rubrics"][0]
    assert rubric["flaky"] == ["coin"]
    assert sorted(rubric["goldens"][2]["verdicts"]) == ["fail", "fail", "pass", "pass"]


FLIPPING_GOLDENS = (
    "- {name: two-to-one, output: 'verdicts:ppf', expected: pass}\n"
    "- {name: one-to-two, output: 'verdicts:pff', expected: fail}\n"
)


def test_goldens_flip_rates_in_table_json_and_junit(
    runner: CliRunner, library: Path, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    # 4 goldens x 3 trials: says-pass and says-fail steady, the extra two split 2-1 each
    extra = write_file("extra.yaml", FLIPPING_GOLDENS)
    command = ["test-goldens", "keywords", "--goldens", str(extra), "--trials", "3"]
    table = runner.invoke(main, command)
    assert table.exit_code == 1 and len(endpoint.requests) == 12
    lines = table.output.splitlines()
    assert lines[1:3] == [
        "  across 3 trials: flipped 2 of 4 golden(s) (50.0%), disagreement 16.7% "
        "(2 of 12 verdict(s) off their golden's majority)",
        "  flipped across trials: two-to-one, one-to-two",
    ]
    document = json.loads(runner.invoke(main, [*command, "--format", "json"]).output)
    expected = {
        "flipped": 2,
        "compared": 4,
        "flipped_share": 0.5,
        "disagreement": 2 / 12,
        "differing": 2,
        "judgments": 12,
    }
    assert document["flip_rates"] == document["rubrics"][0]["flip_rates"] == expected
    flipped = {golden["name"]: golden["flipped"] for golden in document["rubrics"][0]["goldens"]}
    assert flipped == {
        "says-pass": False,
        "says-fail": False,
        "two-to-one": True,
        "one-to-two": True,
    }
    junit = ElementTree.fromstring(runner.invoke(main, [*command, "--format", "junit"]).output)
    properties = {
        found.get("name"): found.get("value")
        for found in junit.findall("./testsuite/properties/property")
    }
    assert {name: properties[name] for name in ("trials", "flipped", "compared")} == {
        "trials": "3",
        "flipped": "2",
        "compared": "4",
    }
    assert properties["flipped_share"] == "0.5000" and properties["disagreement"] == "0.1667"
    overall = {
        found.get("name"): found.get("value") for found in junit.findall("./properties/property")
    }
    assert overall["flipped"] == "2" and overall["disagreement"] == "0.1667"


def test_goldens_junit_and_out_file(
    runner: CliRunner, library: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "report.xml"
    result = runner.invoke(
        main, ["test-goldens", "keywords", "--trials", "2", "--format", "junit", "--out", str(out)]
    )
    assert result.exit_code == 0 and f"(report: {out})" in result.output
    suite = ElementTree.parse(out).getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "keywords@2.1.0" and suite.get("tests") == "4"
    names = [case.get("name") for case in suite.iter("testcase")]
    assert names == [
        "says-pass [trial 1]",
        "says-pass [trial 2]",
        "says-fail [trial 1]",
        "says-fail [trial 2]",
    ]


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (["test-goldens", "nope"], "no rubric named 'nope'"),
        (["test-goldens", "keywords", "--goldens", "/nonexistent.yaml"], "file: does not exist"),
        (["test-goldens", "keywords", "--trials", "0"], "Invalid value for '--trials'"),
    ],
)
def test_goldens_input_errors_exit_2_before_any_call(
    runner: CliRunner, library: Path, endpoint: JudgeServer, arguments: list[str], fragment: str
) -> None:
    result = runner.invoke(main, arguments)
    assert result.exit_code == 2 and fragment in result.stderr
    assert endpoint.requests == []


def test_goldens_missing_key_exit_2(runner: CliRunner, library: Path) -> None:
    result = runner.invoke(main, ["test-goldens", "keywords"])
    assert result.exit_code == 2 and "no API key" in result.stderr


def console_script() -> str:
    return str(Path(sys.executable).parent / "rubriclib")


@pytest.mark.parametrize("report_format", ["table", "json", "junit"])
def test_installed_console_script_against_the_server(
    library: Path, endpoint: JudgeServer, report_format: str
) -> None:
    env = {**os.environ, "OPENAI_BASE_URL": endpoint.url, "OPENAI_API_KEY": SECRET_KEY}
    run = subprocess.run(
        [
            console_script(),
            "test-goldens",
            "keywords",
            "groundedness",
            "--trials",
            "2",
            "--format",
            report_format,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stderr == ""  # no progress bar when stderr is not a terminal
    assert len(endpoint.requests) == (2 + 15) * 2
    assert SECRET_KEY not in run.stdout
    if report_format == "json":
        report = json.loads(run.stdout)
        assert [r["rubric"]["name"] for r in report["rubrics"]] == ["keywords", "groundedness"]
    elif report_format == "junit":
        assert ElementTree.fromstring(run.stdout).tag == "testsuites"
    else:
        assert "keywords@2.1.0" in run.stdout and "groundedness@1.4.0" in run.stdout
    # Built-in goldens are not keyword-scripted, so some miss: exit 1, never a crash.
    assert run.returncode == 1


def test_installed_console_script_missing_key() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    run = subprocess.run(
        [console_script(), "test-goldens"], env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip() == (
        "rubriclib: error: no API key: set OPENAI_API_KEY, "
        "or OPENAI_BASE_URL for a server that needs none"
    )


def test_goldens_report_exact_score_agreement_and_error(
    runner: CliRunner, endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rubric = write_file(
        "scored.md",
        (
            "---\nname: scored\nversion: 1.0.0\nscale: 1-5\npass_threshold: 4\ndescription: d\n"
            "goldens:\n"
            "  - {name: exact, output: 'score:5', expected: pass, expected_score: 5}\n"
            "  - {name: off-by-two, output: 'score:2', expected: pass, expected_score: 4}\n"
            "  - {name: unscored, output: 'score:1', expected: fail}\n"
            "---\nUse `set_grade_score`.\n"
        ),
    )

    def respond(body: dict[str, Any]) -> Reply:
        score = int(body["messages"][1]["content"].split("score:")[1][0])
        return tool_reply("set_grade_score", {"score": score, "reason": "r"})

    endpoint.responder = respond
    result = runner.invoke(main, ["test-goldens", str(rubric), "--format", "json"])
    assert result.exit_code == 1  # off-by-two scored 2 -> fail, but pass was expected
    [report] = json.loads(result.output)["rubrics"]
    assert report["exact_score_agreement"] == 0.5
    assert report["mean_absolute_error"] == 1.0
    assert report["counts"]["false_fail"] == 1
    table = runner.invoke(main, ["test-goldens", str(rubric)]).output
    assert "exact score 50.0%  MAE 1.00" in table


def test_commands_that_do_not_judge_never_import_openai_or_aiohttp() -> None:
    probe = (
        "import sys; from click.testing import CliRunner; from rubriclib.cli import main; "
        "r = CliRunner(); [r.invoke(main, a) for a in (['list'], ['show', 'groundedness'], "
        "['validate', 'groundedness'], ['render', 'groundedness', '--output', 'x'])]; "
        "print(sorted(m for m in ('openai', 'aiohttp') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"


def test_a_command_loads_only_its_own_module() -> None:
    """`rubriclib list` imports the module that registers it, not `eval`'s or `align`'s."""
    probe = (
        "import sys; from click.testing import CliRunner; from rubriclib.cli import main; "
        "CliRunner().invoke(main, ['list']); "
        "print(sorted(m for m in sys.modules if m.startswith('rubriclib.cli.')))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == str(
        [
            "rubriclib.cli.app",
            "rubriclib.cli.judged_inputs",
            "rubriclib.cli.options",
            "rubriclib.cli.rubrics",
            "rubriclib.cli.rubrics.library",
        ]
    )


def test_every_command_is_found_by_its_module() -> None:
    """`COMMAND_MODULES` names exactly the commands the modules register, each by its own
    module, so a new command cannot be missing from it (nor a removed one linger)."""
    from rubriclib.cli.app import COMMAND_MODULES

    names = main.list_commands(click.Context(main))
    assert names == sorted(COMMAND_MODULES)
    for name in names:
        command = main.commands[name]
        assert command.callback is not None
        assert command.callback.__module__ == f"rubriclib.cli.{COMMAND_MODULES[name]}"


def test_import_and_help_load_nothing_heavy() -> None:
    """`import rubriclib` and `--help` stay at the cost of click: no pydantic models built,
    no YAML or openai loaded, until a command needs them."""
    probe = (
        "import sys; import rubriclib; from click.testing import CliRunner; "
        "from rubriclib.cli import main; CliRunner().invoke(main, ['--help']); "
        "print(sorted(m for m in ('openai', 'aiohttp', 'yaml', 'frontmatter', 'semver', "
        "'asyncio', 'pydantic.main') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"

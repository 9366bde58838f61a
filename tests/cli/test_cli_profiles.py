"""`rubriclib calibrate --fit` writes a judge profile from probability answers on the goldens
(or labels), and a Judge with that model applies it, over real HTTP to the scripted server;
refusals come before any request, and a profile for another rubric version is never applied."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from conftest import SECRET_KEY
from judge_server import JudgeServer, Reply, completion

from rubriclib import load_rubric
from rubriclib.cli import main
from rubriclib.judging.judge import Judge

GOLDENS = "\n".join(
    f'  - {{name: g{n}, output: "{"clear" if n % 2 else "murky"} {n}", expected: '
    f"{'pass' if n % 2 else 'fail'}}}"
    for n in range(10)
)
RUBRIC = f"""\
---
name: clarity
version: 1.0.0
scale: pass-fail
description: Whether the output is clear.
goldens:
{GOLDENS}
checklist:
  - id: murky
    question: Is the output murky?
    fail_if: yes
  - id: always
    question: Does the output use any word at all?
    fail_if: no
---
# Clarity
"""
"""`always` is a biased item: its failing answer (no) wins for every candidate, so the rule
fails every golden; `murky` tells them apart."""


def answer(body: dict[str, Any]) -> Reply:
    user = body["messages"][1]["content"]
    murky = "murky" in user.split("## Question")[0]
    p_yes = 0.3 if "any word" in user else (0.9 if murky else 0.1)
    top = [
        {"token": "yes", "logprob": math.log(p_yes)},
        {"token": "no", "logprob": math.log(1 - p_yes)},
    ]
    reply = completion(content="yes" if p_yes >= 0.5 else "no")
    reply["choices"][0]["logprobs"] = {
        "content": [{"token": "x", "logprob": 0.0, "top_logprobs": top}]
    }
    return Reply(body=reply)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge_server: JudgeServer) -> Path:
    (tmp_path / "rubriclib.toml").write_text("")
    (tmp_path / "clarity.md").write_text(RUBRIC)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    monkeypatch.setenv("RUBRICLIB_MODEL", "small-judge")
    judge_server.responder = answer
    return tmp_path


def cli(*arguments: str) -> Any:
    return CliRunner().invoke(main, list(arguments))


FIT = ["calibrate", "./clarity.md", "--checklist-answers", "probability", "--fit", "--no-cache"]


def test_fit_on_the_goldens_writes_a_profile_that_runs_with_that_model_apply(
    project: Path, judge_server: JudgeServer
) -> None:
    fitted = cli(*FIT)
    assert fitted.exit_code == 0, fitted.output
    path = project / "rubriclib-profiles" / "small-judge" / "clarity@1.0.0.yaml"
    assert f"wrote the judge profile {path}: cross-validated accuracy 100% on 10 row(s)" in (
        fitted.output
    )
    written = yaml.safe_load(path.read_text())
    rubric = load_rubric("./clarity.md")
    assert written["rubric"] == {"name": "clarity", "version": "1.0.0", "digest": rubric.digest}
    assert written["model"] == "small-judge" and set(written["offsets"]) == {"always"}
    assert written["measured"]["cross_validated_accuracy"] == 1.0
    assert written["measured"]["labels"] == "goldens"
    assert "item_weights" not in written and written["measured"]["item_weights"] is False

    judge = Judge(
        "small-judge", judge_server.url, SECRET_KEY, mode="checklist", answers="probability"
    )
    result = judge.grade(rubric, "clear 11")
    assert result.verdict == "pass"  # the rule would fail it: `always` says no
    assert result.details["profile"]["path"] == str(path)
    assert result.details["profile"]["rule"] == "fail"
    assert len(result.details["profile"]["digest"]) == 64
    assert result.reason.startswith("pass by the judge profile clarity@1.0.0.yaml (p(pass) ")
    other = Judge(
        "other-model", judge_server.url, SECRET_KEY, mode="checklist", answers="probability"
    )
    assert other.grade(rubric, "clear 11").verdict == "fail"  # no profile for that model


def test_twenty_goldens_fit_a_weight_per_item_and_the_judge_applies_it(
    project: Path, judge_server: JudgeServer, caplog: pytest.LogCaptureFixture
) -> None:
    twenty = "\n".join(
        f'  - {{name: g{n}, output: "{"clear" if n % 2 else "murky"} {n}", expected: '
        f"{'pass' if n % 2 else 'fail'}}}"
        for n in range(20)
    )
    (project / "clarity.md").write_text(RUBRIC.replace(GOLDENS, twenty))
    fitted = cli(*FIT)
    assert fitted.exit_code == 0, fitted.output
    assert "on 20 row(s)" in fitted.output and "items weighted each" in fitted.output
    path = project / "rubriclib-profiles" / "small-judge" / "clarity@1.0.0.yaml"
    written = yaml.safe_load(path.read_text())
    assert set(written["item_weights"]) == {"murky", "always"}
    assert written["measured"]["item_weights"] is True
    judge = Judge(
        "small-judge", judge_server.url, SECRET_KEY, mode="checklist", answers="probability"
    )
    rubric = load_rubric("./clarity.md")
    assert judge.grade(rubric, "clear 21").verdict == "pass"
    assert judge.grade(rubric, "murky 22").verdict == "fail"
    path.write_text(path.read_text().replace("item_weights:\n", "item_weights:\n  ghost: 1.0\n"))
    edited = Judge(
        "small-judge", judge_server.url, SECRET_KEY, mode="checklist", answers="probability"
    )
    with caplog.at_level(logging.WARNING, logger="rubriclib"):
        assert "profile" not in edited.grade(rubric, "clear 23").details  # an unknown item
    assert any("is not a judge profile" in record.getMessage() for record in caplog.records)


def test_a_profile_for_another_rubric_version_is_said_and_never_applied(
    project: Path, judge_server: JudgeServer, caplog: pytest.LogCaptureFixture
) -> None:
    assert cli(*FIT).exit_code == 0
    (project / "clarity.md").write_text(RUBRIC.replace("Is the output murky?", "Is it murky?"))
    judge = Judge(
        "small-judge", judge_server.url, SECRET_KEY, mode="checklist", answers="probability"
    )
    with caplog.at_level(logging.WARNING, logger="rubriclib"):
        result = judge.grade(load_rubric("./clarity.md"), "clear 11")
        judge.grade(load_rubric("./clarity.md"), "clear 12")
    assert result.verdict == "fail" and "profile" not in result.details
    said = [r.getMessage() for r in caplog.records if "profile not applied" in r.getMessage()]
    assert len(said) == 1 and "fitted on another version of clarity" in said[0]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["calibrate", "./clarity.md", "--fit", "--no-cache"], "--fit: fits probability answers"),
        (["calibrate", "./clarity.md", "--no-cache"], "--labels: a labels file is required"),
        (
            ["calibrate", "scored.md", "--checklist-answers", "probability", "--fit"],
            "--fit: scored is 1-5; profiles are for pass-fail",
        ),
    ],
)
def test_fit_refuses_before_any_request(
    project: Path, judge_server: JudgeServer, arguments: list[str], said: str
) -> None:
    scored = RUBRIC.replace("scale: pass-fail", "scale: 1-5\npass_threshold: 4")
    (project / "scored.md").write_text(scored.replace("name: clarity", "name: scored"))
    result = cli(*[a if a != "scored.md" else "./scored.md" for a in arguments])
    assert result.exit_code == 2 and said in result.output, result.output
    assert judge_server.requests == []


def test_fit_keeps_an_existing_profile_unless_forced(
    project: Path, judge_server: JudgeServer
) -> None:
    assert cli(*FIT).exit_code == 0
    asked = len(judge_server.requests)
    [profile] = (project / "rubriclib-profiles").rglob("*.yaml")
    fitted = profile.read_bytes()
    again = cli(*FIT)
    assert again.exit_code == 2 and "exists; pass --force to replace it" in again.output
    assert len(judge_server.requests) == asked and profile.read_bytes() == fitted
    assert cli(*FIT, "--force").exit_code == 0


def test_the_calibration_report_is_still_printed_with_fit(project: Path) -> None:
    result = cli(*FIT, "--format", "json")
    report = json.loads(result.output[: result.output.rindex("}") + 1])
    assert report["accuracy"] == 0.5 and report["labels"] == "goldens"  # the rule fails all

"""Checklist items answered as probabilities (`Judge(answers="probability")`): one plain-text
word per item, p(yes) read from the top logprobs, over real HTTP to the scripted server; an
endpoint without logprobs, one that refuses them, an abstaining judge, the cache."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, snippet
from judge_server import JudgeServer, Reply, completion, error_reply

from rubriclib import Rubric, load_rubric
from rubriclib.cli import main
from rubriclib.errors import JudgeConfigError
from rubriclib.judging.asking.probability_answers import yes_probability
from rubriclib.judging.judge import Judge

FACTS = """\
---
name: grounded-facts
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing and answers the question.
requires: [input, context]
citations: required
checklist:
  - id: invented
    question: Does the output state a number, date or name that the context does not give?
    fail_if: yes
    requires: [context]
  - id: answers
    question: Does the output answer the question the input asks?
    fail_if: no
    requires: [input]
---
# Grounded facts

A date or name the context gives is supported; any other is invented.
"""


def first_token(token: str, alternatives: dict[str, float] | None) -> dict[str, Any]:
    """A reply whose one generated token is `token`, with these top alternatives (probability
    by token text), or no logprobs at all when `alternatives` is None."""
    body = completion(content=token)
    if alternatives is not None:
        top = [{"token": text, "logprob": math.log(p)} for text, p in alternatives.items()]
        content = [{"token": token, "logprob": top[0]["logprob"], "top_logprobs": top}]
        body["choices"][0]["logprobs"] = {"content": content}
    return body


def said(token: str, alternatives: dict[str, float] | None) -> Reply:
    return Reply(body=first_token(token, alternatives))


@pytest.fixture
def facts(write_file: Callable[..., Path]) -> Rubric:
    return load_rubric(str(write_file("grounded-facts.md", FACTS)))


def probability_judge(server: JudgeServer, **options: Any) -> Judge:
    settings: dict[str, Any] = {"timeout": 5.0, "backoff_base": 0.001, "backoff_max": 0.01}
    return Judge(
        "judge-model",
        server.url,
        SECRET_KEY,
        mode="checklist",
        answers="probability",
        **(settings | options),
    )


def test_every_variant_of_each_word_is_summed_and_normalised() -> None:
    reply = first_token(" Yes", {" Yes": 0.5, "yes": 0.1, "YES": 0.05, "\u0120No": 0.2, "The": 0.1})
    p_yes, mass, logprobs = yes_probability(reply)  # type: ignore[misc]
    assert p_yes == pytest.approx(0.65 / 0.85) and mass == pytest.approx(0.85) and logprobs


def test_an_answer_with_little_yes_no_mass_is_an_abstention() -> None:
    reply = first_token("The", {"The": 0.9, "yes": 0.03, "no": 0.02})
    assert yes_probability(reply) == (
        "abstained: yes/no mass 0.050 among the top tokens (it wrote 'The')"
    )


def test_without_logprobs_the_word_written_is_the_answer() -> None:
    assert yes_probability(first_token("No.", None)) == (0.0, 1.0, False)
    assert yes_probability(first_token("Maybe", None)) == (
        "abstained: the reply 'Maybe' is not yes or no"
    )
    assert yes_probability({"choices": []}) == "the response had no choices"


def test_each_item_asks_for_one_plain_word_with_logprobs_at_temperature_0(
    judge_server: JudgeServer, facts: Rubric
) -> None:
    judge_server.script(said("No", {"No": 0.7, "Yes": 0.3}), said("Yes", {"Yes": 0.8, "No": 0.2}))
    judge = probability_judge(judge_server, temperature=0.7, max_tokens=1024)
    result = judge.grade(facts, "In 1969.", "When?", "It was 1969.")
    assert result.verdict == "pass"
    for body in judge_server.requests:
        assert "tools" not in body and "tool_choice" not in body
        assert body["logprobs"] is True and body["top_logprobs"] == 20
        assert body["temperature"] == 0 and body["max_tokens"] == 1
        assert body["messages"][0]["content"].endswith("Reply with one word: yes or no.")
    first, second = (body["messages"] for body in judge_server.requests)
    assert "Does the output state a number" in first[1]["content"]  # in checklist order
    assert "Does the output answer the question" in second[1]["content"]
    invented, answers = result.details["checklist"]
    assert invented.model_dump() | {"reason": None} == {
        "id": "invented",
        "answer": "no",
        "reason": None,
        "attempts": 1,
        "cached": False,
        "p": pytest.approx(0.7),
        "p_yes": pytest.approx(0.3),
        "mass": pytest.approx(1.0),
        "logprobs": True,
    }
    assert invented["reason"] == "p(yes) 0.300 (yes/no mass 1.000)"
    assert answers["answer"] == "yes" and answers["p_yes"] == pytest.approx(0.8)
    assert result.details["judge"]["mode"] == "text"


def test_items_share_every_byte_but_the_question_which_comes_last(
    judge_server: JudgeServer, facts: Rubric
) -> None:
    judge_server.responder = lambda body: said("no", {"no": 1.0})
    probability_judge(judge_server).grade(facts, "In 1969.", "When?", "It was 1969.")
    first, second = (body["messages"] for body in judge_server.requests)
    assert first[0] == second[0]
    one, other = first[1]["content"], second[1]["content"]
    shared = one[: one.index("## Question")]
    assert other.startswith(shared) and "## Candidate output [output]" in shared
    assert shared.startswith("# Grounded facts\n\nA date or name the context gives is supported")
    assert "## Source context [context]" in shared and "## Task input [input]" in shared
    assert one.rstrip().endswith("Answer yes or no.")


def test_the_item_fails_when_its_failing_answer_is_at_least_as_likely(
    judge_server: JudgeServer, facts: Rubric
) -> None:
    judge_server.script(said("Yes", {"Yes": 0.5, "No": 0.5}), said("Yes", {"Yes": 1.0}))
    result = probability_judge(judge_server).grade(facts, "In 1970.", "When?", "In 1969.")
    assert result.verdict == "fail"  # a tie never passes
    assert result.details["checklist"][0]["answer"] == "yes"


def test_a_failing_answer_needs_no_citation_even_when_the_rubric_requires_them(
    judge_server: JudgeServer, facts: Rubric
) -> None:
    judge_server.script(said("Yes", {"Yes": 0.9, "No": 0.1}), said("Yes", {"Yes": 1.0}))
    result = probability_judge(judge_server).grade(facts, "In 1970.", "When?", "In 1969.")
    assert result.verdict == "fail" and len(judge_server.requests) == 2  # no citation turn
    assert "citations" not in result.details["checklist"][0]


def test_an_abstaining_item_gets_one_corrective_turn_then_is_an_error(
    judge_server: JudgeServer, facts: Rubric
) -> None:
    judge_server.responder = lambda body: said("The", {"The": 0.95, "yes": 0.01})
    result = probability_judge(judge_server).grade(facts, "In 1969.", "When?", "In 1969.")
    assert result.verdict == "error"
    asked_again = judge_server.requests[1]["messages"]
    assert asked_again[-2:] == [
        {"role": "assistant", "content": "The"},
        {"role": "user", "content": "Please reply with one word: yes or no."},
    ]
    reason = result.details["checklist"][0]["reason"]
    assert reason.startswith("no valid verdict after a corrective turn: abstained: yes/no mass")


def test_an_endpoint_without_logprobs_gives_the_word_says_so_once_and_is_remembered(
    judge_server: JudgeServer, facts: Rubric, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    judge_server.responder = lambda body: said("Yes", None)
    judge = probability_judge(judge_server, capabilities=tmp_path / "caps")
    with caplog.at_level(logging.WARNING, logger="rubriclib"):
        result = judge.grade(facts, "In 1969.", "When?", "In 1969.")
    invented = result.details["checklist"][0]
    assert invented["p_yes"] == 1.0 and invented["logprobs"] is False
    assert result.verdict == "fail"  # `invented` answered yes
    warnings = [r.getMessage() for r in caplog.records if "no logprobs" in r.getMessage()]
    assert len(warnings) == 1 and "fall back to the word" in warnings[0]
    assert "logprobs" in judge_server.requests[0] and "logprobs" not in judge_server.requests[1]
    later = probability_judge(judge_server, capabilities=tmp_path / "caps")
    assert "no_logprobs" in later.quirks


def test_an_endpoint_that_refuses_logprobs_is_asked_again_without_them(
    judge_server: JudgeServer, facts: Rubric
) -> None:
    judge_server.script(
        error_reply(400, "logprobs is not supported with this model"),
        said("no", None),
        said("yes", None),
    )
    judge = probability_judge(judge_server)
    result = judge.grade(facts, "In 1969.", "When?", "In 1969.")
    assert result.verdict == "pass" and "no_logprobs" in judge.quirks
    assert [("logprobs" in body) for body in judge_server.requests] == [True, False, False]


def test_a_rerun_is_answered_by_the_cache_with_the_probabilities(
    judge_server: JudgeServer, facts: Rubric, tmp_path: Path
) -> None:
    judge_server.script(said("No", {"No": 0.6, "Yes": 0.4}), said("Yes", {"Yes": 0.9, "no": 0.1}))
    first = probability_judge(judge_server, cache=tmp_path / "c").grade(facts, "a", "b", "c")
    again = probability_judge(judge_server, cache=tmp_path / "c").grade(facts, "a", "b", "c")
    assert len(judge_server.requests) == 2
    assert [entry["cached"] for entry in again.details["checklist"]] == [True, True]
    kept = ("answer", "p", "p_yes", "mass", "logprobs")
    for fresh, cached in zip(first.details["checklist"], again.details["checklist"], strict=True):
        assert {k: cached[k] for k in kept} == {k: fresh[k] for k in kept}


def test_probability_answers_belong_to_checklist_mode(judge_server: JudgeServer) -> None:
    with pytest.raises(JudgeConfigError, match="use it with mode='checklist'"):
        Judge("m", judge_server.url, "k", answers="probability")
    with pytest.raises(
        JudgeConfigError, match="answers must be one of 'tool', 'probability', 'one-call'"
    ):
        Judge("m", judge_server.url, "k", mode="checklist", answers="logits")  # type: ignore[arg-type]


def cli(*arguments: str) -> Any:
    return CliRunner().invoke(main, list(arguments))


def answering(body: dict[str, Any]) -> Reply:
    """A judge that answers yes to every question about a candidate saying `yes`."""
    candidate = body["messages"][1]["content"].split("## Candidate output [output]")[1]
    word = "Yes" if "yes" in candidate.split("## Question")[0] else "No"
    return said(word, {word: 0.9, "Maybe": 0.1})


@pytest.fixture
def endpoint(judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    judge_server.responder = answering
    return judge_server


def test_checklist_answers_probability_on_the_command_line_implies_checklist_mode(
    endpoint: JudgeServer, write_file: Callable[..., Path]
) -> None:
    facts = str(write_file("facts.md", FACTS))
    asked = ["--input", "q", "--context", "c", "--no-cache", "--json"]
    result = cli(
        "judge", facts, "--output", "says yes", "--checklist-answers", "probability", *asked
    )
    assert result.exit_code == 1, result.output  # invented: yes fails; answers: yes passes
    checklist = json.loads(result.output)["details"]["checklist"]
    assert [(entry["answer"], entry["p_yes"]) for entry in checklist] == [
        ("yes", 1.0),
        ("yes", 1.0),
    ]
    assert all("tools" not in body and body["max_tokens"] == 1 for body in endpoint.requests)
    wrong = cli("judge", facts, "--output", "x", "--checklist-answers", "logits", *asked)
    assert (
        wrong.exit_code == 2
        and "'logits' is not one of 'tool', 'probability', 'one-call'" in wrong.output
    )


EVAL = """\
name: facts
judge: {model: judge-model}
rows:
  - {id: good, input: q, context: c, output: "fine"}
  - {id: bad, input: q, context: c, output: "yes, invented"}
graders:
  - name: facts
    rubric: ./facts.md
"""


def test_a_grader_asks_for_probability_answers_and_resume_keeps_its_mode(
    endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("facts.md", FACTS.replace("citations: required\n", ""))
    marked = write_file("marked.yaml", EVAL + "    answers: probability\n")
    out = tmp_path / "out.jsonl"
    assert cli("eval", str(marked), "--out", str(out), "--no-cache").exit_code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["row"]: line["verdict"] for line in lines} == {"good": "fail", "bad": "fail"}
    assert all("p_yes" in line["result"]["details"]["checklist"][0] for line in lines)
    assert len(endpoint.requests) == 4 and all(b["logprobs"] for b in endpoint.requests)
    plain = write_file("plain.yaml", EVAL)
    endpoint.responder = lambda body: Reply(body=completion([("answer", TOOL_ANSWER)]))
    again = cli("eval", str(plain), "--out", str(out), "--resume", "--no-cache", "--checklist")
    assert again.exception is None or isinstance(again.exception, SystemExit), again.output
    assert len(endpoint.requests) == 8  # answered by tool now: nothing kept, all asked again


TOOL_ANSWER = {"reason": "r", "answer": "yes"}


def test_probability_answers_for_a_rubric_without_a_checklist_are_refused(
    endpoint: JudgeServer, write_file: Callable[..., Path], library: Path
) -> None:
    marked = write_file("kw.yaml", EVAL.replace("./facts.md", "keywords"))
    marked.write_text(marked.read_text() + "    answers: probability\n")
    result = cli("eval", str(marked), "--no-cache")
    assert result.exit_code == 2
    assert f"{marked}:9: graders[0].answers: the rubric keywords has no" in result.output
    assert endpoint.requests == []


def test_offline_batch_files_carry_the_probability_requests(
    write_file: Callable[..., Path], tmp_path: Path
) -> None:
    write_file("facts.md", FACTS)
    eval_file = write_file("eval.yaml", EVAL)
    to, output, results = tmp_path / "req.jsonl", tmp_path / "out.jsonl", tmp_path / "res.jsonl"
    flags = ["--checklist-answers", "probability"]
    prepared = cli("batch", "prepare", str(eval_file), "--to", str(to), *flags)
    assert prepared.exit_code == 0, prepared.output
    requests = [json.loads(line) for line in to.read_text().splitlines()]
    assert len(requests) == 4 and all(r["body"]["top_logprobs"] == 20 for r in requests)
    answers = [
        {
            "custom_id": r["custom_id"],
            "response": {"status_code": 200, "body": answering(r["body"]).body},
        }
        for r in requests
    ]
    output.write_text("".join(json.dumps(line) + "\n" for line in answers))
    collected = cli(
        "batch", "collect", str(eval_file), "--from", str(output), "--out", str(results), *flags
    )
    assert collected.exit_code == 0, collected.output
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(line["row"], line["verdict"]) for line in lines] == [("good", "fail"), ("bad", "fail")]


def test_the_docs_example_prints_each_item_with_its_p_yes(
    endpoint: JudgeServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RUBRICLIB_MODEL", "judge-model")
    endpoint.responder = lambda body: said(" No", {" No": 0.8, "Yes": 0.2})
    exec(snippet("probability-answers"), {})  # noqa: S102 - the docs' own example
    printed = capsys.readouterr().out.splitlines()
    ids = [check.id for check in load_rubric("groundedness").checklist]
    assert printed == [f"{item} no 0.2" for item in ids]
    assert len(endpoint.requests) == len(ids) and all(
        b["max_tokens"] == 1 for b in endpoint.requests
    )

"""What is sent, byte for byte, and what is worked out once to send it.

The digest of every request body the scripted server receives (`json.dumps(sort_keys=True)`)
and of every request a batch file records, with its custom_id (the verdict cache key), for a
handful of judgments in every path that builds a request: pinned in
tests/data/request_digests.json. A refactor leaves them as they are: a body that changes is a
verdict cache that misses for every user. When a change to what is sent is intended, pin
again with `RUBRICLIB_REPIN=1 pytest tests/judging/test_request_bytes.py` and say so in the
CHANGELOG (every cached verdict is asked again)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SECRET_KEY, scripted_citations
from judge_server import JudgeServer, Reply, completion, error_reply

from rubriclib import Item, Judge, Rubric, load_rubric, read_transcript, render
from rubriclib.batch.files import Recorder
from rubriclib.judging.prompt import agent_run

PINNED = Path(__file__).parents[1] / "data" / "request_digests.json"
RUNS = Path(__file__).parents[1] / "data" / "runs"
GROUNDED = """\
---
name: grounded
version: 1.0.0
scale: pass-fail
description: Whether the output invents nothing the context does not say.
requires: [input, context]
citations: required
checklist:
  - {id: invented, question: Does the output state a fact the context does not give?, fail_if: yes}
  - {id: answers, question: Does the output answer the input?, fail_if: no, requires: [input]}
examples:
  - {name: restated, input: When?, context: In 1969., output: In 1969., expected: pass}
---
# Grounded

Pass an output whose every claim the context supports.
"""
SCORED = """\
---
name: scored
version: 1.0.0
scale: 1-5
pass_threshold: 4
description: How well the output answers the input.
requires: [input, reference]
---
Score the output against the reference answer to {input}.
"""
VERSUS = """\
---
name: versus
version: 1.0.0
scale: pairwise
description: Which response answers better.
requires: [input]
---
Which response better answers the input?
"""
LABELS = """\
---
name: support
version: 1.0.0
scale: labels
description: Whether a support reply resolves the ticket.
labels: {resolved: pass, partly-resolved: fail, not-resolved: fail}
output:
  severity: {type: string, enum: [low, medium, high], description: How bad}
  confidence: {type: number, minimum: 0, maximum: 1, optional: true}
citations: optional
---
# Support

Label the reply: resolved, partly-resolved or not-resolved.
"""
RUN = """\
---
name: run-done
version: 1.0.0
scale: pass-fail
description: Whether an agent run did what the user asked.
requires: [transcript]
citations: optional
checklist:
  - {id: undone, question: Is every part of the request done?, fail_if: no}
  - {id: claims, question: Does the agent claim anything a tool result contradicts?, fail_if: yes}
---
Did the run do what the user asked, as its tool results show?
"""
GROUNDED_ITEM = Item(output="It landed in 1969.", input="When?", context="NASA: in July 1969.")


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def filled(schema: dict[str, Any]) -> Any:
    """The first value a JSON schema allows, as a scripted judge gives it."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "array":
        return [filled(schema["items"]) for _ in range(schema.get("minItems", 0))]
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: filled(properties[name]) for name in schema.get("required", [])}
    return {"string": "r", "integer": 1, "number": 0.5, "boolean": True}.get(kind)


def responder(
    refuse: tuple[str, ...] = (), text_first: bool = False, uncited: bool = False
) -> Callable[[dict[str, Any]], Reply]:
    """A judge that refuses the tool choices in `refuse` ("required", "named"), answers text
    first (`text_first`: a corrective turn), or fails without a citation (`uncited`); else it
    calls the tool forced (the first offered), every required argument filled."""
    state = {"text": text_first}

    def respond(body: dict[str, Any]) -> Reply:
        choice = body.get("tool_choice")
        if choice == "required" and "required" in refuse:
            return error_reply(400, "tool_choice 'required' is not supported")
        if isinstance(choice, dict) and "named" in refuse:
            return error_reply(400, "tool_choice object is not supported")
        if state["text"] or "tools" not in body:
            state["text"] = False
            return Reply(body=completion(content="yes" if "tools" not in body else "It passes."))
        tools = body["tools"]
        named = choice["function"]["name"] if isinstance(choice, dict) else None
        tool = next((t for t in tools if t["function"]["name"] == named), tools[0])
        if uncited and len(tools) == 2:
            tool = tools[1]  # set_grade_fail
        parameters = tool["function"]["parameters"]
        arguments = {
            name: filled(parameters["properties"][name]) for name in parameters["required"]
        }
        arguments["reason"] = "because"
        if uncited:
            failing = {"verdict": "fail", "answer": "no"}
            arguments |= {key: failing[key] for key in failing.keys() & arguments.keys()}
            arguments.pop("citations", None)
        else:
            user = body["messages"][1]["content"]
            arguments |= scripted_citations(body, user)
        return Reply(body=completion([(tool["function"]["name"], arguments)]))

    return respond


def long_run() -> Item:
    """An agent run too long for a small `max_prompt_tokens`: its longest blocks are cut."""
    messages = json.loads((RUNS / "openai_chat.json").read_text())
    messages[1]["content"] += " It is urgent." * 400
    messages[3]["content"] = json.dumps({"order": "A-17", "log": [f"line {i}" for i in range(900)]})
    messages[-1]["content"] += " Thanks!" * 300
    run = read_transcript(messages)
    return Item(output=run.messages[-1].text, input="Refund A-17", transcript=run)


def cases(
    write_file: Callable[..., Path],
) -> Iterator[tuple[str, Rubric, Item, dict[str, Any], dict[str, Any]]]:
    """(name, rubric, item, Judge options, responder options) for each pinned judgment."""

    def rubric(text: str) -> Rubric:
        return load_rubric(str(write_file(f"{len(text)}.md", text)))

    grounded, item = rubric(GROUNDED), GROUNDED_ITEM
    yield "pass-fail", grounded, item, {}, {}
    yield "fallback to named", grounded, item, {}, {"refuse": ("required",)}
    yield "fallback to auto", grounded, item, {}, {"refuse": ("required", "named")}
    yield "corrective turn", grounded, item, {}, {"text_first": True}
    yield "citation turn", grounded, item, {}, {"uncited": True}
    for answers in ("tool", "one-call", "probability"):
        yield f"checklist {answers}", grounded, item, {"mode": "checklist", "answers": answers}, {}
    checklist = {"mode": "checklist"}
    yield "checklist fallback to auto", grounded, item, checklist, {"refuse": ("required", "named")}
    scored = Item(output="Paris.", input="Capital of France?", reference="Paris")
    yield "1-5", rubric(SCORED), scored, {}, {}
    versus = Item(output="Paris.", input="Capital of France?", baseline="Lyon.")
    yield "pairwise", rubric(VERSUS), versus, {}, {}
    labels, reply = rubric(LABELS), Item(output="Refund started.", input="Where is it?")
    yield "labels with output fields", labels, reply, {"votes": 3, "temperature": 0.7}, {}
    done, run = rubric(RUN), long_run()
    yield "agent run", done, run, {}, {}
    cut = {"votes": 3, "temperature": 0.7, "max_prompt_tokens": 6000}
    yield "long run", done, run, cut | {"evidence": "whole"}, {}
    yield "long run checklist", done, run, cut | checklist, {}
    yield "long run one-call", done, run, cut | {"mode": "checklist", "answers": "one-call"}, {}


def sent(rubric: Rubric, item: Item, options: dict[str, Any], reply: dict[str, Any]) -> Any:
    """What one judgment sends: each body's digest, the result's details.transcript, and each
    request a batch file records by custom_id (the verdict cache key)."""
    with JudgeServer() as server:
        server.responder = responder(**reply)
        judge = Judge(model="m", base_url=server.url, api_key=SECRET_KEY, timeout=5.0, **options)
        result = judge.grade_item(rubric, item)
        bodies = [digest(body) for body in server.requests]
    batch = Judge(model="m", base_url="http://127.0.0.1:9/v1", api_key=SECRET_KEY, **options)
    batch.quirks.update(judge.quirks)
    recorder = Recorder()
    asyncio.run(batch.with_transport(recorder, records_only=True).agrade_item(rubric, item))
    recorded = {key: digest(body) for key, body in recorder.requests.items()}
    transcript = result.model_dump(mode="json")["details"].get("transcript")
    if transcript is not None:  # why a cut run was not explored: held by test_exploring.py
        transcript.pop("not_explored", None)
    return {"bodies": bodies, "batch": recorded, "transcript": transcript}


def test_every_request_sent_is_byte_identical_to_the_pinned_one(
    write_file: Callable[..., Path],
) -> None:
    found: dict[str, Any] = {}
    for name, rubric, item, options, reply in cases(write_file):
        found[name] = sent(rubric, item, options, reply)
        limit = options.get("max_prompt_tokens", 128_000)
        shown = render(rubric, item.output, item.input, item.context, item.reference,
                       baseline=item.baseline, transcript=item.transcript,
                       max_prompt_tokens=limit, evidence="whole")  # fmt: skip
        found[name]["render"] = digest(shown)  # the messages of the first mode tried
    assert found["fallback to auto"]["bodies"][2] not in found["pass-fail"]["bodies"]
    assert found["long run"]["transcript"]["cut"]  # the run was cut
    if os.environ.get("RUBRICLIB_REPIN"):
        PINNED.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(PINNED.read_text())
    for name in pinned:
        assert found[name] == pinned[name], f"{name}: what is sent changed (to pin it: see above)"
    assert found.keys() == pinned.keys()


@pytest.mark.parametrize(
    "options",
    [
        {"votes": 3, "temperature": 0.7},
        {"votes": 3, "temperature": 0.7, "mode": "checklist"},
        {"votes": 3, "temperature": 0.7, "mode": "checklist", "answers": "one-call"},
        {"votes": 3, "temperature": 0.7, "mode": "checklist", "answers": "probability"},
    ],
)
def test_a_long_run_is_cut_once_per_judgment(
    options: dict[str, Any], monkeypatch: pytest.MonkeyPatch, write_file: Callable[..., Path]
) -> None:
    """Its prompts (every vote's, every checklist item's) and `details.transcript` share one
    cut of the run: its blocks' fair shares are worked out once."""
    shares = agent_run.fair_shares
    calls: list[int] = []
    monkeypatch.setattr(agent_run, "fair_shares", lambda *args: calls.append(1) or shares(*args))
    task, item = load_rubric(str(write_file("run.md", RUN))), long_run()
    with JudgeServer() as server:
        server.responder = responder()
        judge = Judge(model="m", base_url=server.url, api_key=SECRET_KEY, timeout=5.0,
                      max_prompt_tokens=6000, evidence="whole", **options)  # fmt: skip
        result = judge.grade_item(task, item)
    assert result.verdict != "error" and len(server.requests) >= 2  # two votes at least
    assert result.details["transcript"]["cut"]
    assert len(calls) == 1

"""Pure: how a judge's reply becomes a verdict (`JudgeVerdict`) or what is wrong with it, its
citations checked; whether a verdict fails; a reply's text and token usage. Nothing about a
reply is trusted. No I/O, so live and batch judging share it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from rubriclib.judging.asking.request import POSITIONS, Mode, Position, verdict_tools
from rubriclib.judging.citations import checked_citations, verified
from rubriclib.rubrics import (
    LABEL_TOOL,
    PAIRWISE_TOOL,
    RESERVED,
    SCORE_TOOL,
    VERDICT_TOOL,
    Rubric,
    value_problems,
)

Verdict = Literal["pass", "fail"]


ANSWER_DETAILS = ("p_yes", "mass", "logprobs")
"""How a probability answer was read (`probability_answers`), kept in its details."""


@dataclass(frozen=True)
class JudgeVerdict:
    """A verdict read from a reply: pass or fail, the judge's reason, the raw 1-5 score, and on
    a pairwise rubric the response it preferred (`winner`: A, B or tie; its `verdict` is pass
    only for A, which means nothing until the two orders are combined)."""

    verdict: Verdict
    reason: str
    raw_score: int | None = None
    winner: Position | None = None
    answer: Literal["yes", "no"] | None = None
    """A checklist item's answer (its `verdict` is fail when that is the item's `fail_if`)."""
    p: float | None = None
    """The probability of `answer`, where the endpoint returned its logprobs."""
    answer_details: dict[str, Any] = field(default_factory=dict)
    """More of how an answer was read, kept in its details (a probability answer's `p_yes`,
    `mass` and whether it came from `logprobs`)."""
    citations: list[dict[str, Any]] = field(default_factory=list)
    """The judge's citations, each checked against the blocks it was shown
    (`citations.checked_citations`)."""
    label: str | None = None
    """A labels rubric's label (its `verdict` is the one the rubric's labels map it to)."""
    output: dict[str, Any] | None = None
    """The rubric's `output` fields as the judge filled them in, checked against their schema
    (the citations of a field's object checked too); None when the rubric has none."""
    checklist: list[dict[str, Any]] = field(default_factory=list)
    """A whole checklist answered in one call (`one_call`): each item's id, answer, reason and
    citations, in checklist order."""

    def item_details(self) -> dict[str, Any]:
        """What a checklist item's result keeps in its details: the answer and its `p` (when
        known); a checklist answered in one call, its items (their requests counted by the
        one judgment: 0 here, set when it ends); nothing for a rubric's verdict."""
        if self.checklist:
            return {"checklist": [{"attempts": 0, "cached": False} | e for e in self.checklist]}
        if self.answer is None:
            return {}
        p = {"p": self.p} if self.p is not None else {}
        return {"answer": self.answer} | p | self.answer_details

    def rubric_details(self) -> dict[str, Any]:
        """What a result's details keep beside the verdict: the label of a labels rubric and
        the output fields of a rubric that has them (nothing for others)."""
        kept = {"label": self.label, "output": self.output}
        return {key: value for key, value in kept.items() if value is not None}

    def cited(self) -> dict[str, Any]:
        """`{"citations": [...]}` for a result's details, or nothing when none were given."""
        return {"citations": self.citations} if self.citations else {}


@dataclass(frozen=True)
class Explored:
    """A reply that called the tools exploring a run (`exploring`): the turn to append (its
    calls and their answers), or the error that ends the judgment."""

    turn: list[dict[str, Any]]
    error: str | None = None


def parse_reply(raw: Any) -> Any:
    """A reply body as JSON, or None when it is not JSON (any shape may arrive)."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError, RecursionError):  # nested past the parser's depth too
        return None


def read_reply(
    reply: Any, rubric: Rubric, mode: Mode, blocks: Mapping[str, str] | None = None
) -> JudgeVerdict | str:
    """The verdict in a parsed Chat Completions reply, or what is wrong with it, with its
    citations checked against `blocks` (the text of each block shown, by id). Any shape may
    arrive, so nothing about `reply` is trusted."""
    offered = [tool["function"]["name"] for tool in verdict_tools(rubric, mode)]
    call = tool_call(reply, offered)
    if isinstance(call, str):
        return call
    name, arguments, reason = call
    verdict = _verdict_of(name, arguments, reason, rubric)
    if isinstance(verdict, str):
        return verdict
    if rubric.output:
        values = {key: value for key, value in arguments.items() if key not in RESERVED}
        if broken := value_problems(rubric.output, values):
            return BrokenFields(f"{name} was called with", broken)
        output = {
            key: _cited_output(rubric.output[key], value, blocks or {})
            for key, value in values.items()
        }
        verdict = replace(verdict, output=output)
    if rubric.citations == "off":
        return verdict
    return replace(verdict, citations=checked_citations(arguments.get("citations"), blocks or {}))


class BrokenFields(str):
    """Why a verdict call is refused when its output fields break the rubric's schema: a
    problem like any other, whose `problems` (one per field) the corrective turn names."""

    problems: tuple[str, ...]

    def __new__(cls, given: str, problems: Sequence[str]) -> BrokenFields:
        """`given`: what held the fields (`set_grade was called with`)."""
        why = f"{given} output fields that break the rubric's schema: "
        made = super().__new__(cls, why + "; ".join(problems))
        made.problems = tuple(problems)
        return made


def _cited_output(schema: Mapping[str, Any], value: Any, blocks: Mapping[str, str]) -> Any:
    """A field's `value` (which fits its `schema`) with the `citations` of every object holding
    a `citations: true` string checked against `blocks`, as the verdict's are."""
    if schema["type"] == "array":
        return [_cited_output(schema["items"], item, blocks) for item in value]
    if schema["type"] != "object":
        return value
    properties = schema["properties"]
    shown = {
        key: _cited_output(properties[key], item, blocks)
        for key, item in value.items()
        if key in properties
    }
    if any(child.get("citations") is True for child in properties.values()):
        shown["citations"] = checked_citations(value.get("citations"), blocks)
    return shown


def _verdict_of(
    name: str, arguments: dict[str, Any], reason: str, rubric: Rubric
) -> JudgeVerdict | str:
    if name == SCORE_TOOL:
        score = arguments.get("score")
        if isinstance(score, bool) or not isinstance(score, int):
            return f"{name} was called with a score that is not an integer: {score!r}"
        if not 1 <= score <= 5:
            return f"{name} was called with score {score}, outside 1 to 5"
        return JudgeVerdict("pass", reason, score)  # make_result applies the threshold
    if name == PAIRWISE_TOOL:
        winner = arguments.get("winner")
        if winner not in POSITIONS:
            return f"{name} was called with winner {winner!r}, not 'A', 'B' or 'tie'"
        return JudgeVerdict("pass" if winner == "A" else "fail", reason, winner=winner)
    if name == LABEL_TOOL:
        label = arguments.get("label")
        labels = rubric.labels or {}
        if not isinstance(label, str) or label not in labels:
            return f"{name} was called with label {label!r}, not one of {', '.join(labels)}"
        return JudgeVerdict(labels[label], reason, label=label)
    if name == VERDICT_TOOL:
        verdict = arguments.get("verdict")
        if verdict not in ("pass", "fail"):
            return f"{name} was called with verdict {verdict!r}, not 'pass' or 'fail'"
        return JudgeVerdict(verdict, reason)
    return JudgeVerdict("pass" if name == rubric.tool_names[0] else "fail", reason)


def tool_call(reply: Any, offered: list[str]) -> tuple[str, dict[str, Any], str] | str:
    """The one tool call of a parsed reply, to one of the `offered` tools, as its name, its
    arguments and their `reason` (stripped, never empty), or what is wrong with it."""
    message = _message(reply)
    if isinstance(message, str):
        return message
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        return "the reply's tool_calls is not a list"
    if not calls:
        return f"the judge answered without a verdict tool call (text: {reply_text(reply)!r})"
    names = [_call_name(call) for call in calls]
    if len(calls) > 1:
        listed = ", ".join(str(name) for name in names)
        return f"the judge made {len(calls)} tool calls ({listed}); exactly one is allowed"
    name = names[0]
    if name not in offered:
        return f"the judge called an unknown tool {name!r}"
    try:
        arguments = json.loads(calls[0]["function"].get("arguments"))
    except (ValueError, TypeError, RecursionError):
        return f"the arguments of {name} are not JSON"
    if not isinstance(arguments, dict):
        return f"the arguments of {name} are not a JSON object"
    reason = arguments.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        return f"{name} was called without a 'reason' string"
    return name, arguments, reason.strip()


def reply_text(reply: Any) -> str:
    """The assistant's text in a reply, whitespace collapsed and cut to 200 characters."""
    message = _message(reply)
    content = message.get("content") if isinstance(message, dict) else None
    return " ".join(content.split())[:200] if isinstance(content, str) else ""


def text_intent(text: str, rubric: Rubric) -> Verdict | None:
    """The verdict a reply names in text instead of calling it (`functions.set_grade_pass:`),
    when it names exactly one of the rubric's two verdict tools."""
    if rubric.scale != "pass-fail":
        return None
    named = {
        verdict
        for verdict, name in zip(("pass", "fail"), rubric.tool_names, strict=True)
        if re.search(rf"\b{name}\b", text)
    }
    return named.pop() if len(named) == 1 else None  # type: ignore[return-value]


def failing(verdict: JudgeVerdict, rubric: Rubric) -> bool:
    """Whether `verdict` fails: a fail, or a score below the threshold. A pairwise winner
    never does (neither order is a failure)."""
    if rubric.scale == "pairwise":
        return False
    if verdict.raw_score is not None and rubric.pass_threshold is not None:
        return verdict.raw_score < rubric.pass_threshold
    return verdict.verdict == "fail"


def unsupported(verdict: JudgeVerdict, rubric: Rubric) -> bool:
    """Whether `verdict` fails without a verified citation, which `citations: required` does
    not take."""
    required = rubric.citations == "required"
    return required and failing(verdict, rubric) and not verified(verdict.citations)


def usage_of(reply: Any) -> dict[str, int]:
    """Prompt and completion token counts of a reply (0 where missing or not a number)."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    counts = {}
    for key in ("prompt_tokens", "completion_tokens"):
        value = usage.get(key) if isinstance(usage, dict) else None
        counts[key] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return counts


def _message(reply: Any) -> dict[str, Any] | str:
    if not isinstance(reply, dict):
        return "the reply is not a JSON object"
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices:
        return "the response had no choices"
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        return "the response had no message"
    return message


def _call_name(call: Any) -> str | None:
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    return name if isinstance(name, str) else None

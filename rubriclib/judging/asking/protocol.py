"""Pure: what a judge is asked (request body, tools, corrective turn) and how its reply becomes
a verdict. No I/O, so live and batch judging share it.

Three ways to force the verdict through a tool call, tried in this order for each endpoint:

- `required`: pass-fail rubrics offer their two tools (`set_grade_pass`, `set_grade_fail`) with
  `tool_choice="required"`.
- `named`: one verdict tool named in `tool_choice`: `set_grade` (`reason`, then `verdict` pass or
  fail) for pass-fail rubrics, `set_grade_score` (`reason`, then `score`) for 1-5 rubrics,
  `set_pairwise_winner` (`reason`, then `winner` A, B or tie) for pairwise rubrics. 1-5 and
  pairwise rubrics start here; pass-fail rubrics come here when an endpoint refuses `required`.
- `auto`: the rubric's own tools with `tool_choice="auto"`, only where a named choice is refused
  too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from rubriclib.judging.citations import (
    ASKED_CITATIONS,
    ASKED_QUOTE,
    checked_citations,
    verified,
)
from rubriclib.judging.prompt.blocks import CHARACTERS_PER_TOKEN
from rubriclib.judging.prompt.render import system_message
from rubriclib.rubrics.rubric import PAIRWISE_TOOL, SCORE_TOOL, VERDICT_TOOL, Rubric

Mode = Literal["required", "named", "auto", "text"]
Verdict = Literal["pass", "fail"]
Position = Literal["A", "B", "tie"]
POSITIONS = ("A", "B", "tie")


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

    def item_details(self) -> dict[str, Any]:
        """What a checklist item's result keeps in its details: the answer and its `p` (when
        known); nothing for a rubric's verdict."""
        if self.answer is None:
            return {}
        p = {"p": self.p} if self.p is not None else {}
        return {"answer": self.answer} | p | self.answer_details

    def cited(self) -> dict[str, Any]:
        """`{"citations": [...]}` for a result's details, or nothing when none were given."""
        return {"citations": self.citations} if self.citations else {}


def estimated_tokens(rubric: Rubric, messages: list[dict[str, str]]) -> int:
    """One request's estimated prompt tokens, four characters a token: its messages and the
    rubric's verdict tools."""
    characters = sum(len(message["content"]) for message in messages)
    characters += len(json.dumps(verdict_tools(rubric, "required")))
    return characters // CHARACTERS_PER_TOKEN


def too_large(tokens: int, limit: int) -> str | None:
    """Why a prompt of `tokens` is not sent, or None when it fits."""
    return f"prompt too large: about {tokens:,} tokens > {limit:,}" if tokens > limit else None


def verdict_tools(rubric: Rubric, mode: Mode) -> list[dict[str, Any]]:
    """The tool definitions offered in `mode`. Kept lean (the system message explains them),
    and `reason` comes first so a judge whose arguments are written in schema order reasons
    before it commits. minLength and enum are what grammar-constrained decoders enforce."""
    reason: dict[str, Any] = {"reason": {"type": "string", "minLength": 1}}
    reason |= citation_argument(rubric.citations)
    if rubric.scale == "pairwise":
        winner = {"type": "string", "enum": list(POSITIONS)}
        return [function_tool(PAIRWISE_TOOL, reason | {"winner": winner}, rubric.citations)]
    if rubric.scale == "1-5":
        score = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
        return [function_tool(SCORE_TOOL, reason | {"score": score}, rubric.citations)]
    if mode == "named":
        verdict = {"type": "string", "enum": ["pass", "fail"]}
        return [function_tool(VERDICT_TOOL, reason | {"verdict": verdict}, rubric.citations)]
    plain = {"reason": {"type": "string"}} | citation_argument(rubric.citations)
    return [function_tool(name, plain, rubric.citations) for name in rubric.tool_names]


def citation_argument(policy: str) -> dict[str, Any]:
    """The `citations` property of a verdict tool (after `reason`, before the verdict, so a
    judge writing in schema order quotes its evidence before it commits); none when `off`. A
    `required` policy asks for at least one."""
    if policy == "off":
        return {}
    quote = {"block": {"type": "string"}, "quote": {"type": "string", "maxLength": ASKED_QUOTE}}
    item = {"type": "object", "properties": quote, "required": ["block", "quote"]}
    citations: dict[str, Any] = {"type": "array", "items": item, "maxItems": ASKED_CITATIONS}
    if policy == "required":
        citations["minItems"] = 1
    return {"citations": citations}


def tool_choice(rubric: Rubric, mode: Mode) -> str | dict[str, Any]:
    """The `tool_choice` value that goes with `mode`."""
    if mode == "named":
        names = {"1-5": SCORE_TOOL, "pairwise": PAIRWISE_TOOL}
        name = names.get(rubric.scale, VERDICT_TOOL)
        return {"type": "function", "function": {"name": name}}
    return mode


QUIRKS = (
    "no_required_tool_choice",
    "no_named_tool_choice",
    "no_temperature",
    "max_completion_tokens",
    "no_logprobs",
)
"""What an endpoint may refuse, each with its fallback (`tool_mode`, `sampling`); learned from
a refusal (`failures.quirk_in`) and remembered per endpoint and model (`cache.known_quirks`)."""


def tool_mode(rubric: Rubric, quirks: set[str], correcting: bool = False) -> Mode:
    """How to force the verdict call on an endpoint with these learned `quirks`: the first mode
    it has not refused. A corrective turn forces the one verdict tool by name wherever that is
    honoured."""
    required_ok = rubric.scale == "pass-fail" and "no_required_tool_choice" not in quirks
    named_ok = "no_named_tool_choice" not in quirks
    if named_ok and (correcting or not required_ok):
        return "named"
    return "required" if required_ok else "auto"


def sampling(temperature: float | None, max_tokens: int | None, quirks: set[str]) -> dict[str, Any]:
    """Temperature and the token limit of a request body, shaped by the learned `quirks`
    (`no_temperature`, `max_completion_tokens`)."""
    shaped: dict[str, Any] = {}
    if temperature is not None and "no_temperature" not in quirks:
        shaped["temperature"] = temperature
    if max_tokens is not None:
        key = "max_completion_tokens" if "max_completion_tokens" in quirks else "max_tokens"
        shaped[key] = max_tokens
    return shaped


def request_body(
    rubric: Rubric,
    messages: list[dict[str, Any]],
    mode: Mode,
    model: str,
    sampling: dict[str, Any],
) -> dict[str, Any]:
    """A Chat Completions request body; `sampling` holds temperature and the token limit. The
    system message of `messages` (as `render` wrote it, for the first mode tried) is replaced
    by the one of `mode`, so the instructions name exactly the tools this body offers."""
    if messages and messages[0].get("role") == "system":
        system = {"role": "system", "content": system_message(rubric, mode)}
        messages = [system, *messages[1:]]
    return {
        "model": model,
        "messages": messages,
        "tools": verdict_tools(rubric, mode),
        "tool_choice": tool_choice(rubric, mode),
        **sampling,
    }


def parse_reply(raw: Any) -> Any:
    """A reply body as JSON, or None when it is not JSON (any shape may arrive)."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
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
    if isinstance(verdict, str) or rubric.citations == "off":
        return verdict
    checked = checked_citations(arguments.get("citations"), blocks or {})
    return JudgeVerdict(
        verdict.verdict, reason, verdict.raw_score, verdict.winner, citations=checked
    )


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
    except (json.JSONDecodeError, TypeError):
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


def citation_turn(reply: Any, what: str = "verdict") -> list[dict[str, Any]]:
    """The one turn that asks again, under `citations: required`, for a `what` (verdict or
    answer) with evidence. Neutral: it names no verdict and no block, only how to cite."""
    return ask_again(
        reply,
        f"Please give your {what} again as one tool call, with `citations`: at least one quote "
        "copied exactly from a block you were shown, with that block's id.",
    )


def corrective_turn(reply: Any, rubric: Rubric, mode: Mode) -> list[dict[str, Any]]:
    """The turn that asks again for a verdict call after a reply that was not one. Neutral on
    purpose: it restates the options evenly and neither judges the output nor quotes a problem,
    so a judge has nothing to copy into its reason and no hint that something failed."""
    if rubric.scale == "1-5":
        ask = f"call `{SCORE_TOOL}` with a short `reason` and an integer `score` from 1 to 5"
    elif rubric.scale == "pairwise":
        ask = (
            f"call `{PAIRWISE_TOOL}` with a short `reason` and `winner` A if Response A better "
            "meets the rubric, B if Response B does, or tie if neither does"
        )
    elif mode == "named":
        ask = (
            f"call `{VERDICT_TOOL}` with a short `reason` and `verdict` pass if the output "
            "meets the rubric or fail if it does not"
        )
    else:
        pass_tool, fail_tool = rubric.tool_names
        ask = (
            f"call `{pass_tool}` if the output meets the rubric or `{fail_tool}` if it does "
            "not, with a short `reason`"
        )
    return ask_again(reply, f"Please give your verdict now as one tool call: {ask}.")


def ask_again(reply: Any, ask: str) -> list[dict[str, Any]]:
    """A corrective turn: the reply's text (if any) as the assistant's, then `ask`."""
    text = reply_text(reply)
    turn: list[dict[str, Any]] = [{"role": "assistant", "content": text}] if text else []
    return [*turn, {"role": "user", "content": ask}]


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


def function_tool(name: str, properties: dict[str, Any], citations: str = "off") -> dict[str, Any]:
    """A tool whose every property is required, but `citations` unless its policy is
    `required`."""
    required = [key for key in properties if key != "citations" or citations == "required"]
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


class Asking(Protocol):
    """What one judgment asks and how its reply is read: a rubric's verdict (`RubricAsking`)
    or one checklist item's answer (`checklist_protocol.ItemAsking`). The judge drives either
    through the same retries, quirk fallbacks, cache and corrective turn."""

    def mode(self, quirks: set[str], correcting: bool) -> Mode: ...

    def sampling(
        self, temperature: float | None, max_tokens: int | None, quirks: set[str]
    ) -> dict[str, Any]: ...

    def body(
        self, messages: list[dict[str, Any]], mode: Mode, model: str, sampling: dict[str, Any]
    ) -> dict[str, Any]: ...

    def read(self, reply: Any, mode: Mode) -> JudgeVerdict | str: ...

    def corrective_turn(self, reply: Any, mode: Mode) -> list[dict[str, Any]]: ...

    def failing(self, verdict: JudgeVerdict) -> bool: ...

    def unsupported(self, verdict: JudgeVerdict) -> bool: ...

    def citation_turn(self, reply: Any) -> list[dict[str, Any]]: ...

    def intent(self, text: str) -> Verdict | None: ...


@dataclass(frozen=True)
class RubricAsking:
    """Asking for the rubric's verdict: the functions above; citations are checked against
    `blocks` (`render.item_blocks`)."""

    rubric: Rubric
    blocks: Mapping[str, str] = field(default_factory=dict)

    def mode(self, quirks: set[str], correcting: bool) -> Mode:
        return tool_mode(self.rubric, quirks, correcting)

    def sampling(
        self, temperature: float | None, max_tokens: int | None, quirks: set[str]
    ) -> dict[str, Any]:
        return sampling(temperature, max_tokens, quirks)

    def body(
        self, messages: list[dict[str, Any]], mode: Mode, model: str, sampling: dict[str, Any]
    ) -> dict[str, Any]:
        return request_body(self.rubric, messages, mode, model, sampling)

    def read(self, reply: Any, mode: Mode) -> JudgeVerdict | str:
        return read_reply(reply, self.rubric, mode, self.blocks)

    def corrective_turn(self, reply: Any, mode: Mode) -> list[dict[str, Any]]:
        return corrective_turn(reply, self.rubric, mode)

    def failing(self, verdict: JudgeVerdict) -> bool:
        return failing(verdict, self.rubric)

    def unsupported(self, verdict: JudgeVerdict) -> bool:
        return unsupported(verdict, self.rubric)

    def citation_turn(self, reply: Any) -> list[dict[str, Any]]:
        return citation_turn(reply)

    def intent(self, text: str) -> Verdict | None:
        return text_intent(text, self.rubric)

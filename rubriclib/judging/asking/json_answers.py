"""Pure: `protocol: json`, a verdict given as one JSON object instead of a tool call, for
endpoints that constrain output to a schema but call tools badly or not at all.

`JsonAsking` wraps any asking that offers a tool (a rubric's verdict, a checklist item's
answer, a whole checklist in one call): the one tool it forces by name becomes the response's
schema, asked as `response_format: {"type": "json_schema", "json_schema": {"name", "strict":
true, "schema"}}`, or, on an endpoint that refuses that (the quirk `no_json_schema`), as
`{"type": "json_object", "schema": ...}` (llama-cpp-python's form) with the schema in the
system message too. The schema holds the tool's fields, `reason` and `citations` first, then
the verdict (score, label, winner or answer), then the rubric's output fields; under `strict`
every property is required, so a field the tool takes as optional is required but nullable,
and a null reads as left out. A reply's JSON is read by the wrapped asking as a call of its
tool: the same checks, the same verdict. Text that is not one JSON object, or JSON that breaks
the schema, gets the one corrective turn naming the problem, then is an error; no verdict is
ever guessed from prose. No I/O, so live and batch judging share it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from rubriclib.judging.asking.protocol import Asking, ask_again
from rubriclib.judging.asking.reply import (
    BrokenFields,
    Explored,
    JudgeVerdict,
    Verdict,
    reply_text,
)
from rubriclib.judging.asking.request import JSON_MODES, Mode

ANSWER_FIRST = ("reason", "citations")
VERDICT_KEYS = ("verdict", "score", "label", "winner", "answer")
"""The properties a JSON answer gives first (the judge reasons and quotes before it commits),
then the verdict's; the rest (output fields, a checklist's answers) follow in the tool's order."""
UNSTRICT_KEYWORDS = ("minLength", "maxLength")
"""Keywords a strict `json_schema` leaves out (OpenAI's strict mode refuses them); the
`json_object` form, which a grammar enforces, keeps them."""
_FENCED = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\Z", re.S)


def as_protocol(asking: Asking, protocol: str) -> Asking:
    """`asking` as `protocol` asks it: under `json` wrapped in `JsonAsking`, under `auto` in
    `AutoAsking`; unwrapped under `tools`, or when it offers no tool (a probability answer is
    one plain word in every protocol)."""
    if protocol == "tools" or asking.mode(set(), correcting=False) == "text":
        return asking
    return JsonAsking(asking) if protocol == "json" else AutoAsking(asking)


@dataclass(frozen=True)
class Wrapping:
    """What an asking that wraps another takes from it unchanged: the sampling, and whether a
    verdict fails or lacks the evidence its rubric requires."""

    inner: Asking

    def sampling(
        self, temperature: float | None, max_tokens: int | None, quirks: set[str]
    ) -> dict[str, Any]:
        return self.inner.sampling(temperature, max_tokens, quirks)

    def failing(self, verdict: JudgeVerdict) -> bool:
        return self.inner.failing(verdict)

    def unsupported(self, verdict: JudgeVerdict) -> bool:
        return self.inner.unsupported(verdict)


@dataclass(frozen=True)
class JsonAsking(Wrapping):
    """An asking (`protocol.Asking`) answered as one JSON object holding its tool's fields."""

    @cached_property
    def tool(self) -> dict[str, Any]:
        """The `function` of the one tool the wrapped asking forces by name."""
        tools = self.inner.body([], "named", "", {})["tools"]
        function: dict[str, Any] = tools[0]["function"]
        return function

    def system(self, mode: Mode) -> str:
        """The wrapped asking's instructions in JSON words; under `json_object`, which may not
        enforce a schema, the schema too."""
        system = self.inner.system(mode)
        if mode == "json_object":
            schema = json.dumps(answer_schema(self.tool["parameters"], strict=False))
            system += f"\n\nThe JSON object follows this schema: {schema}"
        return system

    def mode(self, quirks: set[str], correcting: bool) -> Mode:
        return "json_object" if "no_json_schema" in quirks else "json_schema"

    def body(
        self, messages: list[dict[str, Any]], mode: Mode, model: str, sampling: dict[str, Any]
    ) -> dict[str, Any]:
        """The wrapped asking's request with its tool turned into a response format; its own
        words about the tool (the prompt's last line, a corrective turn) ask for the object."""
        asked = _in_json_words(messages, self.tool["name"])
        body = self.inner.body(asked, "named", model, sampling)
        del body["tools"], body["tool_choice"]
        parameters = self.tool["parameters"]
        if mode == "json_object":
            schema = answer_schema(parameters, strict=False)
            return body | {"response_format": {"type": "json_object", "schema": schema}}
        named = {"name": self.tool["name"], "strict": True}
        named["schema"] = answer_schema(parameters, strict=True)
        return body | {"response_format": {"type": "json_schema", "json_schema": named}}

    def read(self, reply: Any, mode: Mode) -> JudgeVerdict | Explored | str:
        """The verdict in a reply's JSON, read as a call of the tool (nulls of optional fields
        left out), or what is wrong with it."""
        answer = _json_answer(reply)
        if isinstance(answer, str):
            return answer
        arguments = without_nulls(answer, self.tool["parameters"])
        outcome = self.inner.read(_as_call(reply, self.tool["name"], arguments), "named")
        if isinstance(outcome, BrokenFields):
            return BrokenFields("the JSON answer has", outcome.problems)
        return _reworded(outcome, self.tool["name"]) if isinstance(outcome, str) else outcome

    def corrective_turn(self, reply: Any, mode: Mode) -> list[dict[str, Any]]:
        """Asks again for one JSON object, naming what was wrong (never a verdict)."""
        problem = self.read(reply, mode)
        why = str(problem).split(" (text: ")[0] if isinstance(problem, str) else ""
        fields = ", ".join(f"`{name}`" for name in _ordered(self.tool["parameters"]["properties"]))
        ask = f"Please give your answer now as only one JSON object with {fields}."
        return ask_again(reply, ask + (f" Your reply could not be read: {why}." if why else ""))

    def citation_turn(self, reply: Any) -> list[dict[str, Any]]:
        """The wrapped asking's turn asking for evidence, for one JSON object."""
        answer = _json_answer(reply)
        call = _as_call(reply, self.tool["name"], answer if isinstance(answer, dict) else {})
        ask = self.inner.citation_turn(call)[-1]["content"]
        return ask_again(reply, ask.replace("one tool call", "one JSON object"))

    def intent(self, text: str) -> Verdict | None:
        return None  # a JSON answer has no tool to name in text


@dataclass(frozen=True)
class AutoAsking(Wrapping):
    """`protocol: auto`: the wrapped asking's tool call until the endpoint is learned to refuse
    tools (the quirk `no_tools`), then one JSON object (`JsonAsking`). Each step goes to the
    asking of the mode it is in, so one judgment may switch when the refusal comes."""

    @cached_property
    def answered_in_json(self) -> JsonAsking:
        return JsonAsking(self.inner)

    def _in(self, mode: Mode) -> Asking:
        return self.answered_in_json if mode in JSON_MODES else self.inner

    def system(self, mode: Mode) -> str:
        return self._in(mode).system(mode)

    def mode(self, quirks: set[str], correcting: bool) -> Mode:
        asking = self.answered_in_json if "no_tools" in quirks else self.inner
        return asking.mode(quirks, correcting)

    def body(
        self, messages: list[dict[str, Any]], mode: Mode, model: str, sampling: dict[str, Any]
    ) -> dict[str, Any]:
        return self._in(mode).body(messages, mode, model, sampling)

    def read(self, reply: Any, mode: Mode) -> JudgeVerdict | Explored | str:
        return self._in(mode).read(reply, mode)

    def corrective_turn(self, reply: Any, mode: Mode) -> list[dict[str, Any]]:
        return self._in(mode).corrective_turn(reply, mode)

    def citation_turn(self, reply: Any) -> list[dict[str, Any]]:
        called = isinstance(_json_answer(reply), str)  # a reply with no JSON text: a call
        return (self.inner if called else self.answered_in_json).citation_turn(reply)

    def intent(self, text: str) -> Verdict | None:
        return self.inner.intent(text)


def answer_schema(parameters: dict[str, Any], strict: bool) -> dict[str, Any]:
    """The JSON answer's schema from a tool's `parameters`: its properties reordered
    (`ANSWER_FIRST`, then `VERDICT_KEYS`, then the rest); under `strict`, every object's
    properties all required (the optional ones nullable), no other keys, and no keyword a
    strict schema refuses (`UNSTRICT_KEYWORDS`)."""
    properties = parameters["properties"]
    ordered = {**parameters, "properties": {key: properties[key] for key in _ordered(properties)}}
    return _strict(ordered) if strict else ordered


def _ordered(properties: dict[str, Any]) -> list[str]:
    first = [key for key in (*ANSWER_FIRST, *VERDICT_KEYS) if key in properties]
    return first + [key for key in properties if key not in first]


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    shown = {key: value for key, value in schema.items() if key not in UNSTRICT_KEYWORDS}
    if "items" in shown:
        shown["items"] = _strict(shown["items"])
    if shown.get("type") != "object" or "properties" not in shown:
        return shown
    required = set(shown.get("required", ()))
    shown["properties"] = {
        key: _strict(child) if key in required else _nullable(_strict(child))
        for key, child in shown["properties"].items()
    }
    return shown | {"required": list(shown["properties"]), "additionalProperties": False}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` taking null too: a required-but-nullable property stands for an optional one."""
    kind = schema.get("type")
    shown = dict(schema)
    if isinstance(kind, str):
        shown["type"] = [kind, "null"]
    if "enum" in shown:
        shown["enum"] = [*shown["enum"], None]
    return shown


def without_nulls(value: Any, schema: dict[str, Any]) -> Any:
    """`value` with each null an optional property of `schema` holds left out, at any depth
    (strict schemas send optional properties as nullable ones)."""
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [without_nulls(item, schema["items"]) for item in value]
    if not isinstance(value, dict) or not isinstance(schema.get("properties"), dict):
        return value
    properties, required = schema["properties"], set(schema.get("required", ()))
    return {
        key: without_nulls(item, properties.get(key, {}))
        for key, item in value.items()
        if item is not None or key in required
    }


def _json_answer(reply: Any) -> dict[str, Any] | str:
    """The one JSON object a reply's text holds (alone, or alone in one ```json fence), or
    what is wrong with it."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    message = choices[0].get("message") if isinstance(choices, list) and choices else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str) or not content.strip():
        return "the judge answered without a JSON object (no text)"
    text = content.strip()
    if fenced := _FENCED.match(text):
        text = fenced.group(1)
    try:
        answer = json.loads(text)
    except (ValueError, RecursionError):
        return f"the reply is not one JSON object (text: {reply_text(reply)!r})"
    if not isinstance(answer, dict):
        return f"the reply is JSON but not an object (text: {reply_text(reply)!r})"
    return answer


def _as_call(reply: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A reply whose JSON answer is a call of `name` with `arguments`: what the wrapped asking
    reads (the reply's logprobs kept, which a checklist item's answer reads)."""
    choice = reply["choices"][0]
    function = {"name": name, "arguments": json.dumps(arguments)}
    message = {"role": "assistant", "content": None, "tool_calls": [{"function": function}]}
    return {"choices": [{"message": message, "logprobs": choice.get("logprobs")}]}


def _reworded(problem: str, tool: str) -> str:
    """A problem with a call of `tool`, said of the JSON answer."""
    problem = problem.replace(f"{tool} was called without a", "the JSON answer has no")
    problem = problem.replace(f"{tool} was called with", "the JSON answer has")
    return problem.replace(f"{tool}: ", "the JSON answer has ", 1)


def _in_json_words(messages: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    """A request's messages (system, prompt, then any turns) with our words about `tool` asking
    for one JSON object instead: the prompt's last line (`... with `answer`.`, the only place a
    prompt names the tool, after every fenced block) and each later user turn (a corrective
    turn, ours). The data they show is untouched."""
    shown = list(messages)
    prompt = shown[1]["content"] if len(shown) > 1 else ""
    last = prompt.rstrip("\n")
    if last.endswith(f" with `{tool}`."):
        asked = last[: -len(f"`{tool}`.")] + "one JSON object." + prompt[len(last) :]
        shown[1] = shown[1] | {"content": asked}
    for index in range(2, len(shown)):
        if shown[index]["role"] == "user":
            turn = shown[index]["content"].replace("one tool call", "one JSON object")
            shown[index] = shown[index] | {"content": turn}
    return shown

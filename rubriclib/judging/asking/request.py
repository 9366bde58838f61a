"""Pure: what a judge is asked: the verdict tools, their `tool_choice`, and a request body
shaped for an endpoint's learned quirks; a request's estimated size. No I/O, so live and batch
judging share it.

Three ways to force the verdict through a tool call, tried in this order for each endpoint:

- `required`: pass-fail rubrics offer their two tools (`set_grade_pass`, `set_grade_fail`) with
  `tool_choice="required"`.
- `named`: one verdict tool named in `tool_choice`: `set_grade` (`reason`, then `verdict` pass or
  fail) for pass-fail rubrics, `set_grade_score` (`reason`, then `score`) for 1-5 rubrics,
  `set_pairwise_winner` (`reason`, then `winner` A, B or tie) for pairwise rubrics,
  `set_grade_label` (`reason`, then `label`, one of the rubric's) for labels rubrics. 1-5,
  pairwise and labels rubrics start here; pass-fail rubrics come here when an endpoint
  refuses `required`.
- `auto`: the rubric's own tools with `tool_choice="auto"`, only where a named choice is refused
  too.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any, Literal

from rubriclib.judging.citations import ASKED_CITATIONS, ASKED_QUOTE
from rubriclib.judging.prompt.blocks import CHARACTERS_PER_TOKEN
from rubriclib.rubrics import (
    LABEL_TOOL,
    PAIRWISE_TOOL,
    SCORE_TOOL,
    VERDICT_TOOL,
    Rubric,
    required_fields,
)

Mode = Literal["required", "named", "auto", "text", "json_schema", "json_object"]
JSON_MODES = ("json_schema", "json_object")
"""How a verdict is asked for under `protocol: json` (`json_answers`): a response format holding
the verdict tool's schema, as `json_schema` or, where an endpoint refuses that, `json_object`."""
Position = Literal["A", "B", "tie"]
POSITIONS = ("A", "B", "tie")


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
    reason |= citation_argument(rubric.citations) | output_arguments(rubric)
    if rubric.scale == "pairwise":
        winner = {"type": "string", "enum": list(POSITIONS)}
        return [_verdict_tool(PAIRWISE_TOOL, reason | {"winner": winner}, rubric)]
    if rubric.scale == "1-5":
        score = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
        return [_verdict_tool(SCORE_TOOL, reason | {"score": score}, rubric)]
    if rubric.scale == "labels":
        label = {"type": "string", "enum": list(rubric.labels or {})}
        return [_verdict_tool(LABEL_TOOL, reason | {"label": label}, rubric)]
    if mode == "named":
        verdict = {"type": "string", "enum": ["pass", "fail"]}
        return [_verdict_tool(VERDICT_TOOL, reason | {"verdict": verdict}, rubric)]
    plain = {"reason": {"type": "string"}} | citation_argument(rubric.citations)
    plain |= output_arguments(rubric)
    return [_verdict_tool(name, plain, rubric) for name in rubric.tool_names]


def _verdict_tool(name: str, properties: dict[str, Any], rubric: Rubric) -> dict[str, Any]:
    optional = set(rubric.output or {}) - set(required_fields(rubric.output or {}))
    return function_tool(name, properties, rubric.citations, optional)


def output_arguments(rubric: Rubric) -> dict[str, Any]:
    """The rubric's `output` fields as verdict tool properties (after `reason` and `citations`,
    before the verdict): JSON schema without `optional`, and an object holding a string marked
    `citations: true` gets its own `citations` list, in the verdict's shape."""
    return {name: _json_schema(schema) for name, schema in (rubric.output or {}).items()}


def _json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    shown = {key: value for key, value in schema.items() if key not in ("optional", "citations")}
    if schema["type"] == "array":
        shown["items"] = _json_schema(schema["items"])
    if schema["type"] == "object":
        properties = {name: _json_schema(child) for name, child in schema["properties"].items()}
        if any(child.get("citations") is True for child in schema["properties"].values()):
            properties |= citation_argument("optional")
        shown |= {"properties": properties, "additionalProperties": False}
    return shown


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
        names = {"1-5": SCORE_TOOL, "pairwise": PAIRWISE_TOOL, "labels": LABEL_TOOL}
        name = names.get(rubric.scale, VERDICT_TOOL)
        return {"type": "function", "function": {"name": name}}
    return mode


QUIRKS = (
    "no_required_tool_choice",
    "no_named_tool_choice",
    "no_temperature",
    "max_completion_tokens",
    "no_logprobs",
    "no_json_schema",
    "no_seed",
    "no_tools",
    "no_exploring",
)
"""What an endpoint may refuse, each with its fallback (`tool_mode`, `sampling`,
`json_answers.JsonAsking.mode`); learned from
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
    """A Chat Completions request body offering the verdict tools of `mode`; `sampling` holds
    temperature and the token limit. `messages` open with the system message of `mode`
    (`RubricAsking.system`), so the instructions name exactly the tools this body offers."""
    return {
        "model": model,
        "messages": messages,
        "tools": verdict_tools(rubric, mode),
        "tool_choice": tool_choice(rubric, mode),
        **sampling,
    }


def function_tool(
    name: str,
    properties: dict[str, Any],
    citations: str = "off",
    optional: Collection[str] = (),
) -> dict[str, Any]:
    """A tool whose every property is required, but `citations` unless its policy is
    `required`, and the `optional` ones."""
    required = [
        key
        for key in properties
        if (key != "citations" or citations == "required") and key not in optional
    ]
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }

"""Pure but for its trail: a rubric's verdict asked about an agent run the judge explores
(`evidence: explore`). `ExploringAsking` wraps a rubric's asking: its request offers the verdict
tool (forced by name in every scale) beside `list_blocks`, `read_block` and `search_run`, chosen
by `tool_choice: required`; a reply calling those tools is answered (`Explored`: the turn to
append) until the judge calls the verdict tool, whose citations are checked against what it
was shown: the first message's blocks and the parts of run blocks its tools showed it, the rest
of each block masked. Budgets of turns and characters end in a corrective turn asking for the
verdict, then `error`; so does a second call that is not valid. One is made per judgment: its
`Trail` is that judgment's."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rubriclib.judging.asking.json_answers import Wrapping
from rubriclib.judging.asking.protocol import Asked, RubricAsking, first_messages, verdict_requests
from rubriclib.judging.asking.reply import Explored, JudgeVerdict, Verdict
from rubriclib.judging.asking.request import Mode, estimated_tokens, verdict_tools
from rubriclib.judging.citations import quoted_unread
from rubriclib.judging.prompt.blocks import CHARACTERS_PER_TOKEN
from rubriclib.judging.prompt.exploring import (
    EXPLORING_WORDS,
    LIST_PAGE,
    READ_LIMIT,
    SEARCH_HITS,
    ExploredRun,
    ToolAnswer,
    list_blocks,
    read_block,
    search_run,
)
from rubriclib.judging.prompt.render import exploring_system
from rubriclib.rubrics import Rubric

if TYPE_CHECKING:
    from rubriclib.item import Item

EXPLORING_TURNS = 12
"""The requests a judgment may spend exploring before it must give its verdict."""
MOST_CALLS = 5
"""Exploring calls answered a turn; more are told to wait for the next turn."""
UNREAD = "\x00"
"""What stands for a block's text the judge was not shown, where its citations are checked."""


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    parameters = {"type": "object", "properties": properties, "required": required}
    function = {"name": name, "description": description, "parameters": parameters}
    return {"type": "function", "function": function}


EXPLORING_TOOLS = [
    _tool(
        "list_blocks",
        f"List the run's blocks, {LIST_PAGE} a page: id, who wrote it, size, first line.",
        {"page": {"type": "integer", "minimum": 1}},
        [],
    ),
    _tool(
        "read_block",
        f"Show a block's head and its text from `offset`, at most `limit` (<= {READ_LIMIT}) "
        "characters.",
        {
            "block": {"type": "string"},
            "offset": {"type": "integer", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1, "maximum": READ_LIMIT},
        },
        ["block"],
    ),
    _tool(
        "search_run",
        "Find a case-insensitive regular expression (or plain text) in the run: at most "
        f"{SEARCH_HITS} hits, each with its block id and the text around it.",
        {"pattern": {"type": "string"}},
        ["pattern"],
    ),
]
EXPLORING_NAMES = tuple(tool["function"]["name"] for tool in EXPLORING_TOOLS)
EXPLORING_TOKENS = (len(EXPLORING_WORDS) + len(json.dumps(EXPLORING_TOOLS))) // (
    CHARACTERS_PER_TOKEN
)
"""What exploring adds to a first request's estimated tokens (its words and its tools)."""
LEAST_BUDGET = 1_000
"""The fewest characters worth exploring a run with: a smaller budget is refused up front."""


def exploring_tools(rubric: Rubric) -> list[dict[str, Any]]:
    """The tools an explored judgment offers: the rubric's verdict tool, forced by name in
    every scale (`set_grade` on a pass-fail rubric), then the exploring tools."""
    return verdict_tools(rubric, "named") + EXPLORING_TOOLS


EXPLORING_SHARE = 0.8
"""The part of what `max_prompt_tokens` leaves after the first request that an explored
judgment's tools may show (the rest is the judge's own turns)."""


@dataclass(frozen=True)
class Budget:
    """What a judgment may spend exploring: requests, and characters shown by its tools."""

    turns: int = EXPLORING_TURNS
    characters: int = 0

    @property
    def most_requests(self) -> int:
        """The most requests a judgment sends on this budget (retries aside): its turns, the
        one whose reply finds the budget spent, and the corrective one asking for the verdict."""
        return self.turns + 2


def exploring_budget(
    first_request_tokens: int,
    max_prompt_tokens: int,
    turns: int = EXPLORING_TURNS,
    characters: int | None = None,
) -> Budget:
    """What an explored judgment whose first request is `first_request_tokens` may spend:
    `turns` requests and `characters` (None: EXPLORING_SHARE of what `max_prompt_tokens` leaves
    after the first request, so the whole conversation stays within it)."""
    if characters is None:
        left = (max_prompt_tokens - first_request_tokens) * CHARACTERS_PER_TOKEN
        characters = int(max(left, 0) * EXPLORING_SHARE)
    return Budget(turns, characters)


def explored_requests(rubric: Rubric, item: Item, run: ExploredRun) -> tuple[list[Asked], int]:
    """A vote's requests about `item` whose `run` the judge explores, and the largest first
    request's estimated tokens, with what exploring adds (its words and tools)."""
    asked = verdict_requests(rubric, item, run)
    largest = max(estimated_tokens(rubric, first_messages(*request)) for request in asked)
    return asked, largest + EXPLORING_TOKENS


def planned_exploring(
    rubric: Rubric,
    item: Item,
    max_prompt_tokens: int,
    turns: int | None = None,
    characters: int | None = None,
) -> tuple[int, Budget]:
    """For a plan (`eval --dry-run`): an explored judgment's first request's estimated tokens
    and its budget, as the judge works them out (`turns` None: EXPLORING_TURNS)."""
    assert item.transcript is not None
    run = ExploredRun(item.transcript, max_prompt_tokens)
    _, size = explored_requests(rubric, item, run)
    budget = exploring_budget(size, max_prompt_tokens, turns or EXPLORING_TURNS, characters)
    return size, budget


@dataclass
class Trail:
    """What one judgment's judge did and was shown while exploring (`details.exploration`)."""

    turns: int = 0
    blocks_read: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    characters_read: int = 0
    invalid: int = 0
    answered: int = 0
    """Calls answered in the current turn (at most MOST_CALLS)."""
    call_ids: set[str] = field(default_factory=set)
    """Every call id echoed so far: a judge's repeated id is replaced, so each is answered once."""
    parts: list[tuple[int, int, int]] = field(default_factory=list)
    """Each part of a block shown: its index, start and end in the block's text."""

    def details(self) -> dict[str, Any]:
        """`details.exploration`."""
        kept = ("turns", "blocks_read", "searches", "characters_read")
        return {name: getattr(self, name) for name in kept}


def joined_trails(trails: list[Any]) -> dict[str, Any]:
    """Several judgments' `details.exploration` (an item's votes) as one: turns and characters
    summed, blocks read and searches in the order they came."""
    blocks = [block for trail in trails for block in trail["blocks_read"]]
    return {
        "turns": sum(trail["turns"] for trail in trails),
        "blocks_read": list(dict.fromkeys(blocks)),
        "searches": [pattern for trail in trails for pattern in trail["searches"]],
        "characters_read": sum(trail["characters_read"] for trail in trails),
    }


@dataclass(frozen=True)
class ExploringAsking(Wrapping):
    """A rubric's verdict (`RubricAsking`) asked about a run the judge explores."""

    inner: RubricAsking
    run: ExploredRun
    budget: Budget
    trail: Trail = field(default_factory=Trail)

    def system(self, mode: Mode) -> str:
        return exploring_system(self.inner.rubric, self.run.transcript)

    def mode(self, quirks: set[str], correcting: bool) -> Mode:
        """`required` (any of the tools, the verdict's among them), or the verdict tool by name
        on the corrective turn; `auto` where `required` was refused."""
        if correcting and "no_named_tool_choice" not in quirks:
            return "named"
        return "auto" if "no_required_tool_choice" in quirks else "required"

    def body(
        self, messages: list[dict[str, Any]], mode: Mode, model: str, sampling: dict[str, Any]
    ) -> dict[str, Any]:
        body = self.inner.body(messages, "named", model, sampling)
        body["tools"] = exploring_tools(self.inner.rubric)
        if mode != "named":
            body["tool_choice"] = mode
        return body

    def read(self, reply: Any, mode: Mode) -> JudgeVerdict | Explored | str:
        """The verdict (its citations checked against what was read), the exploring turn, or
        what is wrong."""
        self.trail.turns += 1
        calls = _calls(reply)
        asked = [call for call in calls if _name(call) in EXPLORING_NAMES]
        if not asked or len(asked) < len(calls):  # a verdict call is read as the judge's last
            verdict_only = _with_calls(reply, [c for c in calls if c not in asked])
            shown = self.shown()
            read = replace(self.inner, blocks=shown).read(verdict_only, "named")
            return read if not isinstance(read, JudgeVerdict) else _read_only(read, shown)
        if mode == "named":
            return "the judge went on exploring when asked for its verdict"
        return self.spent() or self._answered(reply, asked)

    def spent(self) -> str | None:
        """Which budget is spent, if one is."""
        if self.trail.turns > self.budget.turns:
            return f"the exploring budget of {self.budget.turns} turns is spent"
        if self.trail.characters_read >= self.budget.characters:
            return f"the exploring budget of {self.budget.characters:,} characters is spent"
        return None

    def _answered(self, reply: Any, asked: list[Any]) -> Explored:
        """The exploring calls answered, each within the characters left; the calls echoed
        with text (empty, never null: llama-cpp-python's server takes only a string)."""
        message = reply["choices"][0]["message"]
        self.trail.answered = 0
        calls: list[dict[str, Any]] = []
        turn: list[dict[str, Any]] = [
            {"role": "assistant", "content": message.get("content") or "", "tool_calls": calls}
        ]
        for number, call in enumerate(asked):
            name, arguments = _name(call), call["function"].get("arguments")
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            given = call.get("id")
            fresh = isinstance(given, str) and given and given not in self.trail.call_ids
            call_id = given if fresh else f"call_{self.trail.turns}_{number}"
            self.trail.call_ids.add(call_id)
            function = {"name": name, "arguments": arguments}
            calls.append({"id": call_id, "type": "function", "function": function})
            answer = self._answer(name, arguments)
            if answer is None:
                why = f"a second exploring call that is not valid: {name} {arguments[:200]}"
                return Explored(turn, error=why)
            turn.append({"role": "tool", "tool_call_id": call_id, "content": answer})
        return Explored(turn)

    def _answer(self, name: str, arguments: str) -> str | None:
        """A call's answer, recorded in the trail; None for the second call that is not valid
        (the first is answered with what is wrong, its corrective turn)."""
        try:
            given = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            given = None
        if self.trail.answered == MOST_CALLS:
            answer = ToolAnswer(f"At most {MOST_CALLS} calls are answered a turn.", shows_run=False)
        elif isinstance(given, dict):
            answer = self._tool_answer(name, given)
        else:
            answer = ToolAnswer(f"The arguments of {name} are not a JSON object.", valid=False)
        if not answer.valid:
            self.trail.invalid += 1
            if self.trail.invalid > 1:
                return None
        trail = self.trail
        if answer.valid and answer.shows_run:  # a refusal or a note shows nothing of the run
            trail.answered += 1
            trail.characters_read += len(answer.text)
        trail.parts.extend(answer.parts)
        ids = self.run.transcript.block_ids
        read = [ids[index] for index, _, _ in answer.parts if name == "read_block"]
        trail.blocks_read.extend(block for block in read if block not in trail.blocks_read)
        if name == "search_run" and answer.valid and isinstance(given, dict):
            trail.searches.append(given["pattern"])
        return answer.text

    def _tool_answer(self, name: str, given: dict[str, Any]) -> ToolAnswer:
        """What a tool shows for `given` arguments, within the characters left."""
        left = self.budget.characters - self.trail.characters_read
        if left <= 0:
            spent = f"The budget of {self.budget.characters:,} characters is spent."
            return ToolAnswer(spent, shows_run=False)
        if name == "read_block":
            limit = given.get("limit", READ_LIMIT)
            limit = min(limit, left) if isinstance(limit, int) else limit
            return read_block(self.run, given.get("block"), given.get("offset", 0), limit)
        if name == "list_blocks":
            answer = list_blocks(self.run, given.get("page", 1))
        else:
            answer = search_run(self.run, given.get("pattern"))
        if len(answer.text) > left:
            return ToolAnswer(
                f"The answer ({len(answer.text):,} characters) is longer than the {left:,} "
                "characters left of the budget: narrow it, or give your verdict.",
                shows_run=False,
            )
        return answer

    def shown(self) -> dict[str, str]:
        """The text of each block the judge was shown, by id: the first message's blocks, and
        each run block with the parts it read (the rest masked, so a verified quote's span is
        where it sits in the block)."""
        blocks = dict(self.inner.blocks)
        masks: dict[int, list[str]] = {}
        for index, start, end in self.trail.parts:
            body = self.run.blocks[index][1]
            mask = masks.setdefault(index, [UNREAD] * len(body))
            mask[start:end] = body[start:end]
        ids = self.run.transcript.block_ids
        return blocks | {ids[index]: "".join(mask) for index, mask in masks.items()}

    def corrective_turn(self, reply: Any, mode: Mode) -> list[dict[str, Any]]:
        """The rubric's corrective turn; once a budget is spent, saying so first."""
        turn = self.inner.corrective_turn(reply, mode)
        if (spent := self.spent()) is not None:
            asked = turn[-1]["content"]
            turn[-1] = turn[-1] | {"content": f"{spent[0].upper()}{spent[1:]}. {asked}"}
        return turn

    def citation_turn(self, reply: Any) -> list[dict[str, Any]]:
        return self.inner.citation_turn(reply)

    def intent(self, text: str) -> Verdict | None:
        return self.inner.intent(text)


def _calls(reply: Any) -> list[dict[str, Any]]:
    """A reply's tool calls that have a function (nothing about a reply is trusted)."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list):
        return []
    return [
        call for call in calls if isinstance(call, dict) and isinstance(call.get("function"), dict)
    ]


def _name(call: dict[str, Any]) -> str:
    name = call["function"].get("name")
    return name if isinstance(name, str) else ""


def _with_calls(reply: Any, calls: list[dict[str, Any]]) -> Any:
    """`reply` holding only `calls` (the verdict's, read without the exploring ones)."""
    if not _calls(reply):
        return reply
    message = reply["choices"][0]["message"] | {"tool_calls": calls}
    return reply | {"choices": [reply["choices"][0] | {"message": message}]}


def _read_only(verdict: JudgeVerdict, shown: dict[str, str]) -> JudgeVerdict:
    """`verdict` with every citation whose span reaches text the judge was not shown (masked
    by UNREAD) unverified: a quote of the mask is no quote of the run."""
    cited = [quoted_unread(c, shown, UNREAD) for c in verdict.citations]
    return replace(verdict, citations=cited)

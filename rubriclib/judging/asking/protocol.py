"""Pure: what one judgment asks and how its reply is read (`Asking`), for a rubric's verdict
(`RubricAsking`: its system message for each tool mode, its request from `request`, its reply
read by `reply`), and the neutral turns that ask again after a reply that was not a verdict
call. No I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from rubriclib.judging.asking.reply import (
    BrokenFields,
    Explored,
    JudgeVerdict,
    Verdict,
    failing,
    read_reply,
    reply_text,
    text_intent,
    unsupported,
)
from rubriclib.judging.asking.request import Mode, request_body, sampling, tool_mode
from rubriclib.judging.prompt.agent_run import CutRun
from rubriclib.judging.prompt.exploring import ExploredRun
from rubriclib.judging.prompt.render import Prompt, chat, item_prompts, system_message
from rubriclib.rubrics import LABEL_TOOL, PAIRWISE_TOOL, SCORE_TOOL, VERDICT_TOOL, Rubric

if TYPE_CHECKING:
    from rubriclib.item import Item, Transcript


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
    elif rubric.scale == "labels":
        ask = f"call `{LABEL_TOOL}` with a short `reason` and `label`: one of {_labels(rubric)}"
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


def fields_turn(reply: Any, broken: BrokenFields) -> list[dict[str, Any]]:
    """The turn that asks again for a verdict call whose output fields broke their schema,
    naming each field and what is wrong with it (the schema's words, never the verdict)."""
    listed = "\n".join(f"- {problem}" for problem in broken.problems)
    return ask_again(
        reply,
        "Please give your verdict again as one tool call. These output fields did not fit "
        f"their schema:\n{listed}",
    )


def _labels(rubric: Rubric) -> str:
    return ", ".join(rubric.labels or {})


def ask_again(reply: Any, ask: str) -> list[dict[str, Any]]:
    """A corrective turn: the reply's text (if any) as the assistant's, then `ask`."""
    text = reply_text(reply)
    turn: list[dict[str, Any]] = [{"role": "assistant", "content": text}] if text else []
    return [*turn, {"role": "user", "content": ask}]


class Asking(Protocol):
    """What one judgment asks and how its reply is read: a rubric's verdict (`RubricAsking`)
    or one checklist item's answer (`checklist_protocol.ItemAsking`). The judge drives either
    through the same retries, quirk fallbacks, cache and corrective turn."""

    def system(self, mode: Mode) -> str:
        """The system message of a request sent in `mode`: it names exactly the tools that
        request offers (`render.chat` puts it before the prompt's user message)."""
        ...

    def mode(self, quirks: set[str], correcting: bool) -> Mode: ...

    def sampling(
        self, temperature: float | None, max_tokens: int | None, quirks: set[str]
    ) -> dict[str, Any]: ...

    def body(
        self, messages: list[dict[str, Any]], mode: Mode, model: str, sampling: dict[str, Any]
    ) -> dict[str, Any]: ...

    def read(self, reply: Any, mode: Mode) -> JudgeVerdict | Explored | str:
        """The verdict in a reply, what is wrong with it, or (exploring a run) the turn that
        answers its exploring calls."""
        ...

    def corrective_turn(self, reply: Any, mode: Mode) -> list[dict[str, Any]]: ...

    def failing(self, verdict: JudgeVerdict) -> bool: ...

    def unsupported(self, verdict: JudgeVerdict) -> bool: ...

    def citation_turn(self, reply: Any) -> list[dict[str, Any]]: ...

    def intent(self, text: str) -> Verdict | None: ...


class PlainSampling:
    """`Asking.sampling` for an asking that shapes none of its own: `request.sampling`."""

    def sampling(
        self, temperature: float | None, max_tokens: int | None, quirks: set[str]
    ) -> dict[str, Any]:
        return sampling(temperature, max_tokens, quirks)


class OneToolAsking(PlainSampling):
    """`Asking.mode` for an asking that offers one tool: forced by name where the endpoint
    allows it, else by `required` (with one tool, the same), else `auto`."""

    def mode(self, quirks: set[str], correcting: bool) -> Mode:
        if "no_named_tool_choice" not in quirks:
            return "named"
        return "auto" if "no_required_tool_choice" in quirks else "required"


@dataclass(frozen=True)
class RubricAsking(PlainSampling):
    """Asking for the rubric's verdict: its request from `request`, its reply read by `reply`,
    the turns above; citations are checked against `blocks` (`render.item_blocks`)."""

    rubric: Rubric
    blocks: Mapping[str, str] = field(default_factory=dict)
    transcript: Transcript | None = None
    """The item's agent run, whose block ids the system message names."""

    def system(self, mode: Mode) -> str:
        return system_message(self.rubric, mode, self.transcript)

    def mode(self, quirks: set[str], correcting: bool) -> Mode:
        return tool_mode(self.rubric, quirks, correcting)

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


Asked = tuple[Prompt, Asking]
"""One request of a vote: its prompt (rendered once per item judgment) and how it is asked."""


def verdict_requests(rubric: Rubric, item: Item, run: CutRun | ExploredRun | None) -> list[Asked]:
    """The requests of one vote on `item` for the rubric's verdict: one, or on a pairwise
    rubric one per order; `run` is the item's agent run as cut (`render.shown_run`)."""
    return [
        (prompt, RubricAsking(rubric, prompt.blocks, item.transcript))
        for prompt in item_prompts(rubric, item, run)
    ]


def first_messages(prompt: Prompt, asking: Asking) -> list[dict[str, str]]:
    """The messages a request starts with in the tool mode tried first on an endpoint that has
    refused nothing yet (as `render` shows them): what the prompt-size check counts."""
    return chat(asking.system(asking.mode(set(), correcting=False)), prompt.user)

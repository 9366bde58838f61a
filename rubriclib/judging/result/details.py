"""Pure: what a result's `details` hold, as typed models with the JSON keys results files,
reports and the verdict cache have always had. A key is written only when it was set (as
before, a pass-fail result has no `raw_score`), so a result dumps as it did when it was a dict;
an unknown key is a validation error, so a typo in a results file or a builder is found.
Each block still reads like the dict it was: `details["rubric"]["version"]`, `.get("p")`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

Verdict = Literal["pass", "fail", "error"]
Winner = Literal["output", "baseline", "tie"]
"""What won a pairwise comparison: the candidate output, the baseline, or neither."""
Position = Literal["A", "B", "tie"]
"""A judge's answer in one pairwise order: Response A, Response B, or a tie."""


class Block(BaseModel):
    """A block of `details`: typed attributes, written with only the keys that were set, and
    read like the dict it was. `block["key"]` is the value of a key that is set (KeyError when
    it is not, as for a missing dict key); `block.get("key", default)` the value or `default`;
    `"key" in block` whether it is set. A name that is not a field at all is a KeyError
    saying so in all three: a typo is an error, never a silent default. A block equals the
    dict it is written as."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        written: dict[str, Any] = handler(self)
        return {key: value for key, value in written.items() if key in self.model_fields_set}

    @classmethod
    def _field(cls, key: object) -> str:
        if not isinstance(key, str) or key not in cls.model_fields:
            known = ", ".join(cls.model_fields)
            raise KeyError(f"{cls.__name__} has no such field: {key!r} (its fields: {known})")
        return key

    def __getitem__(self, key: str) -> Any:
        if self._field(key) not in self.model_fields_set:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        """The value of `key` when it is set, else `default`; KeyError for a name that is not
        a field."""
        return getattr(self, key) if self._field(key) in self.model_fields_set else default

    def __contains__(self, key: object) -> bool:
        return self._field(key) in self.model_fields_set

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]
        """The keys that are set, as a dict's are iterated."""
        return iter(self.keys())

    def keys(self) -> list[str]:
        """The keys that are set, in the order they are written (so `dict(block)` and
        `{**block}` work, as they did on the dict)."""
        return [name for name in type(self).model_fields if name in self.model_fields_set]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.model_dump() == dict(other)
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # equal to a dict, so never hashable

    def adding(self, **more: Any) -> Self:
        """This block with `more` set (validated: an unknown key is an error)."""
        kept = {name: getattr(self, name) for name in self.model_fields_set}
        return self.model_validate(kept | more)


def as_written(details: Block | Mapping[str, Any]) -> Mapping[str, Any]:
    """A block as the JSON object it is written as; a mapping (a results file's line, read
    as JSON and not trusted) as it is."""
    return details.model_dump() if isinstance(details, Block) else details


class Usage(Block):
    """The tokens a judgment's requests used, as the endpoint reported them (0 if it did not)."""

    prompt_tokens: int
    completion_tokens: int


class RubricIdentity(Block):
    """The exact rubric a verdict was judged by (`Rubric.identity`)."""

    name: str
    version: str
    scale: str
    source: str
    digest: str
    """The sha256 of what decides a verdict: a changed rubric has another."""


class JudgeInfo(Block):
    """Who judged and what it cost (`details.judge`): summed over votes, orders, checklist
    items or a panel's members where there were several requests."""

    model: str
    """The judge's model; a panel's name for a panel (what `--resume` matches)."""
    mode: str | None
    """How the verdict call was forced (`named`, `required`, `auto`, `text`), or under
    `protocol: json` how the JSON answer was asked for (`json_schema`, `json_object`); None
    when no request was answered."""
    protocol: Literal["tools", "json"] | None = None
    """How the verdict was asked for: `tools` (a tool call) or `json` (one JSON object; under
    `protocol: auto`, where the endpoint refused tools); absent when nothing was sent, and in
    results written before it was recorded (tools)."""
    temperature: float | None = None
    """The temperature sent (the first request's, over votes); absent when none was sent."""
    seed: int | None = None
    """The seed sent (`--seed`: the first vote's; vote and trial K get the seed plus their
    offset); absent when none was sent."""
    served_model: str | None = None
    """The model the endpoint says answered (its reply's `model`), beside the model asked
    for; absent when no reply named one."""
    system_fingerprint: str | None = None
    """The reply's `system_fingerprint`, when the endpoint gives one."""
    attempts: int
    """Every request sent."""
    retries: int = 0
    """Requests sent again after a retryable failure (0, and absent, in results written
    before they were counted)."""
    cached: bool = False
    """The verdict came from the verdict cache, with no request (absent in results written
    before there was one)."""
    corrected: bool
    """A corrective turn was needed."""
    latency_ms: int
    usage: Usage
    correction: str | None = None
    """Why the corrective turn was needed; set only when one was."""
    answers: Literal["one-call"] | None = None
    """How a checklist's items were answered, set only when all in one call (`one-call`):
    items asked one by one are told by their entries (`p_yes` for probability answers)."""


class Citation(Block):
    """One checked citation (`citations.checked_citations`): a quote from a block the judge
    was shown, `verified` (with its `span`) or `unverified` (`found_in`, `note`). Read back
    from a judgment's parts (`citations.given_citations`), it says `by` whom, and `request`
    (0 or 1) for a pairwise order's."""

    by: str | None = None
    block: str | None
    quote: str
    status: Literal["verified", "unverified"]
    span: list[int] | None = None
    found_in: str | None = None
    note: str | None = None
    request: int | None = None


class PairwiseOrder(Block):
    """One order of a pairwise comparison: `output-first` or `baseline-first`, the judge's
    answer in it (A, B or tie; None when it errored), its reason and requests."""

    order: str
    winner: Position | None
    reason: str
    attempts: int
    retries: int
    citations: list[Citation] | None = None


class Pairwise(Block):
    """`details.pairwise`: the winner (None on an error), each order (one comparison), or
    each vote's or panel judge's block (several, `votes` or `judges`; a member that was never
    judged gives an empty block), and the position flips: comparisons whose answer changed
    when the order was swapped."""

    winner: Winner | None = None
    orders: list[PairwiseOrder] | None = None
    votes: list[Pairwise] | None = None
    judges: list[Pairwise] | None = None
    position_flip: bool | None = None
    flips: int = 0
    comparisons: int = 0


class ChecklistEntry(Block):
    """One checklist item's answer in `details.checklist`: yes or no (None when asking it
    errored), the judge's reason and requests; a probability answer's `p`, `p_yes`, `mass`
    and whether it came from `logprobs`, where known."""

    id: str
    answer: Literal["yes", "no"] | None
    reason: str
    attempts: int
    cached: bool
    p: float | None = None
    """The probability of `answer`, where the endpoint returned logprobs."""
    p_yes: float | None = None
    mass: float | None = None
    """The probability mass of the yes and no tokens among the top logprobs."""
    logprobs: bool | None = None
    citations: list[Citation] | None = None


class ProfileDecision(Block):
    """`details.profile`: the judge profile that decided a probability-answers verdict (its
    file and sha256), its p(pass), and what the checklist rule said (`rule`)."""

    path: str
    digest: str
    p_pass: float
    rule: Verdict


class Votes(Block):
    """`details.votes`, the tally of several votes of one judgment: asked and cast, each
    vote's verdict and reason (and its 1-5 score, or pairwise winner), the share of answering
    votes that agree (None when none decided), errors, votes read from the cache, and each
    vote's citations when any gave some."""

    asked: int
    cast: int
    verdicts: list[Verdict]
    reasons: list[str]
    agreement: float | None
    errors: int
    cached: int
    scores: list[int | None] | None = None
    citations: list[list[Citation]] | None = None
    winners: list[Winner | None] | None = None
    labels: list[str | None] | None = None
    """Each vote's label, on a labels rubric."""
    outputs: list[dict[str, Any] | None] | None = None
    """Each vote's output fields, on a rubric that has them."""


class Exploration(Block):
    """`details.exploration`: what a judge exploring an agent run did: the requests it took,
    the blocks it read (ids, in order), the patterns it searched and the characters its tools
    showed it."""

    turns: int
    blocks_read: list[str]
    searches: list[str]
    characters_read: int


class PanelMember(Block):
    """One judge's line in `details.panel.judges`: its model, endpoint, verdict, reason and
    score (its 1-5 score or pairwise winner, its votes and citations where they apply), and
    what its requests cost."""

    model: str
    endpoint: str
    verdict: Verdict
    reason: str
    score: float | None
    raw_score: int | None = None
    winner: Winner | None = None
    label: str | None = None
    votes: Votes | None = None
    citations: list[Citation] | None = None
    output: dict[str, Any] | None = None
    """The output fields this judge filled in, on a rubric that has them."""
    evidence: Literal["whole", "whole-cut", "explored"] | None = None
    not_explored: str | None = None
    exploration: Exploration | None = None
    """How this judge was shown the item's agent run (`Details.evidence`), why a cut run was
    not explored, and what it read exploring it."""
    attempts: int
    retries: int
    usage: Usage


class Panel(Block):
    """`details.panel`: the rule that combined the judges (`majority`, `unanimous`, `any`),
    each judge's line, how many answered and errored, and the share that agree (None when
    none decided)."""

    aggregate: str
    judges: list[PanelMember]
    answered: int
    errors: int
    agreement: float | None


class Turn(Block):
    """One turn of a row letta grades turn by turn (`details.turns`)."""

    turn: int
    verdict: Verdict
    score: float | None
    reason: str


class Cut(Block):
    """A block of an agent run cut in the middle to fit the prompt: its characters and how
    many were cut."""

    block: str
    characters: int
    cut: int


class RunShown(Block):
    """`details.transcript`: how an agent run was shown to the judge: its shape, its number
    of messages, the prompt limit it was rendered for, and what was cut from which block."""

    shape: str
    messages: int
    max_prompt_tokens: int
    cut: list[Cut]
    not_explored: str | None = None
    """Why a run that was cut was not explored instead (`details.evidence` `whole-cut`)."""


class Details(Block):
    """`GradeResult.details`: the rubric and the judge of every result, and the blocks of how
    it was reached, each set only where it applies (absent keys are not written). Read by
    attribute (`details.judge.usage.prompt_tokens`) or, as before, by key
    (`details["rubric"]["version"]`)."""

    rubric: RubricIdentity
    judge: JudgeInfo
    raw_score: int | None = None
    """The judge's score on a 1-5 rubric."""
    label: str | None = None
    """The judge's label on a labels rubric (the verdict follows from the rubric's labels)."""
    winner: Position | None = None
    """One pairwise order's answer (A, B or tie), before the two orders are combined."""
    citations: list[Citation] | None = None
    """The judge's citations, checked, when it gave some."""
    answer: Literal["yes", "no"] | None = None
    """One checklist item's answer, before the items are combined."""
    p: float | None = None
    p_yes: float | None = None
    mass: float | None = None
    logprobs: bool | None = None
    pairwise: Pairwise | None = None
    checklist: list[ChecklistEntry] | None = None
    profile: ProfileDecision | None = None
    votes: Votes | None = None
    panel: Panel | None = None
    turns: list[Turn] | None = None
    transcript: RunShown | None = None
    evidence: Literal["whole", "whole-cut", "explored"] | None = None
    """How an agent run was shown: whole, whole but cut to fit, or explored through tools."""
    exploration: Exploration | None = None
    output: dict[str, Any] | None = None
    """The rubric's `output` fields as the judge filled them in, checked against their schema
    (an object's `citations` checked as the verdict's are); of votes, the chosen vote's."""

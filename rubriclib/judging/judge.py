"""Ask an OpenAI-compatible judge for a verdict through tool calls (or one JSON object): the module
that talks to it."""

from __future__ import annotations

import copy
import os
from collections.abc import Hashable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from rubriclib.config import checked_base_url, credential, judge_key, resolve
from rubriclib.item import Item
from rubriclib.judging.asking.exploring import EXPLORING_TURNS
from rubriclib.judging.cache import VerdictCache
from rubriclib.judging.endpoints.endpoint import Endpoint, Limits
from rubriclib.judging.endpoints.failures import EndpointError, EndpointUnusable
from rubriclib.judging.endpoints.transport import (
    SdkTransport,
    Transport,
    chosen_transport,
    display_url,
)
from rubriclib.judging.grading import ManyJudgments
from rubriclib.judging.judgments.modes import Modes, Remembered
from rubriclib.judging.request_steps import request_steps
from rubriclib.judging.result import GradeResult
from rubriclib.judging.steps import Steps, adrive, drive, run_to_end
from rubriclib.rubrics import Rubric
from rubriclib.settings import (
    AnswerMode,
    Evidence,
    JudgeSettings,
    Mode,
    Protocol,
    checked_choice,
    checked_exploring,
    checked_modes,
    checked_seed,
)

if TYPE_CHECKING:
    from rubriclib.judging.endpoints.pacer import Pacer, Pacing


class Judge(ManyJudgments):
    """A judge model behind any OpenAI-compatible Chat Completions endpoint.

    Args:
        model: The judge model; None takes `RUBRICLIB_MODEL`, the project's config or
            `gpt-4o-mini`.
        base_url: Any OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama, a proxy); None takes
            `OPENAI_BASE_URL`, the project's config or OpenAI's. Checked before any request.
        api_key: The endpoint's key; None takes `OPENAI_API_KEY` (required unless a base URL
            is set). It appears in no result, log line, error, cache or report.
        temperature: Sampling temperature; None sends none. Votes need one above 0.
        timeout: Seconds each request may take.
        max_retries: Times a retryable failure (connection error, timeout, HTTP 408, 409, 429,
            5xx) is sent again, with exponential backoff and jitter.
        max_tokens: The judge's completion limit per request.
        total_timeout: Seconds the whole judgment may take; None is
            `timeout * (max_retries + 2) + backoff_max`.
        backoff_base: Seconds before the first retry, doubling after each.
        backoff_max: The most seconds between two retries.
        max_retry_after: The most seconds a server's `Retry-After` is honoured.
        cache: The verdict cache: False (off), True (the user cache folder) or a folder.
        transport: How requests travel: "auto" (aiohttp; `grade` uses the openai SDK's sync
            client), "sdk" (the openai SDK's clients) or any `Transport`, which `grade` and
            `agrade` both send through.
        votes: Independent judgments per item; the majority wins and a tie never passes.
        capabilities: Remember the endpoint's quirks across runs: False, True (beside the
            verdict cache) or a folder.
        mode: "holistic" (one request asks for the verdict) or "checklist" (each checklist item
            asked on its own, the verdict computed from the answers).
        max_prompt_tokens: The largest prompt a judgment sends (an agent run gets half); None
            takes `RUBRICLIB_MAX_PROMPT_TOKENS`, the project's config or 128,000.
        answers: How checklist items are answered: "tool" (a call with a reason),
            "probability" (one word, p(yes) read from its logprobs) or "one-call" (every item
            in one tool call); the last two need mode="checklist".
        protocol: How verdicts are asked for: "tools" (a tool call), "json" (one JSON object
            in the verdict tool's schema, through `response_format`, for endpoints that call
            tools badly) or "auto" (tools, then JSON once the endpoint refuses tools: the
            quirk `no_tools`); None takes `RUBRICLIB_PROTOCOL`, the project's config or
            "tools".
        seed: The seed sent with every request (None sends none). Each vote and trial is sent
            the seed plus its offset (the first judgment of an item the seed itself), so
            votes stay independent samples; recorded in `details.judge.seed`.
        evidence: How an agent run is shown: "whole" (cut in the middle to fit), "explore"
            (the judge lists, reads and searches its blocks through tools) or "auto" (whole
            when it fits uncut, else explored where exploring applies); None takes
            `RUBRICLIB_EVIDENCE`, the project's config or "auto".
        exploring_turns: The requests an explored judgment may spend before its verdict.
        exploring_characters: The characters its tools may show (None: 80% of what
            `max_prompt_tokens` leaves after the first request).

    Raises:
        JudgeConfigError: A setting out of range, or a key or base URL that cannot be used.
    """

    mode: Mode
    """`holistic`: one request asks for the rubric's verdict. `checklist`: each of the
    rubric's checklist items is asked on its own (one request per item, at once) and the
    verdict is computed from the answers (`checklist.checklist_verdict`); a vote is one pass
    over every item."""
    answers: AnswerMode
    """How checklist items are answered: `tool`, a call to `answer` with a reason; or
    `probability`, one word in plain text whose yes/no probability is read from the token
    logprobs (`probability_answers`): one generated token per item; or `one-call`, every item
    answered in one call to `answer_checklist` (`one_call`): one request per vote."""
    protocol: Protocol
    """How verdicts are asked for: `tools`, a tool call; `json`, one JSON object in the
    verdict tool's schema (`json_answers`); or `auto`, tools until the endpoint refuses them."""
    seed: int | None
    """The seed sent (plus each vote's and trial's offset); None sends none."""
    evidence: Evidence
    """How an agent run is shown: `whole`, `explore` or `auto` (`settings.Evidence`)."""
    exploring: tuple[int, int | None]
    """An explored judgment's budget: its turns and characters (None: from the prompt limit)."""
    votes: int
    """Independent judgments per item: the majority verdict (on 1-5, the median score) wins, a
    tie never passes, and voting stops once a majority is decided."""
    max_prompt_tokens: int
    """The prompt-size limit an agent run's blocks are cut to fit (half of it is the run's)."""
    cache: VerdictCache | None
    """Where verdicts are kept and looked up; None when caching is off."""
    transport: Transport
    """How requests travel, chosen once: "auto" is aiohttp (`HttpTransport`, proxied or not; a
    tenth of the SDK's CPU per request), "sdk" the openai SDK's async client, or any
    `transport.Transport` (a batch's, a test's), which gets every request, `grade`'s too, with
    its custom_id."""
    _at: Endpoint
    """The endpoint, its key and limits, and the quirks it showed (remembered across runs in
    `capabilities`)."""
    _sync: SdkTransport | None
    """What `grade` sends with beside "auto" and "sdk": the SDK's sync client; None for an
    injected Transport, through which `grade` judges as `agrade` does."""
    _remembered: Remembered
    """What it keeps across items: the project's profiles for this model, the determinism
    check of its votes."""
    _in_flight: int
    """Judgments running now, in the running event loop."""
    _run_open: bool
    """Whether an engine run (a judgment with a Pacer) has used the transport since the last
    `aclose`: the run closes it; an ad-hoc `agrade` closes it when it ends."""

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        timeout: float = 120.0,
        max_retries: int = 2,
        *,
        max_tokens: int | None = 1024,
        total_timeout: float | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        max_retry_after: float = 30.0,
        cache: bool | str | os.PathLike[str] = False,
        transport: Literal["auto", "sdk"] | Transport = "auto",
        votes: int = 1,
        capabilities: bool | str | os.PathLike[str] = False,
        mode: Mode = "holistic",
        max_prompt_tokens: int | None = None,
        answers: AnswerMode = "tool",
        protocol: Protocol | None = None,
        seed: int | None = None,
        evidence: Evidence | None = None,
        exploring_turns: int = EXPLORING_TURNS,
        exploring_characters: int | None = None,
    ) -> None:
        checked_modes(votes, mode, answers)
        self.seed = checked_seed(seed)
        self.mode, self.answers, self.votes = mode, answers, votes
        self.protocol: Protocol = checked_choice("protocol", resolve("protocol", protocol).value)
        self.evidence: Evidence = checked_choice("evidence", resolve("evidence", evidence).value)
        self.exploring = checked_exploring(self, exploring_turns, exploring_characters)
        self._remembered = Remembered()
        self.model = resolve("model", model or None).value
        self.max_prompt_tokens = int(resolve("max_prompt_tokens", max_prompt_tokens).value)
        self.base_url = checked_base_url(base_url)
        self.temperature, self.max_tokens = temperature, max_tokens
        self.cache = None if cache is False else VerdictCache(None if cache is True else cache)
        limits = Limits.of(
            timeout, max_retries, total_timeout, backoff_base, backoff_max, max_retry_after
        )
        remembered = None
        if capabilities is not False:
            remembered = VerdictCache.beside(self.cache, capabilities)
        found = judge_key(api_key, self.base_url)
        key = str(found.value)
        url = display_url(self.base_url)
        self._at = Endpoint(url, self.model, key, limits, remembered, key_origin=found.origin)
        self.transport = chosen_transport(transport, self.base_url, key)
        sdk = transport in ("auto", "sdk")
        self._sync = SdkTransport(self.base_url, key) if sdk else None
        self._in_flight, self._run_open = 0, False
        self._records_only = False

    @property
    def endpoint(self) -> str:
        """The endpoint as scheme://host[:port]/path: no credentials, no query string."""
        return self._at.url

    @property
    def quirks(self) -> set[str]:
        """Server quirks learned so far: `no_required_tool_choice`, `no_named_tool_choice`,
        `no_temperature`, `max_completion_tokens`, `no_logprobs`, `no_json_schema`, `no_seed`,
        `no_tools`, `no_exploring`.
        Kept for every later request of this Judge."""
        return self._at.quirks

    @property
    def timeout(self) -> float:
        """Seconds each request may take."""
        return self._at.limits.timeout

    @property
    def max_retries(self) -> int:
        """Times a retryable failure is sent again."""
        return self._at.limits.max_retries

    @property
    def total_timeout(self) -> float:
        """Seconds the whole judgment may take."""
        return self._at.limits.total_timeout

    @property
    def checklist_answers(self) -> AnswerMode | None:
        """How its results' checklist items were answered (`answers`), None when they are
        not checklist results (`mode="holistic"`)."""
        return self.answers if self.mode == "checklist" else None

    @property
    def pace_key(self) -> Hashable:
        """The endpoint and a digest of the key: see `Grader.pace_key`."""
        return self._at.pace_key

    @property
    def api_key(self) -> str:
        """The key sent with every request ("not-needed" for an endpoint that takes none): a
        batch of this judge's requests is uploaded with it."""
        return self._at.api_key

    def __repr__(self) -> str:
        return f"Judge(model={self.model!r}, endpoint={self.endpoint!r})"

    def grade_item(self, rubric: Rubric, item: Item) -> GradeResult:
        """Judge one Item (what `grade` calls): with the SDK's sync client, or through an
        injected Transport as `agrade_item` does."""
        if self._sync is None:
            return run_to_end(lambda: self.agrade_item(rubric, item))
        return drive(self._item_steps(rubric, item, 1, None), self._sync.post_sync)

    async def aclose(self) -> None:
        """Close the transport's connections of the running event loop (before that loop
        ends); judgments still running keep them until the last one ends."""
        self._run_open = False
        if not self._in_flight:
            await self.transport.aclose()

    def with_transport(
        self,
        transport: Transport,
        *,
        max_retries: int | None = None,
        total_timeout: float | None = None,
        records_only: bool = False,
    ) -> Judge:
        """A new Judge like this one that sends through `transport` (a batch's), with other
        retries and overall limit if given; this one is unchanged. The verdict cache is shared.
        `records_only`: the transport keeps requests and answers none (a batch file), so a
        pairwise vote asks for its swapped order even though the first order got no answer."""
        judge = copy.copy(self)
        judge.transport = transport
        limits = replace(
            self._at.limits,
            max_retries=self.max_retries if max_retries is None else max_retries,
            total_timeout=total_timeout or self.total_timeout,
        )
        judge._at = self._at.copied(limits)
        judge._remembered = replace(self._remembered, profiles={})
        judge._sync = None
        judge._in_flight, judge._run_open = 0, False
        judge._records_only = records_only
        return judge

    @classmethod
    def from_settings(
        cls,
        settings: JudgeSettings,
        *,
        cache: bool | str | os.PathLike[str] = False,
        capabilities: bool | str | os.PathLike[str] = False,
        api_key: str | None = None,
        named_by: str = "api_key_env",
        max_prompt_tokens: int | None = None,
    ) -> Judge:
        """A Judge as `settings` say (an eval file's, a promptfoo assertion's, the command
        line's): fields left None take the environment, rubriclib.toml or the Judge's defaults.
        The key is `api_key` if given, else `settings.api_key_env`'s (which must be set: its
        place in the user's file is `named_by`), else OPENAI_API_KEY."""
        variable = settings.api_key_env if api_key is None else None
        if variable:
            api_key = credential(variable, named_by=named_by)
        options = settings.judge_settings().model_dump(
            exclude_none=True, exclude={"model", "base_url", "api_key_env"}
        )
        if settings.asks_checklist:  # answers="probability" or "one-call" imply checklist mode
            options["mode"] = "checklist"
        judge = cls(
            settings.model,
            settings.base_url,
            api_key,
            cache=cache,
            capabilities=capabilities,
            max_prompt_tokens=max_prompt_tokens,
            **options,
        )
        if variable:  # a refused key is named by its variable, not as `api_key`
            judge._at.key_origin = f"env {variable}"
        return judge

    async def agrade_item(
        self, rubric: Rubric, item: Item, *, trial: int = 1, pacing: Pacing | None = None
    ) -> GradeResult:
        """Judge one Item (`trial` numbers independent samples of it, each cached apart; each
        trial casts `votes` votes, one after another); every request waits on the run's pacer
        for this endpoint and key (`pacing`'s) when a run is given. Without one (an ad-hoc
        `agrade`), the transport's connections close when the last judgment running ends:
        nothing is left open when the caller's event loop ends. A run keeps them until its
        `aclose`."""
        self._in_flight += 1
        self._run_open = self._run_open or pacing is not None
        pacer = pacing.pacer(self.pace_key) if pacing is not None else None
        try:
            steps = self._item_steps(rubric, item, trial, pacer)
            return await adrive(steps, self.transport, pacer, self._at.signal)
        finally:
            self._in_flight -= 1
            if not self._in_flight and not self._run_open:
                await self.transport.aclose()

    def _item_steps(self, rubric: Rubric, item: Item, trial: int, pacer: Pacer | None) -> Steps:
        """Every step of one item's judgment in this Judge's mode and votes (`modes.Modes`)."""
        sampling = (self.temperature, self.max_tokens)
        modes = Modes(
            self._at,
            self.cache,
            sampling,
            self.mode,
            self.answers,
            self.votes,
            self.max_prompt_tokens,
            self._records_only,
            self._remembered,
            self.protocol,
            self.seed,
            self.evidence,
            *self.exploring,
        )
        return modes.item_steps(rubric, item, trial, pacer)

    async def asend(
        self,
        body: dict[str, Any],
        *,
        timeout: float,
        custom_id: str,
        pacing: Pacing | None = None,
    ) -> bytes:
        """One request that is not a judgment (align's optimizer) through this judge's
        transport, as a judgment's requests are sent (`request_steps`): retried after the
        judge's backoff when the failure is retryable, and waiting on the run's pacer for its
        endpoint and key (`pacing`'s). The quirks a refusal shows are learned for the body's own
        model, apart from the judge's. The reply's bytes.

        Raises:
            EndpointError: The request failed, or the run has stopped sending to the endpoint.
        """
        pacer = pacing.pacer(self.pace_key) if pacing is not None else None
        own = self._at.limits  # the judge's retries and backoff, over this request's timeout
        limits = Limits.of(
            timeout, own.max_retries, None, own.backoff_base, own.backoff_max, own.max_retry_after
        )
        sender = replace(self._at, model=body["model"], limits=limits, quirks=set())
        steps = request_steps(sender, lambda quirks: body, custom_id, custom_id)
        reply = await adrive(steps, self.transport, pacer, sender.signal)
        if isinstance(reply, EndpointUnusable):
            raise EndpointError(str(reply))
        if isinstance(reply, BaseException):
            raise reply
        return bytes(reply)

"""Ask an OpenAI-compatible judge for a verdict through tool calls: the module that talks to it."""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import time
from collections.abc import Hashable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from rubriclib.config import checked_base_url, credential, find_project, judge_key, resolve
from rubriclib.errors import JudgeConfigError
from rubriclib.item import Item
from rubriclib.judging.agent_run import run_details
from rubriclib.judging.cache import VerdictCache, cache_key, cached_result, stored_verdict
from rubriclib.judging.checklist_protocol import (
    ItemAsking,
    checklist_result,
    no_checklist,
    question_prompts,
)
from rubriclib.judging.failures import (
    EndpointUnusable,
    SignalKind,
    backoff_delay,
    describe,
    is_retryable,
    quirk_in,
    redact,
    signal_kind,
)
from rubriclib.judging.grading import ManyJudgments, unjudgeable
from rubriclib.judging.probability_answers import (
    ANSWER_MODES,
    ProbabilityAsking,
    probability_prompts,
)
from rubriclib.judging.profile import Applied, decided_by, profile_path, read_profile
from rubriclib.judging.protocol import (
    Asking,
    JudgeVerdict,
    Mode,
    RubricAsking,
    estimated_tokens,
    parse_reply,
    reply_text,
    too_large,
    usage_of,
)
from rubriclib.judging.render import item_prompts
from rubriclib.judging.result import (
    GradeResult,
    combine_orders,
    combine_votes,
    judge_details,
    majority_reached,
    make_result,
    not_judged,
    with_details,
    with_winner,
)
from rubriclib.judging.steps import Send, Steps, Together, Wait, adrive, drive, run_to_end
from rubriclib.judging.transport import SdkTransport, Transport, chosen_transport, display_url
from rubriclib.rubrics.checklist import ChecklistItem
from rubriclib.rubrics.rubric import Rubric
from rubriclib.settings import JudgeSettings

if TYPE_CHECKING:
    from rubriclib.judging.pacer import Pacer

logger = logging.getLogger("rubriclib")
UNSUPPORTED = "verdict not supported by a verified citation"
"""Why a failing verdict is corrected, and then an error, under `citations: required`."""


def _said(verdict: JudgeVerdict) -> str:
    """What a verdict says, in a reason: `fail`, `score 2`, `answer yes`."""
    if verdict.answer is not None:
        return f"answer {verdict.answer}"
    return f"score {verdict.raw_score}" if verdict.raw_score is not None else verdict.verdict


def _unsupported(verdict: JudgeVerdict, asked: bool) -> str:
    """The error of a failing verdict without a verified citation: after the turn that asked
    for one (`asked`), or when the one corrective turn went to a reply that was no verdict."""
    given = len(verdict.citations)
    cited = f"{given} citation(s), none verified" if given else "no citation"
    when = "after a turn asking for one" if asked else "and the one corrective turn was spent"
    return f"{UNSUPPORTED}: the judge said {_said(verdict)} with {cited}, {when}"


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
        answers: How checklist items are answered: "tool" (a call with a reason) or
            "probability" (one word, p(yes) read from its logprobs; needs mode="checklist").

    Raises:
        JudgeConfigError: A setting out of range, or a key or base URL that cannot be used.
    """

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
        mode: Literal["holistic", "checklist"] = "holistic",
        max_prompt_tokens: int | None = None,
        answers: Literal["tool", "probability"] = "tool",
    ) -> None:
        if isinstance(votes, bool) or not isinstance(votes, int) or votes < 1:
            raise JudgeConfigError(f"votes must be a whole number of at least 1, not {votes!r}")
        if mode not in ("holistic", "checklist"):
            raise JudgeConfigError(f"mode must be 'holistic' or 'checklist', not {mode!r}")
        if answers not in ANSWER_MODES:
            raise JudgeConfigError(f"answers must be 'tool' or 'probability', not {answers!r}")
        if answers == "probability" and mode != "checklist":
            raise JudgeConfigError(
                "answers='probability' reads checklist items' answers: use it with mode='checklist'"
            )
        self.mode = mode
        """`holistic`: one request asks for the rubric's verdict. `checklist`: each of the
        rubric's checklist items is asked on its own (one request per item, at once) and the
        verdict is computed from the answers (`checklist.checklist_verdict`); a vote is one
        pass over every item."""
        self.answers = answers
        """How checklist items are answered: `tool`, a call to `answer` with a reason; or
        `probability`, one word in plain text whose yes/no probability is read from the
        token logprobs (`probability_answers`): one generated token per item."""
        self._profiles: dict[str, Applied | None] = {}
        """The project's profile for this model, by rubric digest (None: none applies)."""
        self.votes = votes
        """Independent judgments per item: the majority verdict (on 1-5, the median score)
        wins, a tie never passes, and voting stops once a majority is decided."""
        self._determinism_checked = False
        self.model = resolve("model", model or None).value
        self.max_prompt_tokens = int(resolve("max_prompt_tokens", max_prompt_tokens).value)
        """The prompt-size limit an agent run's blocks are cut to fit (half of it is the
        run's); None takes RUBRICLIB_MAX_PROMPT_TOKENS, the project's config or 128,000."""
        self.base_url = checked_base_url(base_url)
        self._endpoint = display_url(self.base_url)
        self._api_key = judge_key(api_key, self.base_url)
        self.temperature = temperature
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.total_timeout = total_timeout or timeout * (max_retries + 2) + backoff_max
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.quirks: set[str] = set()
        """Server quirks learned so far: `no_required_tool_choice`, `no_named_tool_choice`,
        `no_temperature`, `max_completion_tokens`. Kept for every later request of this Judge."""
        self.transport: Transport = chosen_transport(transport, self.base_url, self._api_key)
        """How requests travel, chosen here once: "auto" is aiohttp (`HttpTransport`, proxied
        or not; a tenth of the SDK's CPU per request), "sdk" the openai SDK's async client, or
        any `transport.Transport` (a batch's, a test's), which gets every request, `grade`'s
        too, with its custom_id."""
        self._sync = (
            None if transport not in ("auto", "sdk") else SdkTransport(self.base_url, self._api_key)
        )
        """What `grade` sends with beside "auto" and "sdk": the SDK's sync client; None for an
        injected Transport, through which `grade` judges as `agrade` does."""
        self._in_flight = 0
        """Judgments running now, in the running event loop."""
        self._run_open = False
        """Whether an engine run (a judgment with a Pacer) has used the transport since the
        last `aclose`: the run closes it; an ad-hoc `agrade` closes it when it ends."""
        self.cache: VerdictCache | None = None
        """Where verdicts are kept and looked up (`cache=True`: the user cache folder; a path:
        that folder); None when caching is off."""
        if cache is not False:
            self.cache = VerdictCache(None if cache is True else cache)
        self._capabilities: VerdictCache | None = None
        """Where the quirks an endpoint showed for this model are remembered across runs
        (`capabilities=True`: the user cache folder; a path: that folder), so a new process
        starts from the fallback instead of being refused again; None when not remembered."""
        if capabilities is not False:
            self._capabilities = VerdictCache.beside(self.cache, capabilities)
            self.quirks |= self._capabilities.known_quirks(self._endpoint, self.model)

    @property
    def endpoint(self) -> str:
        """The endpoint as scheme://host[:port]/path: no credentials, no query string."""
        return self._endpoint

    @property
    def checklist(self) -> Literal["tool", "probability"] | None:
        """How its results' checklist items were answered (`answers`), None when they are
        not checklist results (`mode="holistic"`)."""
        return self.answers if self.mode == "checklist" else None

    @property
    def pace_key(self) -> Hashable:
        """The endpoint and a digest of the key: see `Grader.pace_key`."""
        return (self._endpoint, hashlib.sha256(self._api_key.encode()).hexdigest())

    @property
    def api_key(self) -> str:
        """The key sent with every request ("not-needed" for an endpoint that takes none): a
        batch of this judge's requests is uploaded with it."""
        return self._api_key

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
    ) -> Judge:
        """A new Judge like this one that sends through `transport` (a batch's), with other
        retries and overall limit if given; this one is unchanged. The verdict cache is shared."""
        judge = copy.copy(self)
        judge.transport = transport
        judge.quirks = set(self.quirks)
        judge._sync = None
        judge._in_flight, judge._run_open = 0, False
        if max_retries is not None:
            judge.max_retries = max_retries
        if total_timeout is not None:
            judge.total_timeout = total_timeout
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
        if api_key is None and settings.api_key_env:
            api_key = credential(settings.api_key_env, named_by=named_by)
        options = settings.judge_settings().model_dump(
            exclude_none=True,
            exclude={"model", "base_url", "api_key_env", "checklist", "checklist_answers"},
        )
        if settings.checklist is not None or settings.checklist_answers is not None:
            options["mode"] = "checklist" if settings.asks_checklist else "holistic"
        if settings.checklist_answers is not None:
            options["answers"] = settings.checklist_answers
        return cls(
            settings.model,
            settings.base_url,
            api_key,
            cache=cache,
            capabilities=capabilities,
            max_prompt_tokens=max_prompt_tokens,
            **options,
        )

    async def agrade_item(
        self, rubric: Rubric, item: Item, *, trial: int = 1, pacer: Pacer | None = None
    ) -> GradeResult:
        """Judge one Item (`trial` numbers independent samples of it, each cached apart; each
        trial casts `votes` votes, one after another); every request waits for `pacer` (the
        engine's) when one is given. Without one (an ad-hoc `agrade`), the transport's
        connections close when the last judgment running ends: nothing is left open when the
        caller's event loop ends. An engine run keeps them until its `aclose`."""
        self._in_flight += 1
        self._run_open = self._run_open or pacer is not None
        try:
            steps = self._item_steps(rubric, item, trial, pacer)
            return await adrive(steps, self.transport, pacer, self.endpoint_signal)
        finally:
            self._in_flight -= 1
            if not self._in_flight and not self._run_open:
                await self.transport.aclose()

    def _combined(self, rubric: Rubric, votes: list[GradeResult]) -> GradeResult:
        """One vote's result as it is when one was asked for; else the votes combined, and on
        the first item judged at temperature 0, a warning when the votes were copies."""
        if self.votes == 1:
            return votes[0]
        answered = [vote for vote in votes if vote.verdict != "error"]
        if not self._determinism_checked and len(answered) > 1:
            self._determinism_checked = True
            copies = len({(vote.verdict, vote.reason) for vote in answered}) == 1
            if copies and self.temperature == 0:
                logger.warning(
                    "%d votes at temperature 0 came back identical (same verdict, same reason): "
                    "this endpoint looks deterministic there, so the votes are copies, not "
                    "independent samples; set a temperature above 0 (e.g. 0.7) for votes to "
                    "mean something",
                    len(answered),
                )
        return combine_votes(rubric, votes, self.votes)

    def _item_steps(self, rubric: Rubric, item: Item, trial: int, pacer: Pacer | None) -> Steps:
        """Every step of one item's judgment: its votes, one after another, until a majority is
        decided (or `pacer`, the run's, has stopped sending to the endpoint), combined."""
        if cause := unjudgeable(rubric, item, self.model):
            return cause
        checklist = self.mode == "checklist"
        if checklist and not rubric.checklist:
            return not_judged(rubric, self.model, no_checklist(rubric))
        prompter = item_prompts
        if checklist:
            prompter = probability_prompts if self.answers == "probability" else question_prompts
        prompts = prompter(rubric, item, self.max_prompt_tokens)
        rendered = [messages for messages, _ in prompts]
        shown = [blocks for _, blocks in prompts]
        size = max(estimated_tokens(rubric, request) for request in rendered)
        if (why := too_large(size, self.max_prompt_tokens)) is not None:
            return not_judged(rubric, self.model, why)  # never sent
        cast = self._checklist_vote if checklist else self._vote
        votes: list[GradeResult] = []
        for vote in range(1, self.votes + 1):
            votes.append((yield from cast(rubric, rendered, shown, trial, vote)))
            if majority_reached(votes, self.votes) or (pacer is not None and pacer.dead):
                break
        result = self._combined(rubric, votes)
        if item.transcript is None or rubric.scale == "pairwise":
            return result
        return with_details(result, transcript=run_details(item, self.max_prompt_tokens))

    def _vote(
        self,
        rubric: Rubric,
        rendered: list[list[dict[str, Any]]],
        shown: list[dict[str, str]],
        trial: int,
        vote: int,
    ) -> Steps:
        """Every step of one vote: one judgment, or on a pairwise rubric one judgment per order
        (output first, then swapped; the second is skipped when the first errors, unless the
        transport only records requests (`records_only`: a batch file needs both)), combined.
        `shown` holds the blocks each order's request shows, for its citations."""
        if rubric.scale != "pairwise":
            asking = RubricAsking(rubric, shown[0])
            return (yield from self._judgment(rubric, rendered[0], asking, trial, vote))
        orders: list[GradeResult] = []
        records_only = getattr(self.transport, "records_only", False)
        for messages, blocks in zip(rendered, shown, strict=True):
            asking = RubricAsking(rubric, blocks)
            orders.append((yield from self._judgment(rubric, messages, asking, trial, vote)))
            if orders[-1].verdict == "error" and not records_only:
                break
        return combine_orders(rubric, orders)

    def _checklist_vote(
        self,
        rubric: Rubric,
        rendered: list[list[dict[str, Any]]],
        shown: list[dict[str, str]],
        trial: int,
        vote: int,
    ) -> Steps:
        """Every step of one vote in checklist mode: each item asked on its own (each request
        cached by its own body), all at once, or with probability answers one after another
        and then decided by a matching judge profile; the verdict computed from the answers."""

        def asking(check: ChecklistItem, blocks: dict[str, str]) -> Asking:
            if self.answers == "probability":
                return ProbabilityAsking(check)
            return ItemAsking(check, rubric.citations, blocks)

        asked = tuple(
            self._judgment(rubric, messages, asking(check, blocks), trial, vote)
            for check, messages, blocks in zip(rubric.checklist, rendered, shown, strict=True)
        )
        if self.answers == "tool":
            return checklist_result(rubric, (yield Together(asked)))
        answered = []  # one item after another: a server's prefix cache serves the next
        for judgment in asked:
            answered.append((yield from judgment))
        result = checklist_result(rubric, answered)
        applied = self._profile(rubric)
        return decided_by(applied, rubric, result) if applied is not None else result

    def _profile(self, rubric: Rubric) -> Applied | None:
        """This model's profile for `rubric` in the project, read once per rubric digest; one
        that does not match (another rubric digest or model) is said once and never applied."""
        if rubric.digest not in self._profiles:
            path = profile_path(find_project()[0], self.model, rubric)
            read = read_profile(path, self.model, rubric)
            if isinstance(read, str):
                logger.warning("judge profile not applied: %s", read)
            self._profiles[rubric.digest] = read if isinstance(read, Applied) else None
        return self._profiles[rubric.digest]

    def _judgment(
        self,
        rubric: Rubric,
        messages: list[dict[str, Any]],
        asking: Asking,
        trial: int = 1,
        vote: int = 1,
    ) -> Steps:
        """Every step of one judgment (one vote of it, or one checklist item's answer: what
        `asking` asks): cache lookup, requests, waits, quirk fallbacks, one corrective turn
        (for a reply that is not a verdict, or under `citations: required` for a failing
        verdict without a verified citation)."""
        started = time.monotonic()
        first_key: str | None = None  # the cache key of the first-turn request last built
        attempts = retries = 0
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        answered_mode: Mode | None = None
        unanswered: Any = None  # the reply that was not a verdict, once it has been corrected
        correction: str | None = None
        intent: str | None = None
        citing = False  # whether the corrective turn asks for a verified citation

        def finish(
            verdict: Literal["pass", "fail", "error"],
            reason: str,
            raw: int | None = None,
            winner: str | None = None,
            citations: list[dict[str, Any]] | None = None,
        ) -> GradeResult:
            latency_ms = round((time.monotonic() - started) * 1000)
            details = judge_details(
                self.model,
                answered_mode,
                attempts,
                latency_ms,
                dict(usage),
                correction,
                retries=retries,
            )
            result = make_result(rubric, details, verdict, redact(reason, self._api_key), raw)
            return with_details(
                with_winner(result, winner), **({"citations": citations} if citations else {})
            )

        while True:
            remaining = started + self.total_timeout - time.monotonic()
            if remaining <= 0:
                return finish(
                    "error", f"no verdict within the overall limit of {self.total_timeout:g}s"
                )
            attempts += 1
            mode = asking.mode(self.quirks, correction is not None)
            sent = messages
            if citing:
                sent = messages + asking.citation_turn(unanswered)
            elif correction is not None:
                sent = messages + asking.corrective_turn(unanswered, mode)
            shaped = asking.sampling(self.temperature, self.max_tokens, self.quirks)
            body = asking.body(sent, mode, self.model, shaped)
            key = cache_key(self.endpoint, body, trial, vote)
            if self.cache is not None and correction is None and key != first_key:
                first_key = key
                stored = cached_result(self.cache.get(key), rubric, self.model)
                if stored is not None:
                    return stored
            reply = yield Send(body, min(self.timeout, remaining), key)
            if isinstance(reply, EndpointUnusable):  # the engine stopped the run: not sent
                attempts -= 1
                if not attempts:
                    return finish("error", f"not judged: {reply}")
                return finish(
                    "error",
                    f"judge request failed after {attempts} attempt(s); then the run stopped "
                    f"sending: {reply}",
                )
            if isinstance(reply, BaseException):
                quirk = quirk_in(reply, body, self.quirks)
                if quirk:
                    logger.info("judge endpoint quirk %s: retrying with the fallback", quirk)
                    self._learn(quirk)
                    continue
                if is_retryable(reply) and retries < self.max_retries:
                    retries += 1
                    delay = min(self._delay(retries, reply), max(remaining - 0.01, 0))
                    cause = redact(describe(reply), self._api_key)
                    logger.info(
                        "judge request failed (%s); retry %d in %.2fs", cause, retries, delay
                    )
                    yield Wait(delay)
                    continue
                return finish(
                    "error", f"judge request failed after {attempts} attempt(s): {describe(reply)}"
                )
            answered_mode = answered_mode or mode
            parsed = parse_reply(reply)
            for counted, count in usage_of(parsed).items():
                usage[counted] += count
            outcome = asking.read(parsed, mode)
            read_from = outcome.answer_details if isinstance(outcome, JudgeVerdict) else {}
            if read_from.get("logprobs") is False:
                self._learn_no_logprobs()
            if isinstance(outcome, JudgeVerdict) and outcome.citations:  # the judge's text
                kept = [c | {"quote": redact(c["quote"], self._api_key)} for c in outcome.citations]
                outcome = replace(outcome, citations=kept)
            if isinstance(outcome, JudgeVerdict):
                if intent is not None and outcome.verdict != intent:
                    return finish(
                        "error",
                        f"conflicting verdicts: the judge first wrote {intent} as text, then "
                        f"called {outcome.verdict}",
                    )
                if citing and not asking.failing(outcome):  # asked for evidence, it passed
                    return finish(
                        "error",
                        f"{UNSUPPORTED}: asked to cite evidence for its failing verdict, the "
                        f"judge said {_said(outcome)} instead",
                        citations=outcome.citations,
                    )
                if asking.unsupported(outcome):
                    if correction is None:
                        correction, unanswered, citing = UNSUPPORTED, parsed, True
                        continue
                    why = _unsupported(outcome, asked=citing)
                    return finish("error", why, citations=outcome.citations)
                if self.cache is not None and first_key is not None:
                    self.cache.put(first_key, stored_verdict(outcome, answered_mode, correction))
                result = finish(
                    outcome.verdict,
                    outcome.reason,
                    outcome.raw_score,
                    outcome.winner,
                    outcome.citations,
                )
                return with_details(result, **outcome.item_details())
            if correction is not None:
                return finish("error", f"no valid verdict after a corrective turn: {outcome}")
            correction, unanswered = outcome, parsed
            intent = asking.intent(reply_text(parsed))

    def _learn_no_logprobs(self) -> None:
        """An endpoint answered a probability question without logprobs: say so once, and
        remember it with its other quirks (later requests do not ask for them)."""
        if "no_logprobs" in self.quirks:
            return
        logger.warning(
            "%s returned no logprobs for %s: probability answers fall back to the word the "
            "judge wrote (p 1 or 0)",
            self._endpoint,
            self.model,
        )
        self._learn("no_logprobs")

    def _learn(self, quirk: str) -> None:
        """Keep `quirk` for this Judge's later requests, and remember it across runs when
        capabilities are kept."""
        self.quirks.add(quirk)
        if self._capabilities is not None:
            self._capabilities.remember_quirk(self._endpoint, self.model, quirk)

    def _delay(self, retry: int, error: BaseException) -> float:
        return backoff_delay(
            retry, error, self.backoff_base, self.backoff_max, self.max_retry_after
        )

    def endpoint_signal(self, reply: Any) -> tuple[SignalKind, Any]:
        """What a request's outcome says about the endpoint, for the engine's pacer: the kind
        (see `failures.signal_kind`) with the seconds to pause for `rate_limited`, or the
        redacted cause for `unusable` and `connection`."""
        kind = signal_kind(reply)
        if kind == "rate_limited":
            return kind, self._delay(1, reply)
        if kind in ("unusable", "connection"):
            return kind, redact(describe(reply), self._api_key)
        return kind, None

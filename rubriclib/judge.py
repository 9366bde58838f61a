"""Ask an OpenAI-compatible judge for a verdict through tool calls: the module that talks to it."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import os
import time
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from rubriclib.cache import VerdictCache, cache_key, cached_result, stored_verdict
from rubriclib.config import (
    check_environment_headers,
    check_header_value,
    checked_base_url,
    credential,
    resolve,
)
from rubriclib.engine import agrade_many
from rubriclib.errors import JudgeConfigError
from rubriclib.failures import (
    EndpointUnusable,
    SignalKind,
    backoff_delay,
    describe,
    from_sdk,
    is_retryable,
    quirk_in,
    redact,
    signal_kind,
)
from rubriclib.item import Item, as_item, missing_fields
from rubriclib.protocol import (
    POSITIONS,
    JudgeVerdict,
    Mode,
    corrective_turn,
    read_reply,
    reply_text,
    request_body,
    text_intent,
    usage_of,
)
from rubriclib.registry import load_rubric
from rubriclib.render import render
from rubriclib.result import (
    GradeResult,
    combine_orders,
    combine_votes,
    judge_details,
    majority_reached,
    make_result,
    not_judged,
)
from rubriclib.rubric import Rubric
from rubriclib.settings import JudgeSettings
from rubriclib.transport import HttpTransport, SdkTransport, Transport, display_url

if TYPE_CHECKING:
    import openai

    from rubriclib.grader import Grader
    from rubriclib.pacer import Pacer

logger = logging.getLogger("rubriclib")


@dataclass(frozen=True)
class _Send:
    """Step: POST this Chat Completions body, waiting at most `timeout` seconds; the driver
    sends back the reply's bytes or the exception. `custom_id` names the request: its cache key
    (endpoint, body, trial and vote), a batch request's custom_id."""

    body: dict[str, Any]
    timeout: float
    custom_id: str


@dataclass(frozen=True)
class _Wait:
    """Step: wait before the next try."""

    seconds: float


class ManyJudgments:
    """`agrade`, `grade_many` and `agrade_many` for any Grader (a Judge, or a Panel of them):
    many judgments go through the engine (`engine.agrade_many`)."""

    async def agrade(
        self: Grader,
        rubric: Rubric | str,
        output: str,
        input: str | None = None,  # noqa: A002
        context: str | None = None,
        reference: str | None = None,
        *,
        baseline: str | None = None,
    ) -> GradeResult:
        """The async form of `grade`."""
        rubric, item = prepare_item(rubric, output, input, context, reference, baseline)
        return await self.agrade_item(rubric, item)

    def grade_many(
        self: Grader,
        rubric: Rubric | str,
        items: Iterable[Item | Mapping[str, Any]],
        *,
        concurrency: int = 8,
        requests_per_minute: float | None = None,
    ) -> list[GradeResult]:
        """Judge every item, `concurrency` at once (and at most `requests_per_minute` request
        starts a minute, if given): one result per item, in input order."""

        return asyncio.run(
            ManyJudgments.agrade_many(
                self,
                rubric,
                items,
                concurrency=concurrency,
                requests_per_minute=requests_per_minute,
            )
        )

    async def agrade_many(
        self: Grader,
        rubric: Rubric | str,
        items: Iterable[Item | Mapping[str, Any]],
        *,
        concurrency: int = 8,
        requests_per_minute: float | None = None,
    ) -> list[GradeResult]:
        """The async form of `grade_many` (its connections closed once every item is judged;
        judgments of the same grader still running keep them until they end)."""
        try:
            return await agrade_many(
                self,
                rubric,
                items,
                concurrency=concurrency,
                requests_per_minute=requests_per_minute,
            )
        finally:
            await self.aclose()


class Judge(ManyJudgments):
    """A judge model behind any OpenAI-compatible Chat Completions endpoint."""

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
    ) -> None:
        if isinstance(votes, bool) or not isinstance(votes, int) or votes < 1:
            raise JudgeConfigError(f"votes must be a whole number of at least 1, not {votes!r}")
        self.votes = votes
        """Independent judgments per item: the majority verdict (on 1-5, the median score)
        wins, a tie never passes, and voting stops once a majority is decided."""
        self._determinism_checked = False
        self.model = resolve("model", model or None).value
        self.base_url = checked_base_url(base_url)
        if api_key:
            key: str | None = check_header_value("api_key", api_key)
            check_environment_headers()
        else:
            key = credential("OPENAI_API_KEY")
        if not key and self.base_url is None:
            raise JudgeConfigError(
                "no API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a server that needs none"
            )
        self._api_key = key or "not-needed"
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
        self.transport: Transport
        """How async requests travel, chosen here once: "auto" is aiohttp (`HttpTransport`,
        proxied or not; a tenth of the SDK's CPU per request), "sdk" the openai SDK's async
        client, or any `transport.Transport` (a batch's), which gets every async request with
        its custom_id. `grade` always uses the SDK's sync client."""
        if transport == "auto":
            self.transport = HttpTransport(self.base_url, self._api_key)
        elif transport == "sdk":
            self.transport = SdkTransport(self.base_url, self._api_key)
        else:
            self.transport = transport
        self._client: openai.OpenAI | None = None
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

    @property
    def endpoint(self) -> str:
        """The endpoint as scheme://host[:port]/path: no credentials, no query string."""
        return display_url(self.base_url)

    @property
    def api_key(self) -> str:
        """The key sent with every request ("not-needed" for an endpoint that takes none): a
        batch of this judge's requests is uploaded with it."""
        return self._api_key

    def __repr__(self) -> str:
        return f"Judge(model={self.model!r}, endpoint={self.endpoint!r})"

    def grade(
        self,
        rubric: Rubric | str,
        output: str,
        input: str | None = None,  # noqa: A002
        context: str | None = None,
        reference: str | None = None,
        *,
        baseline: str | None = None,
    ) -> GradeResult:
        """Judge `output` against `rubric` (a Rubric or a reference such as "groundedness@^1");
        failures come back as verdict `error`. A pairwise rubric compares `output` with
        `baseline` (required there, ignored elsewhere): pass means the output won."""
        rubric, item = prepare_item(rubric, output, input, context, reference, baseline)
        if missing := missing_fields(rubric.requires, item):
            return not_judged(rubric, self.model, missing_cause(rubric, missing))
        rendered = _rendered(rubric, item)
        votes: list[GradeResult] = []
        for vote in range(1, self.votes + 1):
            votes.append(self._drive(self._vote(rubric, rendered, 1, vote)))
            if majority_reached(votes, self.votes):
                break
        return self._combined(rubric, votes)

    def _drive(self, steps: Generator[_Send | _Wait, Any, GradeResult]) -> GradeResult:
        """Run one judgment's steps with the SDK's sync client and `time.sleep`."""
        reply: Any = None
        while True:
            try:
                step = steps.send(reply)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            if isinstance(step, _Wait):
                time.sleep(step.seconds)
                reply = None
                continue
            try:
                reply = self._sync_client().post(
                    "/chat/completions",
                    body=step.body,
                    cast_to=bytes,
                    options={"timeout": step.timeout},
                )
            except Exception as error:  # every failure becomes data for the judgment
                reply = from_sdk(error)

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
        judge._client = None
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
        api_key: str | None = None,
        named_by: str = "api_key_env",
    ) -> Judge:
        """A Judge as `settings` say (an eval file's, a promptfoo assertion's, the command
        line's): fields left None take the environment, rubriclib.toml or the Judge's defaults.
        The key is `api_key` if given, else `settings.api_key_env`'s (which must be set: its
        place in the user's file is `named_by`), else OPENAI_API_KEY."""
        if api_key is None and settings.api_key_env:
            api_key = credential(settings.api_key_env, named_by=named_by)
        options = settings.judge_settings().model_dump(
            exclude_none=True, exclude={"model", "base_url", "api_key_env"}
        )
        return cls(settings.model, settings.base_url, api_key, cache=cache, **options)

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
            return await self._judge_item(rubric, item, trial, pacer)
        finally:
            self._in_flight -= 1
            if not self._in_flight and not self._run_open:
                await self.transport.aclose()

    async def _judge_item(
        self, rubric: Rubric, item: Item, trial: int, pacer: Pacer | None
    ) -> GradeResult:
        if missing := missing_fields(rubric.requires, item):
            return not_judged(rubric, self.model, missing_cause(rubric, missing))
        rendered = _rendered(rubric, item)
        votes: list[GradeResult] = []
        for vote in range(1, self.votes + 1):
            votes.append(await self._adrive(self._vote(rubric, rendered, trial, vote), pacer))
            if majority_reached(votes, self.votes) or (pacer is not None and pacer.dead):
                break
        return self._combined(rubric, votes)

    async def _adrive(
        self, steps: Generator[_Send | _Wait, Any, GradeResult], pacer: Pacer | None
    ) -> GradeResult:
        """Run one judgment's steps with the async client and `asyncio.sleep`."""
        reply: Any = None
        while True:
            try:
                step = steps.send(reply)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            if isinstance(step, _Wait):
                await asyncio.sleep(step.seconds)
                reply = None
                continue
            try:
                if pacer is not None:
                    await pacer.acquire()
                try:
                    reply = await self.transport.post(
                        step.body, timeout=step.timeout, custom_id=step.custom_id
                    )
                except Exception as error:  # every failure becomes data for the judgment
                    reply = error
                if pacer is not None:
                    await pacer.release(self.endpoint_signal(reply))
            except Exception as error:
                reply = error

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

    def _vote(
        self, rubric: Rubric, rendered: list[list[dict[str, Any]]], trial: int, vote: int
    ) -> Generator[_Send | _Wait, Any, GradeResult]:
        """Every step of one vote: one judgment, or on a pairwise rubric one judgment per order
        (output first, then swapped; the second is skipped when the first errors, unless the
        transport only records requests (`records_only`: a batch file needs both)), combined."""
        if rubric.scale != "pairwise":
            return (yield from self._judgment(rubric, rendered[0], trial, vote))
        orders: list[GradeResult] = []
        records_only = getattr(self.transport, "records_only", False)
        for messages in rendered:
            orders.append((yield from self._judgment(rubric, messages, trial, vote)))
            if orders[-1].verdict == "error" and not records_only:
                break
        return combine_orders(rubric, orders)

    def _judgment(
        self, rubric: Rubric, messages: list[dict[str, Any]], trial: int = 1, vote: int = 1
    ) -> Generator[_Send | _Wait, Any, GradeResult]:
        """Every step of one judgment (one vote of it): cache lookup, requests, waits, quirk
        fallbacks, one corrective turn."""
        started = time.monotonic()
        first_key: str | None = None  # the cache key of the first-turn request last built
        attempts = retries = 0
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        answered_mode: Mode | None = None
        unanswered: Any = None  # the reply that was not a verdict, once it has been corrected
        correction: str | None = None
        intent: str | None = None

        def finish(
            verdict: Literal["pass", "fail", "error"],
            reason: str,
            raw: int | None = None,
            winner: str | None = None,
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
            return _with_winner(
                make_result(rubric, details, verdict, redact(reason, self._api_key), raw), winner
            )

        while True:
            remaining = started + self.total_timeout - time.monotonic()
            if remaining <= 0:
                return finish(
                    "error", f"no verdict within the overall limit of {self.total_timeout:g}s"
                )
            attempts += 1
            mode = self._mode(rubric, correcting=correction is not None)
            sent = messages
            if correction is not None:
                sent = messages + corrective_turn(unanswered, rubric, mode)
            body = request_body(rubric, sent, mode, self.model, self._sampling())
            key = cache_key(self.endpoint, body, trial, vote)
            if self.cache is not None and correction is None and key != first_key:
                first_key = key
                stored = self._cached(rubric, key)
                if stored is not None:
                    return stored
            reply = yield _Send(body, min(self.timeout, remaining), key)
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
                    self.quirks.add(quirk)
                    continue
                if is_retryable(reply) and retries < self.max_retries:
                    retries += 1
                    delay = min(self._delay(retries, reply), max(remaining - 0.01, 0))
                    cause = redact(describe(reply), self._api_key)
                    logger.info(
                        "judge request failed (%s); retry %d in %.2fs", cause, retries, delay
                    )
                    yield _Wait(delay)
                    continue
                return finish(
                    "error", f"judge request failed after {attempts} attempt(s): {describe(reply)}"
                )
            answered_mode = answered_mode or mode
            parsed = _parse_json(reply)
            _add_usage(usage, usage_of(parsed))
            outcome = read_reply(parsed, rubric, mode)
            if isinstance(outcome, JudgeVerdict):
                if intent is not None and outcome.verdict != intent:
                    return finish(
                        "error",
                        f"conflicting verdicts: the judge first wrote {intent} as text, then "
                        f"called {outcome.verdict}",
                    )
                if self.cache is not None and first_key is not None:
                    value = stored_verdict(outcome, answered_mode, correction)
                    if outcome.winner is not None:
                        value["winner"] = outcome.winner
                    self.cache.put(first_key, value)
                return finish(outcome.verdict, outcome.reason, outcome.raw_score, outcome.winner)
            if correction is not None:
                return finish("error", f"no valid verdict after a corrective turn: {outcome}")
            correction, unanswered = outcome, parsed
            intent = text_intent(reply_text(parsed), rubric)

    def _cached(self, rubric: Rubric, key: str) -> GradeResult | None:
        """The cached result under `key`, or None; on a pairwise rubric only one that kept
        the judge's answer (A, B or tie)."""
        assert self.cache is not None
        stored = self.cache.get(key)
        result = cached_result(stored, rubric, self.model)
        if result is None or rubric.scale != "pairwise":
            return result
        winner = stored.get("winner") if stored is not None else None
        return _with_winner(result, winner) if winner in POSITIONS else None

    def _mode(self, rubric: Rubric, correcting: bool = False) -> Mode:
        """How to force the verdict call on this endpoint: the first mode it has not refused.
        A corrective turn forces the one verdict tool by name wherever that is honoured."""
        required_ok = rubric.scale == "pass-fail" and "no_required_tool_choice" not in self.quirks
        named_ok = "no_named_tool_choice" not in self.quirks
        if named_ok and (correcting or not required_ok):
            return "named"
        return "required" if required_ok else "auto"

    def _sampling(self) -> dict[str, Any]:
        """Temperature and the token limit, shaped by the quirks learned so far."""
        sampling: dict[str, Any] = {}
        if self.temperature is not None and "no_temperature" not in self.quirks:
            sampling["temperature"] = self.temperature
        if self.max_tokens is not None:
            key = (
                "max_completion_tokens" if "max_completion_tokens" in self.quirks else "max_tokens"
            )
            sampling[key] = self.max_tokens
        return sampling

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

    def _sync_client(self) -> openai.OpenAI:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0
            )
        return self._client


def prepare_item(
    rubric: Rubric | str,
    output: str,
    input: str | None,  # noqa: A002
    context: str | None,
    reference: str | None,
    baseline: str | None = None,
) -> tuple[Rubric, Item]:
    """The rubric (resolved when given as a reference) and the fields as an Item; a RubricError
    for a bad reference, a TypeError for a field that is not text."""
    fields = {
        "output": output,
        "input": input,
        "context": context,
        "reference": reference,
        "baseline": baseline,
    }
    item = as_item({key: value for key, value in fields.items() if value is not None}, "grade")
    return (load_rubric(rubric) if isinstance(rubric, str) else rubric), item


def missing_cause(rubric: Rubric, missing: list[str]) -> str:
    return f"no {' and no '.join(missing)} (the rubric {rubric.name} requires it)"


def _rendered(rubric: Rubric, item: Item) -> list[list[dict[str, Any]]]:
    """The messages of each request a vote starts with: one list, or on a pairwise rubric two
    (the output as Response A, then the baseline as Response A)."""
    fields = (item.input, item.context, item.reference)
    if rubric.scale != "pairwise":
        return [render(rubric, item.output, *fields, variables=item.variables)]
    return [
        render(rubric, item.output, *fields, baseline=item.baseline, swapped=swapped)
        for swapped in (False, True)
    ]


def _with_winner(result: GradeResult, winner: str | None) -> GradeResult:
    """A pairwise order's result with the judge's answer (A, B or tie) in `details.winner`."""
    if winner is None:
        return result
    return result.model_copy(update={"details": {**result.details, "winner": winner}})


def _parse_json(raw: Any) -> Any:
    """The reply body as JSON, or None when it is not JSON (any shape may arrive)."""
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return None


def _add_usage(total: dict[str, int], more: dict[str, int]) -> None:
    for key in total:
        total[key] += more[key]

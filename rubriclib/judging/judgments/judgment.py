"""One judgment as steps (one vote of it, or one checklist item's answer: what an `Asking`
asks): the verdict cache looked up first, requests, waits, quirk fallbacks, and one corrective
turn, for a reply that is not a verdict or, under `citations: required`, a failing verdict
without a verified citation. It sends and sleeps only by yielding steps to a driver."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any, Literal

from rubriclib.judging.asking.exploring import ExploringAsking
from rubriclib.judging.asking.protocol import Asking, fields_turn
from rubriclib.judging.asking.reply import (
    BrokenFields,
    Explored,
    JudgeVerdict,
    parse_reply,
    reply_text,
    usage_of,
)
from rubriclib.judging.asking.request import JSON_MODES, Mode
from rubriclib.judging.cache import VerdictCache, cache_key, cached_result, stored_verdict
from rubriclib.judging.endpoints.endpoint import Endpoint
from rubriclib.judging.endpoints.failures import EndpointUnusable
from rubriclib.judging.prompt.render import chat
from rubriclib.judging.result import (
    GradeResult,
    judge_details,
    make_result,
    with_details,
    with_winner,
)
from rubriclib.judging.steps import Send, Steps, Wait
from rubriclib.rubrics import Rubric

logger = logging.getLogger("rubriclib")
UNSUPPORTED = "verdict not supported by a verified citation"
"""Why a failing verdict is corrected, and then an error, under `citations: required`."""


class Judgment:
    """The state of one judgment while its steps run: what was sent, counted and corrected."""

    def __init__(
        self,
        endpoint: Endpoint,
        cache: VerdictCache | None,
        sampling: tuple[float | None, int | None],
        rubric: Rubric,
        user: str,
        asking: Asking,
        trial: int = 1,
        vote: int = 1,
        seed: int | None = None,
    ) -> None:
        self.endpoint, self.cache, self.sampling = endpoint, cache, sampling
        self.seed = seed
        """The seed this judgment sends (None: none), unless the endpoint refused seeds."""
        self.sampled: dict[str, Any] = {}
        """What produced the verdict (`result.SAMPLED`): the temperature and seed sent, the
        model and fingerprint the reply named."""
        self.rubric, self.asking = rubric, asking
        self.user = user
        """The prompt's user message; the asking writes each mode's system message (`_body`)."""
        self.trial, self.vote = trial, vote
        self.started = time.monotonic()
        self.first_key: str | None = None
        """The cache key of the first-turn request last built."""
        self.attempts = self.retries = 0
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self.answered_mode: Mode | None = None
        self.asked_mode: Mode | None = None
        """The mode of the last request built: its protocol is recorded (`protocol`)."""
        self.unanswered: Any = None
        """The reply that was not a verdict, once it has been corrected."""
        self.correction: str | None = None
        self.intent: str | None = None
        """The verdict the judge wrote as text before its corrective turn."""
        self.citing = False
        """Whether the corrective turn asks for a verified citation."""
        self.challenged: JudgeVerdict | None = None
        """The verdict the turn asking for a citation was about."""
        self.explored: list[dict[str, Any]] = []
        """The turns of a run explored so far (`ExploringAsking`): each reply's exploring
        calls and their answers, sent after the prompt."""

    def steps(self) -> Steps:
        """Every step of the judgment, to its one result."""
        limits = self.endpoint.limits
        while True:
            remaining = self.started + limits.total_timeout - time.monotonic()
            if remaining <= 0:
                limit = f"{limits.total_timeout:g}s"
                return self.finish("error", f"no verdict within the overall limit of {limit}")
            self.attempts += 1
            mode = self.asking.mode(self.endpoint.quirks, self.correction is not None)
            body = self._body(mode)
            key = cache_key(self.endpoint.url, self._keyed(body), self.trial, self.vote)
            if (stored := self._cached(key)) is not None:
                return stored
            reply = yield Send(body, min(limits.timeout, remaining), key)
            if isinstance(reply, EndpointUnusable):  # the engine stopped the run: not sent
                return self._stopped(reply)
            if isinstance(reply, BaseException):
                then = self._after_failure(reply, body, remaining)
                if isinstance(then, GradeResult):
                    return then
                if then is not None:
                    yield then
                continue
            if (done := self._answered(reply, mode)) is not None:
                return done

    @property
    def protocol(self) -> str | None:
        """How the verdict was asked for: `json` in a JSON mode (`json_answers`), else `tools`;
        None before any request was built."""
        if self.asked_mode is None:
            return None
        return "json" if self.asked_mode in JSON_MODES else "tools"

    def _body(self, mode: Mode) -> dict[str, Any]:
        """The request of this attempt: the system message of `mode`, the user message, and the
        corrective turn when one is due."""
        self.asked_mode = mode
        sent: list[dict[str, Any]] = [*chat(self.asking.system(mode), self.user), *self.explored]
        if self.citing:
            sent = sent + self.asking.citation_turn(self.unanswered)
        elif isinstance(self.correction, BrokenFields):  # a verdict call, its fields named
            sent = sent + fields_turn(self.unanswered, self.correction)
        elif self.correction is not None:
            sent = sent + self.asking.corrective_turn(self.unanswered, mode)
        shaped = self.asking.sampling(*self.sampling, self.endpoint.quirks)
        if self.seed is not None and "no_seed" not in self.endpoint.quirks:
            shaped["seed"] = self.seed
        self.sampled |= {"temperature": shaped.get("temperature"), "seed": shaped.get("seed")}
        return self.asking.body(sent, mode, self.endpoint.model, shaped)

    def _keyed(self, body: dict[str, Any]) -> dict[str, Any]:
        """What a request's cache key covers: its body; an explored judgment's with its budget
        too, since what the judge could read decided its verdict."""
        if not isinstance(self.asking, ExploringAsking):
            return body
        budget = self.asking.budget
        return body | {"exploring_budget": [budget.turns, budget.characters]}

    def _cached(self, key: str) -> GradeResult | None:
        """The cached result of a first-turn request not looked up yet, if there is one."""
        if self.cache is None or self.correction is not None or key == self.first_key:
            return None
        if self.explored:  # an explored judgment is cached under its first request's key
            return None
        self.first_key = key
        stored = self.cache.get(key)
        model = self.endpoint.model
        return cached_result(stored, self.rubric, model, self.protocol or "tools", self.sampled)

    def _stopped(self, reply: EndpointUnusable) -> GradeResult:
        """The engine stopped sending to the endpoint before this attempt."""
        self.attempts -= 1
        if not self.attempts:
            return self.finish("error", f"not judged: {reply}")
        return self.finish(
            "error",
            f"judge request failed after {self.attempts} attempt(s); then the run stopped "
            f"sending: {reply}",
        )

    def _after_failure(
        self, reply: BaseException, body: dict[str, Any], remaining: float
    ) -> GradeResult | Wait | None:
        """After a failed request: a quirk learned (None: try again now), a wait before a
        retry, or the judgment's error."""
        retry = self.endpoint.next_try(reply, body, self.retries)
        if retry is not None and retry.quirk == "no_exploring":
            told = self.endpoint.told(reply)
            why = f"the endpoint cannot explore a run: it refused the judge's tool results ({told})"
            return self.finish("error", why)
        if retry is not None and retry.quirk is not None:
            return None
        if retry is not None:
            self.retries += 1
            delay = min(retry.delay, max(remaining - 0.01, 0))
            cause = self.endpoint.told(reply)
            logger.info("judge request failed (%s); retry %d in %.2fs", cause, self.retries, delay)
            return Wait(delay)
        why = f"judge request failed after {self.attempts} attempt(s): {self.endpoint.told(reply)}"
        return self.finish("error", why)

    def _answered(self, reply: Any, mode: Mode) -> GradeResult | None:
        """The judgment's result from a reply, or None when it gets its corrective turn."""
        self.answered_mode = self.answered_mode or mode
        parsed = parse_reply(reply)
        self.sampled |= answered_by(parsed)
        for counted, count in usage_of(parsed).items():
            self.usage[counted] += count
        outcome = self.asking.read(parsed, mode)
        if isinstance(outcome, JudgeVerdict):
            return self._verdict(outcome, parsed)
        if isinstance(outcome, Explored):
            if self.correction is not None:  # asked for its verdict, it explored on
                why = "the judge went on exploring when asked for its verdict"
                return self.finish("error", f"no valid verdict after a corrective turn: {why}")
            self.explored.extend(outcome.turn)
            return None if outcome.error is None else self.finish("error", outcome.error)
        if self.correction is not None:
            return self.finish("error", f"no valid verdict after a corrective turn: {outcome}")
        self.correction, self.unanswered = outcome, parsed
        self.intent = self.asking.intent(reply_text(parsed))
        return None

    def _verdict(self, verdict: JudgeVerdict, parsed: Any) -> GradeResult | None:
        """A verdict's result (cached), its error, or None when it lacks the evidence its
        rubric requires and has not been asked for it yet."""
        if verdict.answer_details.get("logprobs") is False:
            self.endpoint.learn_no_logprobs()
        if verdict.citations:  # the judge's text
            hidden = [c | {"quote": self.endpoint.hidden(c["quote"])} for c in verdict.citations]
            verdict = replace(verdict, citations=hidden)
        if self.intent is not None and verdict.verdict != self.intent:
            return self.finish(
                "error",
                f"conflicting verdicts: the judge first wrote {self.intent} as text, then "
                f"called {verdict.verdict}",
            )
        if self.citing and (not self.asking.failing(verdict) or self._changed(verdict)):
            why = (
                f"{UNSUPPORTED}: asked to cite evidence for its failing verdict, the judge said "
                f"{said(verdict)} instead"
            )
            return self.finish("error", why, citations=verdict.citations)
        if self.asking.unsupported(verdict):
            if self.correction is None:
                self.correction, self.unanswered, self.citing = UNSUPPORTED, parsed, True
                self.challenged = verdict
                return None
            why = unsupported(verdict, asked=self.citing)
            return self.finish("error", why, citations=verdict.citations)
        if self.cache is not None and self.first_key is not None:
            stored = stored_verdict(verdict, self.answered_mode, self.correction)
            self.cache.put(self.first_key, stored | self._exploration())
        result = self.finish(
            verdict.verdict, verdict.reason, verdict.raw_score, verdict.winner, verdict.citations
        )
        return with_details(result, **verdict.item_details(), **verdict.rubric_details())

    def _changed(self, verdict: JudgeVerdict) -> bool:
        """Whether a checklist answered in one call came back with other answers after the
        turn asking for evidence (asked to cite, a judge must not flip an item instead)."""
        before = self.challenged.checklist if self.challenged is not None else []
        answers = [(entry["id"], entry["answer"]) for entry in verdict.checklist]
        return answers != [(entry["id"], entry["answer"]) for entry in before]

    def finish(
        self,
        verdict: Literal["pass", "fail", "error"],
        reason: str,
        raw: int | None = None,
        winner: str | None = None,
        citations: list[dict[str, Any]] | None = None,
    ) -> GradeResult:
        """The judgment's one result, with what it cost."""
        latency_ms = round((time.monotonic() - self.started) * 1000)
        details = judge_details(
            self.endpoint.model,
            self.answered_mode,
            self.attempts,
            latency_ms,
            dict(self.usage),
            self.correction,
            retries=self.retries,
            protocol=self.protocol,
            sampled=self.sampled,
        )
        reason = self.endpoint.hidden(reason)
        result = with_winner(make_result(self.rubric, details, verdict, reason, raw), winner)
        return with_details(
            result, **({"citations": citations} if citations else {}), **self._exploration()
        )

    def _exploration(self) -> dict[str, Any]:
        """`details.exploration`, the trail of a run explored; nothing for other judgments."""
        if not isinstance(self.asking, ExploringAsking):
            return {}
        return {"exploration": self.asking.trail.details()}


def answered_by(reply: Any) -> dict[str, str]:
    """The model a parsed reply says answered and its `system_fingerprint`, where it names
    them as text (nothing about a reply is trusted)."""
    named = {"served_model": "model", "system_fingerprint": "system_fingerprint"}
    found = (
        {key: reply.get(field) for key, field in named.items()} if isinstance(reply, dict) else {}
    )
    return {key: value for key, value in found.items() if isinstance(value, str) and value}


def said(verdict: JudgeVerdict) -> str:
    """What a verdict says, in a reason: `fail`, `score 2`, `answer yes`, `answers a yes, b
    no` (a checklist answered in one call)."""
    if verdict.checklist:
        return "answers " + ", ".join(f"{e['id']} {e['answer']}" for e in verdict.checklist)
    if verdict.answer is not None:
        return f"answer {verdict.answer}"
    return f"score {verdict.raw_score}" if verdict.raw_score is not None else verdict.verdict


def unsupported(verdict: JudgeVerdict, asked: bool) -> str:
    """The error of a failing verdict without a verified citation: after the turn that asked
    for one (`asked`), or when the one corrective turn went to a reply that was no verdict."""
    given = len(verdict.citations)
    cited = f"{given} citation(s), none verified" if given else "no citation"
    when = "after a turn asking for one" if asked else "and the one corrective turn was spent"
    return f"{UNSUPPORTED}: the judge said {said(verdict)} with {cited}, {when}"

"""letta-evals 0.26's built-in extractors (`letta_evals/extractors/builtin.py`), ported line
for line, run on a recorded run's trajectory (`runs.read_run`): letta-evals is an
optional extra, so rubriclib never imports it. tests/integrations/test_letta_extractors.py runs
letta's own extractors on the same messages and compares.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rubriclib.evals.letta.messages import LettaMessage
from rubriclib.evals.letta.runs import Trajectory

# letta-evals 0.26's built-in extractors, ported line for line from
# letta_evals/extractors/builtin.py and utils.py (isinstance checks become message_type checks).


def _assistant_messages(trajectory: Trajectory) -> list[LettaMessage]:
    return [msg for turn in trajectory for msg in turn if msg.kind == "assistant_message"]


def _last_assistant(trajectory: Trajectory, config: Mapping[str, Any]) -> str:
    messages = _assistant_messages(trajectory)
    if not messages:
        return ""
    return messages[-1].content


def _first_assistant(trajectory: Trajectory, config: Mapping[str, Any]) -> str:
    messages = _assistant_messages(trajectory)
    if not messages:
        return ""
    return messages[0].content


def _all_assistant(trajectory: Trajectory, config: Mapping[str, Any]) -> str:
    contents = [msg.content for msg in _assistant_messages(trajectory)]
    separator = config.get("separator", "\n")
    return separator.join(contents)  # type: ignore[no-any-return]


def _last_turn(trajectory: Trajectory, config: Mapping[str, Any]) -> str:
    last = trajectory[-1] if trajectory else ()
    contents = [msg.content for msg in last if msg.kind == "assistant_message"]
    separator = config.get("separator", "\n")
    return separator.join(contents)  # type: ignore[no-any-return]


def _pattern(trajectory: Trajectory, config: Mapping[str, Any]) -> Any:
    pattern_str = config["pattern"]
    group = config.get("group", 0)
    search_all = config.get("search_all", False)
    for msg in reversed(_assistant_messages(trajectory)):
        content = msg.content
        if search_all:
            matches = re.findall(pattern_str, content)
            if matches:
                if isinstance(matches[0], tuple):
                    return " ".join(m[group] for m in matches)
                return " ".join(matches)
        else:
            match = re.search(pattern_str, content)
            if match:
                return match.group(group)
    return ""


def _tool_arguments(trajectory: Trajectory, config: Mapping[str, Any]) -> str:
    tool_name = config["tool_name"]
    for turn in trajectory:
        for message in turn:
            if message.kind == "tool_call_message":
                for tool_call in message.calls:
                    if tool_call.name == tool_name:
                        return tool_call.arguments
    return "{}"


def _tool_output(trajectory: Trajectory, config: Mapping[str, Any]) -> Any:
    tool_name = config["tool_name"]
    tool_call_id = None
    for turn in trajectory:
        for message in turn:
            if message.kind == "tool_call_message":
                for tool_call in message.calls:
                    if tool_call.name == tool_name:
                        tool_call_id = tool_call.id
                        break
            if tool_call_id:
                break
        if tool_call_id:
            break
    if tool_call_id:
        for turn in trajectory:
            for message in turn:
                if message.kind == "tool_return_message" and message.call_id == tool_call_id:
                    return message.returned
    return ""


def _after_marker(trajectory: Trajectory, config: Mapping[str, Any]) -> str:
    marker = config["marker"]
    include_marker = config.get("include_marker", False)
    for msg in reversed(_assistant_messages(trajectory)):
        content = msg.content
        idx = content.find(marker)
        if idx >= 0:
            if include_marker:
                return content[idx:].strip()
            return content[idx + len(marker) :].strip()
    return ""


BUILTIN: dict[str, Callable[[Trajectory, Mapping[str, Any]], Any]] = {
    "last_assistant": _last_assistant,
    "first_assistant": _first_assistant,
    "all_assistant": _all_assistant,
    "last_turn": _last_turn,
    "pattern": _pattern,
    "tool_arguments": _tool_arguments,
    "tool_output": _tool_output,
    "after_marker": _after_marker,
}
"""letta-evals' built-in extractors that read only the messages (rubriclib runs these)."""
NEEDS_AGENT = {
    "memory_block": (
        "reads a memory block of the live Letta agent (its agent_state), which recorded "
        "messages do not hold"
    )
}
"""letta-evals' built-in extractors that need the live agent, and why."""
REQUIRED_CONFIG = {
    "pattern": "pattern",
    "tool_arguments": "tool_name",
    "tool_output": "tool_name",
    "after_marker": "marker",
}
"""The extractor_config key each extractor reads unconditionally (letta raises KeyError)."""
EMPTY_TRAJECTORY = "Empty trajectory - agent produced no messages"
EMPTY_SUBMISSION = "Empty submission - extractor found no content"
"""letta-evals' rationale when it scores a sample 0 without asking a grader (graders/base.py)."""


class ExtractorError(ValueError):
    """An extractor that raised on a run, as letta's would (the message says what)."""


@dataclass(frozen=True)
class Extractor:
    """A letta-evals grader's `extractor` and `extractor_config`."""

    name: str = "last_assistant"
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def offline(self) -> bool:
        """Whether rubriclib runs it: one of letta's built-ins that read only the messages."""
        return self.name in BUILTIN

    def why_not_run(self) -> str | None:
        """Why rubriclib cannot run this extractor on recorded messages, or None."""
        if self.name in NEEDS_AGENT:
            return f"extractor {self.name} {NEEDS_AGENT[self.name]}"
        if not self.offline:
            return (
                f"extractor {self.name} is Python letta loads from the suite's folder; rubriclib "
                f"runs letta-evals' built-in extractors ({', '.join(BUILTIN)})"
            )
        return None

    def problems(self) -> list[tuple[str, str]]:
        """(field, problem) for a name letta does not know and a config letta's extractor
        would raise on for every run: a missing key, a pattern that is not a regex."""
        if self.name not in BUILTIN and self.name not in NEEDS_AGENT and ":" not in self.name:
            known = ", ".join([*BUILTIN, *NEEDS_AGENT])
            return [
                (
                    "extractor",
                    f"unknown extractor {self.name!r}; letta-evals' are {known} (or "
                    "FILE.py:function)",
                )
            ]
        problems = []
        key = REQUIRED_CONFIG.get(self.name)
        if key is not None and key not in self.config:
            problems.append(
                (f"extractor_config.{key}", f"is required: extractor {self.name} reads it")
            )
        if self.name == "memory_block" and not self.config.get("block_label"):
            problems.append(
                ("extractor_config.block_label", "is required: extractor memory_block reads it")
            )
        if self.name == "pattern" and "pattern" in self.config:
            try:
                re.compile(self.config["pattern"])
            except (re.error, TypeError) as error:
                problems.append(
                    ("extractor_config.pattern", f"is not a regular expression: {error}")
                )
        return problems

    def extract(self, trajectory: Trajectory) -> tuple[str | None, str | None]:
        """(the submission, None), or (None, letta's rationale) when letta would score the run
        0 without asking its grader: no message, or an extractor that found nothing. An
        ExtractorError when letta's extractor would raise."""
        if not trajectory or not any(turn for turn in trajectory if turn):
            return None, EMPTY_TRAJECTORY
        try:
            submission = BUILTIN[self.name](trajectory, self.config)
        except (LookupError, TypeError, ValueError, AttributeError, re.error) as error:
            raise ExtractorError(
                f"extractor {self.name}: {type(error).__name__}: {error}"
            ) from None
        if not submission:
            return None, EMPTY_SUBMISSION
        if not isinstance(submission, str):  # letta hands its grader whatever came back
            raise ExtractorError(
                f"extractor {self.name}: returned {type(submission).__name__}, not text"
            )
        return submission, None

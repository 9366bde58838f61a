"""A letta agent's recorded run, read.

A letta-evals row may record the agent's messages (`messages`): letta's message objects as JSON,
as letta's client reads them from an agent (`letta_client.types.agents.Message`, told apart by
`message_type`). `read_run` reads them losslessly into the canonical Transcript (shape "letta")
for rubrics that judge the whole run, and keeps letta's own view of them (its trajectory: a
list of turns) for the extractors. A flat list is one turn, as letta-evals 0.26 fetches an
agent's history; a list of lists is a trajectory of turns, as its results file records one.

Each message is read by `messages.py`; letta-evals' extractors run on the trajectory:
`extractors.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rubriclib.evals.letta.messages import LettaMessage, Problems, read_message
from rubriclib.item import Message, Transcript, TranscriptError, unanswered

Trajectory = Sequence[Sequence[LettaMessage]]


@dataclass(frozen=True)
class LettaRun:
    """A recorded run: letta's trajectory (turns of messages) and the same run as a Transcript."""

    turns: tuple[tuple[LettaMessage, ...], ...]
    transcript: Transcript


def read_run(value: Any, field_name: str = "messages") -> LettaRun:
    """`value` (letta's message objects as JSON: a list, or a list of turns) as a LettaRun; a
    TranscriptError naming every problem (`messages[3].tool_call.arguments`)."""
    if not isinstance(value, list) or not value:
        kind = "an empty list" if value == [] else type(value).__name__
        raise TranscriptError(
            [(field_name, f"must be a non-empty list of letta messages (a run), not {kind}")]
        )
    nested = isinstance(value[0], list)
    turns: list[list[tuple[str, Any]]] = []
    problems: Problems = []
    if nested:
        for index, turn in enumerate(value):
            if not isinstance(turn, list):
                problems.append((f"{field_name}[{index}]", _not_a_turn(turn)))
                continue
            turns.append([(f"{field_name}[{index}][{n}]", entry) for n, entry in enumerate(turn)])
    else:
        turns.append([(f"{field_name}[{index}]", entry) for index, entry in enumerate(value)])
    if not any(turns):
        problems.append((field_name, "holds no message: a run has at least one"))
    if problems:
        raise TranscriptError(problems)
    read_turns: list[tuple[LettaMessage, ...]] = []
    messages: list[Message] = []
    places: list[str] = []
    for turn_entries in turns:
        read_turn = []
        for place, entry in turn_entries:
            if isinstance(entry, list):
                problems.append((place, _not_a_message(nested)))
                continue
            read = read_message(entry, place, problems)
            if read is None:
                continue
            read_turn.append(read[0])
            messages.extend(read[1])
            places.extend(place for _ in read[1])
        read_turns.append(tuple(read_turn))
    transcript = Transcript(messages=tuple(messages), shape="letta")
    problems.extend(unanswered(transcript, places, verb="returns"))
    if problems:
        raise TranscriptError(problems)
    return LettaRun(tuple(read_turns), transcript)


def _not_a_turn(value: Any) -> str:
    return (
        f"must be a turn (a list of messages), not {type(value).__name__}: a run is a list of "
        "messages, or a list of turns, not both"
    )


def _not_a_message(nested: bool) -> str:
    if nested:
        return "must be a message (a mapping), not a list: a turn is a list of messages"
    return (
        "must be a message (a mapping), not a list: a run is a list of messages, or a list of "
        "turns, not both"
    )

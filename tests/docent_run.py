"""Write agent runs as Docent writes them: each is built by Docent's own models (`AgentRun`,
`Transcript`, its chat messages, which validate what they hold) and saved with its
`model_dump_json()`. Run under `.integrations/docent` (`make integrations`):

    .integrations/docent/bin/python tests/docent_run.py OUT_DIR

`docent_run.json` is a support run in two transcripts (a triage agent hands the refund to a
refunds agent; both number their first call `call_1`), with thinking, a tool error and
metadata; `docent_run.txt` is how Docent's own LLMContext shows it to a model, block ids and
all. `docent_grouped.json` has transcript groups, nested, and times that order its transcripts
unlike its list; `docent_grouped_order.json` is the order Docent numbers them in (`T0`, `T1`...,
its AgentRunTree's `transcript_id_to_idx`), by name. tests/data/runs/ holds what it wrote;
tests/item/test_docent_runs.py reads those files and, with Docent installed, runs this again
and checks they are still what Docent writes.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

from docent.data_models import AgentRun, Transcript, TranscriptGroup
from docent.data_models.agent_run import AgentRunTree
from docent.data_models.chat import (
    AssistantMessage,
    ContentReasoning,
    ContentText,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from docent.sdk.llm_context import LLMContext


def at(hour: int, minute: int = 0) -> datetime:
    """A time on the day the runs ran, without a zone: Docent orders a transcript with no time
    after the others by comparing with `datetime.max`, which has none."""
    return datetime(2025, 3, 4, hour, minute)


def call(call_id: str, function: str, **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, function=function, arguments=dict(arguments))


def support_run() -> AgentRun:
    triage = Transcript(
        id="transcript-triage",
        name="triage",
        description="Reads the ticket and looks up the order",
        created_at=at(9),
        metadata={"agent": "triage", "model": "gpt-4.1-mini"},
        messages=[
            SystemMessage(
                content="You are Acme's triage agent. Look up the order, then hand refunds to "
                "the refunds agent."
            ),
            UserMessage(content="Please refund order A-17, the mug arrived broken."),
            AssistantMessage(
                content=[
                    ContentReasoning(reasoning="A refund: check the order first."),
                    ContentText(text="Let me look up that order."),
                ],
                tool_calls=[call("call_1", "get_order", order_id="A-17")],
            ),
            ToolMessage(
                content='{"order_id": "A-17", "item": "mug", "paid": 12.5}',
                tool_call_id="call_1",
                function="get_order",
            ),
            AssistantMessage(
                content="Order A-17 is a mug for $12.50. Our refunds agent takes it from here."
            ),
        ],
    )
    refunds = Transcript(
        id="transcript-refunds",
        name="refunds",
        created_at=at(9, 5),
        metadata={"agent": "refunds"},
        messages=[
            SystemMessage(
                content="You are Acme's refunds agent. Confirm with the user before any refund."
            ),
            UserMessage(content="Refund order A-17 ($12.50, a mug): it arrived broken."),
            AssistantMessage(
                content="", tool_calls=[call("call_1", "refund", order_id="A-17", amount=12.5)]
            ),
            ToolMessage(
                content="",
                tool_call_id="call_1",
                function="refund",
                error={
                    "type": "approval_required",
                    "message": "Refunds over $10 need the customer's confirmation.",
                },
            ),
            AssistantMessage(content="Shall I refund $12.50 to your card?"),
            UserMessage(content="Yes, please."),
            AssistantMessage(
                content="", tool_calls=[call("call_2", "refund", order_id="A-17", amount=12.5)]
            ),
            ToolMessage(content='{"status": "refunded"}', tool_call_id="call_2", function="refund"),
            AssistantMessage(content="Done: $12.50 is on its way back to your card."),
        ],
    )
    return AgentRun(
        id="run-A-17",
        name="support A-17",
        description="A broken mug refunded",
        transcripts=[triage, refunds],
        metadata={"ticket": "T-1042", "scores": {"resolved": True}},
    )


def grouped_run() -> AgentRun:
    """Transcripts in nested groups, listed in another order than Docent numbers them."""
    first = TranscriptGroup(id="group-first", name="first attempt", created_at=at(8))
    second = TranscriptGroup(id="group-second", name="second attempt", created_at=at(10))
    checks = TranscriptGroup(
        id="group-checks", name="checks", parent_transcript_group_id="group-first", created_at=at(7)
    )

    def transcript(name: str, group: TranscriptGroup | None, when: datetime | None) -> Transcript:
        return Transcript(
            id=f"transcript-{name}",
            name=name,
            transcript_group_id=group.id if group else None,
            created_at=when,
            messages=[
                UserMessage(content=f"Start {name}."),
                AssistantMessage(content=f"{name} done."),
            ],
        )

    return AgentRun(
        id="run-grouped",
        transcripts=[
            transcript("retry", second, at(10, 1)),
            transcript("undated", first, None),
            transcript("plan", first, at(8, 1)),
            transcript("check", checks, at(7, 1)),
            transcript("summary", None, at(11)),
        ],
        transcript_groups=[second, first, checks],
    )


def main(out: Path) -> None:
    run = support_run()
    (out / "docent_run.json").write_text(run.model_dump_json(indent=2) + "\n", encoding="utf-8")
    context = LLMContext()
    context.add(run)
    (out / "docent_run.txt").write_text(context.to_str(), encoding="utf-8")
    grouped = grouped_run()
    (out / "docent_grouped.json").write_text(
        grouped.model_dump_json(indent=2) + "\n", encoding="utf-8"
    )
    numbered = AgentRunTree.from_agent_run(grouped).transcript_id_to_idx
    names = [t.name for t in sorted(grouped.transcripts, key=lambda t: numbered[t.id])]
    (out / "docent_grouped_order.json").write_text(json.dumps(names) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

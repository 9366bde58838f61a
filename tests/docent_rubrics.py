"""Write Docent rubrics as Docent writes them: each is built by Docent's own Rubric model
(`docent.judges.types.Rubric`, which validates its output schema and prompt templates) and
saved with its `model_dump_json()`. Run under `.integrations/docent` (`make integrations`):

    .integrations/docent/bin/python tests/docent_rubrics.py OUT_DIR

tests/data/docent/ holds what it wrote; tests/rubrics/test_docent.py reads those files and, with
Docent installed, runs this again and checks they are still what Docent writes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

TEMPLATE = """\
Rubric:
{rubric}

Agent run:
{agent_run}

Give your answer inside <response> tags. {output_format_instructions}
It must follow this schema:
{output_schema}"""
"""A short prompt template of one's own, as Docent's rubric editor allows."""

HELPFULNESS = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": ["helpful", "partly helpful", "not helpful"]},
        "explanation": {"type": "string", "citations": True},
    },
    "required": ["label", "explanation"],
}

TRIAGE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "label": {
            "type": "string",
            "enum": ["Resolved", "Partly resolved", "Not resolved"],
            "description": "How far the agent resolved the ticket",
        },
        "explanation": {"type": "string", "citations": True},
        "issues": {
            "type": "array",
            "items": {
                "type": "object",
                "title": "Issue",
                "additionalProperties": False,
                "properties": {
                    "description": {"type": "string", "citations": True},
                    "kind": {"type": "string", "enum": ["policy", "accuracy", "tone"]},
                },
                "required": ["description", "kind"],
            },
        },
        "severity": {"type": "string", "enum": ["low", "medium", "high"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "escalated": {"type": "boolean", "description": "Whether the agent escalated"},
    },
    "required": ["label", "explanation", "issues", "severity", "escalated"],
}

UNSUPPORTED = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": ["pass", "fail"]},
        "ticket": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"},
        "turns": {"type": "integer", "enum": [1, 2, 3]},
    },
    "required": ["label", "ticket", "turns"],
}

COLLIDING = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": ["Not helpful", "not_helpful", "helpful"]},
    },
    "required": ["label"],
}


def rubrics() -> dict[str, Any]:
    """Each file's rubric, built by Docent's classes."""
    from docent._llm_util.providers.preference_types import ModelOption
    from docent.judges.types import ExposedReasoningRubric, PromptTemplateMessage, Rubric

    claude = ModelOption(provider="anthropic", model_name="claude-sonnet-4-5")
    return {
        # Docent's defaults: its prompt, its match / no match schema, its default judge
        "default": Rubric(
            id="9b7c1f0e-5d0a-4c71-9a55-0d8f1e2b3c4d",
            rubric_text="The agent refunds an order without checking that it was paid.",
        ),
        "helpfulness": Rubric(
            id="helpfulness",
            rubric_text="Label how well the agent helped the user get what they asked for.\n"
            "- helpful: the user got it.\n"
            "- partly helpful: the user got part of it.\n"
            "- not helpful: the user got none of it.",
            output_schema=HELPFULNESS,
            judge_model=claude,
            prompt_templates=[PromptTemplateMessage(role="user", content=TEMPLATE)],
        ),
        "triage": ExposedReasoningRubric(
            id="triage",
            version=3,
            rubric_text="Label how far the support agent resolved the customer's ticket, "
            "list each issue in its replies, and say how severe the worst one is.",
            output_schema=TRIAGE,
            n_rollouts_per_input=3,
            output_format="json",
        ),
        "unsupported": Rubric(
            id="unsupported",
            rubric_text="Pass when the agent names the ticket.",
            output_schema=UNSUPPORTED,
        ),
        "colliding": Rubric(
            id="colliding",
            rubric_text="Label how helpful the agent was.",
            output_schema=COLLIDING,
        ),
    }


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, rubric in rubrics().items():
        (out / f"{name}.json").write_text(rubric.model_dump_json(indent=2) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))

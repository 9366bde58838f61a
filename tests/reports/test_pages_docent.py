"""An eval's HTML page of a Docent AgentRun explored from a dataset row: the blocks the judge
read are named by their transcript (`T1B3`), each a piece where its citation is placed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from conftest import embedded_data
from judge_server import JudgeServer
from long_runs import exploring_judge

from rubriclib.cli import main

RUN = Path(__file__).parents[1] / "data" / "runs" / "docent_run.json"
CONFIRMATION = "Refunds over $10 need the customer's confirmation."


def shown(piece: Any) -> str:
    """A piece of a page's messages as shown: its text, or the start a long one keeps."""
    return piece if isinstance(piece, str) else str(piece["clipped"])


def test_an_explored_docent_run_s_page_links_its_transcript_block_ids(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    row = {"id": "r1", "transcript": json.loads(RUN.read_text(encoding="utf-8"))}
    write_file("rows.jsonl", json.dumps(row) + "\n")
    eval_file = write_file(
        "eval.yaml",
        "name: runs\ndataset: rows.jsonl\n"
        "graders: [{name: kw, rubric: keywords, evidence: explore}]\n",
    )
    endpoint.responder = exploring_judge(pattern="customer's confirmation", cite=CONFIRMATION)
    page = eval_file.parent / "report.html"
    ran = CliRunner().invoke(main, ["eval", str(eval_file), "--report", str(page)])
    assert ran.exit_code == 0, ran.output
    data = embedded_data(page.read_text(encoding="utf-8"))
    [cell] = data["rows"][0]["cells"]
    [cited] = cell["citations"]
    assert (cited["block"], cited["status"]) == ("T1B3", "verified")
    message, piece = cell["messages"]["blocks"][0]["T1B3"]
    [request] = cell["messages"]["sent"]
    read = shown(data["messages"][request[message][1][piece]])
    start, end = cited["shown"]
    assert read[start:end] == CONFIRMATION
    listed = "".join(shown(data["messages"][index]) for index in request[1][1])
    assert "== Transcript T1: refunds" in listed and "[T1B3] tool error for refund" in listed

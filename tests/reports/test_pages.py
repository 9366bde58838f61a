"""`--report FILE.html` on eval, test-goldens and calibrate, without a browser: the data each
page embeds (gate, pairwise numbers, the messages each judgment sent, the goldens' and the
calibration's JSON report) and the refusals."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SECRET_KEY, VERSUS, citation, embedded_data, prefers
from judge_server import JudgeServer
from long_runs import NEEDLE, exploring_judge, long_run
from results_lines import results_line, write_results

from rubriclib.cli import main
from rubriclib.reports.html.data import read_results, report_data

EVAL = """\
name: pages
dataset: rows.jsonl
judge: {model: judge-a}
graders:
  - name: kw
    rubric: keywords
  - name: grounded
    rubric: groundedness@^1
gate:
  kw: {min_pass_rate: 0.5}
"""
ROWS = [
    {"id": "r1", "input": "q1", "context": "c1", "output": "verdict:pass one"},
    {"id": "r2", "input": "q2", "context": "c2", "output": "verdict:fail two"},
    {"id": "r3", "input": "q3", "output": "verdict:pass three"},  # no context: grounded errors
]


@pytest.fixture
def eval_file(endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]) -> Path:
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in ROWS))
    return write_file("eval.yaml", EVAL)


def eval_page(eval_file: Path, *arguments: str) -> tuple[Any, dict[str, Any]]:
    page = eval_file.parent / "report.html"
    ran = CliRunner().invoke(main, ["eval", str(eval_file), "--report", str(page), *arguments])
    return ran, embedded_data(page.read_text(encoding="utf-8"))


def cell(data: dict[str, Any], row: str, grader: str) -> dict[str, Any]:
    column = [g["name"] for g in data["graders"]].index(grader)
    found = next(entry for entry in data["rows"] if entry["id"] == row)
    return found["cells"][column]  # type: ignore[no-any-return]


def sent_text(data: dict[str, Any], entry: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {"role": role, "content": "".join(data["messages"][index] for index in pieces)}
        for role, pieces in entry["messages"]["sent"][0]
    ]


def test_an_eval_html_report_is_the_results_page_with_gate_and_messages(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    ran, data = eval_page(eval_file, "--out", str(out))
    assert ran.exit_code == 0, ran.output  # the kw gate holds (2 of 3); grounded has no gate
    assert "(report: " in ran.output and "<html" not in ran.output
    from_file = json.loads(json.dumps(report_data(read_results(out))))
    assert data["graders"] == from_file["graders"]
    assert [row["id"] for row in data["rows"]] == ["r1", "r2", "r3"]
    assert data["eval"]["name"] == "pages" and data["eval"]["status"] == "passed"
    assert [(g["condition"], g["holds"]) for g in data["gate"]] == [("kw pass_rate >= 0.5", True)]
    # every request the judge received is the re-rendered messages of one cell, exactly
    sent = [sent_text(data, cell(data, row["id"], "kw")) for row in ROWS]
    sent.append(sent_text(data, cell(data, "r1", "grounded")))
    received = [request["messages"] for request in endpoint.requests]
    assert all(messages in received for messages in sent)
    assert "no request was sent" in cell(data, "r3", "grounded")["messages"]["unavailable"]
    # a rubric's body is kept once, whatever the number of rows
    assert sum("Judge it. Call" in text for text in data["messages"]) == 1
    assert SECRET_KEY not in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_an_eval_html_report_without_out_uses_the_results_in_memory(eval_file: Path) -> None:
    ran, data = eval_page(eval_file)
    assert ran.exit_code == 0, ran.output
    assert data["judgments"] == 6 and data["errors"] == 1
    assert any("no --out" in note for note in data["notes"])
    assert cell(data, "r2", "kw")["verdict"] == "fail"
    assert sent_text(data, cell(data, "r2", "kw"))[1]["content"].count("verdict:fail two") == 1


def test_report_with_eval_re_renders_only_where_the_digest_still_matches(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    assert CliRunner().invoke(main, ["eval", str(eval_file), "--out", str(out)]).exit_code == 0
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    for line in lines:  # as if r1 had been judged by an edited copy of the rubric
        if line["row"] == "r1":
            line["result"]["details"]["rubric"]["digest"] = "f" * 64
    write_results(out, lines)
    page = tmp_path / "again.html"
    alone = CliRunner().invoke(main, ["report", str(out), "-o", str(page)])
    assert alone.exit_code == 0, alone.output
    assert "messages" not in cell(embedded_data(page.read_text()), "r2", "kw")
    ran = CliRunner().invoke(main, ["report", str(out), "--eval", str(eval_file), "-o", str(page)])
    assert ran.exit_code == 0, ran.output
    data = embedded_data(page.read_text())
    why = cell(data, "r1", "kw")["messages"]["unavailable"]
    assert "is not the one that judged (ffffffff)" in why and "keywords@2.1.0" in why
    sent = sent_text(data, cell(data, "r2", "kw"))
    assert sent in [request["messages"] for request in endpoint.requests]


def test_report_with_a_bad_eval_exits_2(tmp_path: Path, write_file: Callable[..., Path]) -> None:
    results = write_results(tmp_path / "r.jsonl", [results_line("a", "g", "pass")])
    bad = write_file("bad.yaml", "name: bad\ngraders: []\n")
    ran = CliRunner().invoke(
        main, ["report", str(results), "--eval", str(bad), "-o", str(tmp_path / "x.html")]
    )
    assert ran.exit_code == 2 and "Traceback" not in ran.output
    assert str(bad) in ran.output


def test_an_interrupted_eval_report_says_how_many_judgments_are_missing(
    eval_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rubriclib import evals  # the face the command imports run_ready from

    real = evals.run_ready

    async def interrupted(*arguments: Any, **options: Any) -> Any:
        report = await real(*arguments, **options)
        report.interrupted = "SIGINT"
        report.not_judged = [("r4", "kw"), ("r4", "grounded")]
        return report

    monkeypatch.setattr(evals, "run_ready", interrupted)
    ran, data = eval_page(eval_file)
    assert ran.exit_code == 130, ran.output
    assert data["expected"] == 8
    assert any(note.startswith("interrupted by SIGINT") for note in data["notes"])
    assert "6 of 8 expected judgments: 2 missing" in data["notes"]


def test_a_report_file_not_ending_in_html_keeps_the_format(eval_file: Path) -> None:
    page = eval_file.parent / "report.json"
    ran = CliRunner().invoke(
        main, ["eval", str(eval_file), "--format", "json", "--report", str(page)]
    )
    assert ran.exit_code == 0, ran.output
    assert json.loads(page.read_text())["eval"]["name"] == "pages"


def test_test_goldens_writes_the_goldens_page(
    library: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    page = tmp_path / "goldens.html"
    ran = CliRunner().invoke(
        main, ["test-goldens", "keywords", "--format", "json", "--report", str(page)]
    )
    assert ran.exit_code == 0, ran.output
    text = page.read_text(encoding="utf-8")
    data = embedded_data(text)
    assert data["kind"] == "goldens"
    assert data["goldens"] == json.loads(ran.stdout)  # the JSON report itself, nothing recomputed
    noscript = text.split("<noscript>")[1].split("</noscript>")[0]
    assert "<td>keywords@2.1.0</td><td>100.0%</td><td>1.00</td>" in noscript


def test_calibrate_writes_the_calibration_page(
    library: Path, endpoint: JudgeServer, write_file: Callable[..., Path], tmp_path: Path
) -> None:
    labels = [
        {"id": "a", "output": "verdict:pass a", "label": "pass"},
        {"id": "b", "output": "verdict:fail b", "label": "pass"},
        {"id": "c", "output": "verdict:fail c", "label": "fail"},
    ]
    path = write_file("labels.jsonl", "".join(json.dumps(row) + "\n" for row in labels))
    page = tmp_path / "calibration.html"
    arguments = ["calibrate", "keywords", "--labels", str(path), "--format", "json"]
    ran = CliRunner().invoke(main, [*arguments, "--report", str(page)])
    assert ran.exit_code == 0, ran.output
    data = embedded_data(page.read_text(encoding="utf-8"))
    assert data["kind"] == "calibration"
    assert data["calibration"] == json.loads(ran.stdout)
    assert [row["id"] for row in data["calibration"]["disagreement_rows"]] == ["b"]


@pytest.mark.parametrize("command", [["test-goldens", "keywords"], ["calibrate", "keywords"]])
def test_report_on_goldens_and_calibration_must_name_an_html_file(
    library: Path, endpoint: JudgeServer, tmp_path: Path, command: list[str]
) -> None:
    labels = ["--labels", str(tmp_path / "none.jsonl")] if command[0] == "calibrate" else []
    ran = CliRunner().invoke(main, [*command, *labels, "--report", str(tmp_path / "r.json")])
    assert ran.exit_code == 2
    assert "--report writes the HTML report: name a FILE.html" in ran.output
    same = str(tmp_path / "same.html")
    ran = CliRunner().invoke(main, [*command, *labels, "--out", same, "--report", same])
    assert ran.exit_code == 2 and "names the same file as --out" in ran.output
    assert endpoint.requests == []


def test_messages_past_the_budget_are_not_kept_failures_first(
    eval_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rubriclib.reports.html import pages as run_pages

    monkeypatch.setattr(run_pages, "MESSAGES_BUDGET", 145)  # one row's values (and frames), not two
    ran, data = eval_page(eval_file)
    assert ran.exit_code == 0, ran.output
    assert "sent" in cell(data, "r2", "kw")["messages"]  # failed: served first
    assert "sent" in cell(data, "r2", "grounded")["messages"]  # the same row text, kept once
    assert cell(data, "r1", "kw")["messages"] == {"unavailable": run_pages.OVER_BUDGET}
    assert cell(data, "r3", "kw")["messages"] == {"unavailable": run_pages.OVER_BUDGET}


def test_eval_refuses_a_report_that_would_replace_its_results(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    same = str(tmp_path / "results.html")
    ran = CliRunner().invoke(main, ["eval", str(eval_file), "--out", same, "--report", same])
    assert ran.exit_code == 2 and "--report: names the same file as --out" in ran.output
    assert endpoint.requests == [] and not Path(same).exists()


def test_a_pairwise_judgment_shows_both_orders_it_sent(
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    write_file("library/versus.md", VERSUS)
    monkeypatch.setenv("RUBRICLIB_PATH", str(tmp_path / "library"))
    endpoint.responder = prefers("GOOD")
    rows = [
        {"id": "1", "input": "q", "output": "GOOD", "baseline": "meh"},
        {"id": "2", "input": "q", "output": "meh", "baseline": "also meh"},
    ]
    write_file("rows.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    eval_file = write_file(
        "eval.yaml", "name: ab\ndataset: rows.jsonl\ngraders:\n  - {name: prefer, rubric: versus}\n"
    )
    ran, data = eval_page(eval_file)
    assert ran.exit_code == 0, ran.output  # no gate and no judge error
    sent = cell(data, "1", "prefer")["messages"]["sent"]
    requests = [
        [
            {"role": role, "content": "".join(data["messages"][i] for i in pieces)}
            for role, pieces in r
        ]
        for r in sent
    ]
    received = [request["messages"] for request in endpoint.requests]
    assert len(requests) == 2 and all(messages in received for messages in requests)
    first, second = (messages[1]["content"] for messages in requests)
    assert first.index("GOOD") < first.index("meh") and second.index("meh") < second.index("GOOD")
    pairwise = data["graders"][0]["pairwise"]
    assert (pairwise["win"], pairwise["tie"], pairwise["loss"]) == (1, 1, 0)


def test_a_run_s_page_shows_the_blocks_the_judge_was_sent_cut_as_they_were(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    huge = "x" * 30_000
    run = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": huge},
        {"role": "assistant", "content": "verdict:pass done"},
    ]
    write_file("rows.jsonl", json.dumps({"id": "r1", "transcript": run}) + "\n")
    eval_file = write_file(
        "eval.yaml",
        "name: runs\ndataset: rows.jsonl\njudge: {max_prompt_tokens: 4000, evidence: whole}\n"
        "graders: [{name: kw, rubric: keywords}]\n",
    )
    ran, data = eval_page(eval_file)
    assert ran.exit_code == 0, ran.output
    [[_, system], [_, user]] = cell(data, "r1", "kw")["messages"]["sent"][0]
    pieces = [data["messages"][index] for index in user]
    sent = endpoint.requests[0]["messages"][1]["content"]
    whole = [piece if isinstance(piece, str) else piece["clipped"] for piece in pieces]
    assert len(pieces) == 10 and sent.startswith("".join(whole[:6]))  # body, heads, blocks
    assert pieces[5] == "\n\n[M3] tool result for f (c, answers the call in M2)\n"
    assert 2_000 < pieces[6]["length"] < 8_100 and "characters cut ...]" in sent  # cut, as sent
    assert pieces[7:] == [  # a long block clips alone: the next one is still shown whole
        "\n\n[M4] assistant\n",
        "verdict:pass done",
        "\n```\n\n## Candidate output [output]\n\nThe agent's final answer: block M4, the run's last block.\n",
    ]
    # each block's text is a piece of its own, where a citation of it is shown
    blocks = cell(data, "r1", "kw")["messages"]["blocks"]
    # the output is the run's final answer: its block is M4's
    assert blocks == [{"M1": [1, 2], "M2": [1, 4], "M3": [1, 6], "M4": [1, 8], "output": [1, 8]}]


def test_an_explored_run_s_page_shows_the_trail_and_the_blocks_the_judge_read(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    write_file("rows.jsonl", json.dumps({"id": "r1", "transcript": long_run()}) + "\n")
    eval_file = write_file(
        "eval.yaml",
        "name: runs\ndataset: rows.jsonl\ngraders: [{name: kw, rubric: keywords}]\n",
    )
    endpoint.responder = exploring_judge()
    ran, data = eval_page(eval_file)
    assert ran.exit_code == 0, ran.output  # no gate: a failed row fails nothing
    messages = cell(data, "r1", "kw")["messages"]
    [request] = messages["sent"]
    assert [role for role, _ in request] == ["system", "user", "exploration", "read"]
    shown = [
        "".join(
            p if isinstance(p, str) else p["clipped"]
            for p in map(data["messages"].__getitem__, pieces)
        )
        for _, pieces in request
    ]
    first = endpoint.requests[0]["messages"]
    user = [data["messages"][index] for index in request[1][1]]
    assert shown[0] == first[0]["content"]  # the first message, as sent
    assert all(piece in first[1]["content"] for piece in user if isinstance(piece, str))
    assert "[M1] user, 24 characters: Why was I charged twice?" in shown[1]  # the block list
    assert re.fullmatch(
        r"The judge explored the run in 3 request\(s\), shown [\d,]+ characters by its tools; "
        r"searched: 'refund \.\* without'; read parts of: M33 \(each below whole, or from "
        r"just before the first quote cited in it\)\.",
        shown[2],
    )
    assert shown[3].startswith("[M33] tool result for lookup_orders (c15")
    # the block read is a piece of its own, where the judge's citation of it is placed
    message, piece = messages["blocks"][0]["M33"]
    read = data["messages"][request[3][1][piece]]  # a long block: kept from before the quote
    shown_text = read if isinstance(read, str) else read["clipped"]
    [cited] = cell(data, "r1", "kw")["citations"]
    assert message == 3 and cited["status"] == "verified"
    start, end = cited["shown"]
    assert shown_text[start:end] == NEEDLE
    assert shown[3].split("\n")[1].startswith("[... 9,8")  # the characters before, counted


def test_a_citation_verified_from_a_search_hit_leads_to_the_hit_s_block(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    write_file("rows.jsonl", json.dumps({"id": "r1", "transcript": long_run()}) + "\n")
    eval_file = write_file(
        "eval.yaml",
        "name: runs\ndataset: rows.jsonl\ngraders: [{name: kw, rubric: keywords}]\n",
    )
    endpoint.responder = exploring_judge(read=False)  # cites the hit, reads no block
    ran, data = eval_page(eval_file)
    assert ran.exit_code == 0, ran.output
    found = cell(data, "r1", "kw")
    [cited] = found["citations"]
    assert (cited["block"], cited["status"]) == ("M33", "verified")
    [request] = found["messages"]["sent"]
    assert [role for role, _ in request] == ["system", "user", "exploration", "found"]
    hit = endpoint.requests[1]["messages"][-1]["content"]  # what search_run showed the judge
    context = hit.split(": ", 1)[1]
    message, piece = found["messages"]["blocks"][0]["M33"]
    assert message == 3
    pieces = [data["messages"][index] for index in request[3][1]]
    assert pieces[piece] == context  # the hit's context exactly, a piece of its own
    head, told = pieces[0].split("\n")[:2]  # the block's head, and where the hit sits in it
    assert head.startswith("[M33] tool result for lookup_orders (c15")
    assert re.fullmatch(r"\[search_run showed characters 9,9\d\d to 10,\d+ of 20,\d+\]", told)
    start, end = cited["shown"]
    assert pieces[piece][start:end] == NEEDLE


def test_a_citation_of_an_explored_run_s_final_answer_leads_to_the_output_shown_first(
    endpoint: JudgeServer, library: Path, write_file: Callable[..., Path]
) -> None:
    run = long_run()
    write_file("rows.jsonl", json.dumps({"id": "r1", "transcript": run}) + "\n")
    eval_file = write_file(
        "eval.yaml",
        "name: runs\ndataset: rows.jsonl\ngraders: [{name: kw, rubric: keywords}]\n",
    )
    quote = "the charge is correct"  # in M62, the run's final answer: the first message's output
    endpoint.responder = exploring_judge(read=False, cite=quote, cite_block="M62")
    ran, data = eval_page(eval_file)
    assert ran.exit_code == 0, ran.output
    found = cell(data, "r1", "kw")
    [cited] = found["citations"]
    assert (cited["block"], cited["status"]) == ("M62", "verified")
    [blocks] = found["messages"]["blocks"]
    assert blocks["M62"] == blocks["output"] and blocks["output"][0] == 1
    message, piece = blocks["M62"]
    shown = data["messages"][found["messages"]["sent"][0][message][1][piece]]
    assert shown == run[-1]["content"]
    start, end = cited["shown"]
    assert shown[start:end] == quote


def test_with_the_eval_each_cited_block_is_a_piece_and_its_span_is_placed(
    eval_file: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    assert CliRunner().invoke(main, ["eval", str(eval_file), "--out", str(out)]).exit_code == 0
    lines = [json.loads(text) for text in out.read_text().splitlines()]
    for line in lines:
        if (line["row"], line["grader"]) == ("r1", "kw"):
            line["result"]["details"]["citations"] = [
                citation("output", "pass", [8, 12]),
                citation("M4", "pass", note="no block M4 was shown"),
            ]
    write_results(out, lines)
    page = tmp_path / "cited.html"
    ran = CliRunner().invoke(main, ["report", str(out), "--eval", str(eval_file), "-o", str(page)])
    assert ran.exit_code == 0, ran.output
    data = embedded_data(page.read_text())
    found = cell(data, "r1", "kw")
    [blocks] = found["messages"]["blocks"]
    [[_, _], [_, user]] = found["messages"]["sent"][0]
    assert {key: data["messages"][user[piece]] for key, (_, piece) in blocks.items()} == {
        "input": "q1",
        "context": "c1",
        "output": "verdict:pass one",
    }
    placed, unplaced = found["citations"]
    assert placed["shown"] == [8, 12] and "shown" not in unplaced
    assert sent_text(data, found) in [request["messages"] for request in endpoint.requests]

"""A judgment's citations as the reports show them: gathered once from votes, orders, checklist
items or panel judges, counted per grader, compared between runs, and located in the messages
a page shows (each block's text where the judge saw it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import citation
from results_lines import results_line, write_results

from rubriclib.judging.citations import given_citations, read_citation
from rubriclib.reports.citations import citations_change, place_citations, shown_span
from rubriclib.reports.html.data import TEXT_LIMIT, read_results, report_data

GOOD = citation("output", "fine", [4, 8])
INVENTED = citation("M3", "never said", note="no block M3 was shown")


def line_with(verdict: str = "fail", row: str = "r1", **details: Any) -> dict[str, Any]:
    return results_line(row, "g", verdict, **details)


def test_a_judgment_s_own_citations_are_kept_field_by_field() -> None:
    found = given_citations({"citations": [GOOD, citation("input", "q", found_in="context")]})
    assert found == [
        {"by": "", "block": "output", "quote": "fine", "status": "verified", "span": [4, 8]},
        {"by": "", "block": "input", "quote": "q", "status": "unverified", "found_in": "context"},
    ]


def test_votes_orders_items_and_panel_judges_say_who_cited_and_count_once() -> None:
    votes = {"verdicts": ["fail", "fail"], "citations": [[GOOD], [], [INVENTED]][:2]}
    # the judgment's own list repeats the deciding vote's: counted once, from the votes
    assert [c["by"] for c in given_citations({"citations": [GOOD], "votes": votes})] == ["vote 1"]
    orders = [{"order": "output-first"}, {"order": "baseline-first", "citations": [GOOD]}]
    [order] = given_citations({"pairwise": {"orders": orders}})
    assert order["by"] == "baseline-first" and order["request"] == 1
    items = [{"id": "grounded", "citations": [GOOD]}, {"id": "tone"}]
    assert [c["by"] for c in given_citations({"checklist": items})] == ["item grounded"]
    members = [
        {"model": "judge-a", "votes": {"citations": [[], [INVENTED]]}},
        {"model": "judge-b", "citations": [GOOD]},
        "not a member",
    ]
    found = given_citations({"panel": {"judges": members}})
    assert [(c["by"], c["status"]) for c in found] == [
        ("judge-a, vote 2", "unverified"),
        ("judge-b", "verified"),
    ]


def test_an_entry_of_the_wrong_shape_is_an_unverified_citation_never_an_error() -> None:
    assert read_citation("[M3] a bare string")["status"] == "unverified"
    assert read_citation({"block": None, "quote": "x", "status": "unverified"})["block"] is None
    odd = read_citation({"block": 3, "quote": "x", "status": "sure", "span": [0, 1], "note": 7})
    assert odd == {"by": "", "block": None, "quote": "x", "status": "unverified"}
    for span in ([5, 2], [-1, 2], [0, True], [0], "0-2"):
        assert "span" not in read_citation(
            {"block": "M1", "quote": "x", "status": "verified", "span": span}
        )
    assert given_citations({"citations": "not a list", "votes": {"citations": "no"}}) == []


def test_each_grader_counts_its_citations_given_and_verified(tmp_path: Path) -> None:
    lines = [
        line_with(row="a", citations=[GOOD, INVENTED]),
        line_with(row="b", votes={"verdicts": ["pass"], "citations": [[GOOD]]}),
        line_with(row="c"),
        line_with("error", row="d", citations=[INVENTED]),  # refused for want of a verified one
        results_line("a", "quiet", "pass"),
    ]
    data = report_data(read_results(write_results(tmp_path / "r.jsonl", lines)))
    cited, quiet = (
        {key: value for key, value in g.items() if key.startswith("citations")}
        for g in data["graders"]  # g, then quiet
    )
    assert cited == {"citations": 4, "citations_verified": 2, "citations_share": 0.5}
    assert quiet == {"citations": 0, "citations_verified": 0, "citations_share": None}


def test_a_cell_holds_its_citations_clipped_and_the_output_s_span_as_shown(
    tmp_path: Path,
) -> None:
    hostile = "</script><script>window.__pwned = 1</script>"
    line = line_with(
        citations=[citation("output", "b", [2, 3]), citation("M1", hostile), "x" * 5000]
    )
    line["output"] = "a\x1bb"  # the escape shows as \x1b: four characters for one
    data = report_data(read_results(write_results(tmp_path / "r.jsonl", [line])))
    shown, quoted, long = data["rows"][0]["cells"][0]["citations"]
    assert shown["span"] == [2, 3] and shown["shown"] == [5, 6]
    assert data["rows"][0]["output"][5:6] == "b"
    assert quoted["quote"] == hostile and quoted["status"] == "unverified"
    assert long["quote"]["length"] == 5000 and len(long["quote"]["clipped"]) == TEXT_LIMIT


def test_a_span_past_the_text_is_held_to_its_end() -> None:
    assert shown_span("abc", [1, 99]) == [1, 3]
    assert shown_span("a\x00bc", [2, 3]) == [5, 6]


def test_the_comparison_says_whether_a_changed_verdict_s_citations_changed() -> None:
    before = line_with("pass", citations=[GOOD])
    assert citations_change(before, line_with("fail", citations=[GOOD])) == "same citations"
    changed = citations_change(before, line_with("fail", citations=[INVENTED]))
    assert changed == "citations changed: 1 of 1 verified → 0 of 1 verified"
    gone = citations_change(before, line_with("fail"))
    assert gone == "citations changed: 1 of 1 verified → none"
    assert citations_change(line_with("pass"), line_with("fail")) is None


def test_a_citation_is_placed_only_in_the_request_it_was_given_in() -> None:
    texts = {"A": "meh", "input": "q"}
    given = [
        read_citation(citation("A", "meh", [0, 3]), "output-first") | {"request": 0},
        read_citation(citation("A", "meh", [0, 3]), "baseline-first") | {"request": 1},
        read_citation(citation("A", "meh", [0, 3]), "vote 1"),
        read_citation(citation("input", "q", [0, 1]), "vote 1"),
    ]
    place_citations(given, 1, texts, pairwise=True)
    assert ["shown" in c for c in given] == [False, True, False, False]
    place_citations(given, 0, texts, pairwise=True)
    assert ["shown" in c for c in given] == [True, True, False, True]

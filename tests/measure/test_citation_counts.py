"""The citations of judged results: found wherever a result keeps them, counted, and the
unverified ones named by what was judged."""

from __future__ import annotations

from conftest import cited_result, item_entry, order_entry, recorded_citation, tally

from rubriclib.judging.citations import given_citations
from rubriclib.judging.result import with_details
from rubriclib.measure.citations import count_citations, verified_citations
from rubriclib.rubrics.rubric import Rubric


def test_a_result_without_citations_has_none(rubric: Rubric) -> None:
    result = cited_result(rubric, "pass")
    assert given_citations(result.details) == [] and verified_citations(result) == []
    counts = count_citations([({"golden": "g"}, result)])
    assert (counts.given, counts.verified, counts.unverified) == (0, 0, 0)
    assert counts.verified_share is None and counts.unverified_citations == []


def test_citations_are_found_in_votes_checklist_items_and_pairwise_orders(
    rubric: Rubric,
) -> None:
    bare = cited_result(rubric, "fail")
    voted = with_details(
        bare, votes=tally(["fail", "fail"], citations=[[recorded_citation("one")], []])
    )
    items = with_details(
        bare,
        checklist=[
            item_entry("a", "no", citations=[recorded_citation("two", "unverified")]),
            item_entry("b", "yes"),
        ],
    )
    orders = [
        order_entry("output-first", citations=[recorded_citation("three", block="A")]),
        order_entry("baseline-first", citations=[recorded_citation("four", block="B")]),
    ]
    compared = with_details(bare, pairwise={"winner": "tie", "orders": orders})
    found = [given_citations(result.details) for result in (voted, items, compared)]
    assert [[c["quote"] for c in listed] for listed in found] == [
        ["one"],
        ["two"],
        ["three", "four"],
    ]
    assert [c["by"] for c in found[0] + found[1] + found[2]] == [
        "vote 1",
        "item a",
        "output-first",
        "baseline-first",
    ]
    assert [c["quote"] for c in verified_citations(items)] == []


def test_counts_and_the_unverified_named_by_what_was_judged(rubric: Rubric) -> None:
    first = cited_result(
        rubric,
        "fail",
        recorded_citation("the date"),
        recorded_citation("Friday", "unverified", found_in="context"),
    )
    second = cited_result(
        rubric,
        "pass",
        recorded_citation("made up", "unverified", block="M9", note="no block M9 was shown"),
    )
    counts = count_citations(
        [({"golden": "a", "trial": 1}, first), ({"golden": "b", "trial": 1}, second)]
    )
    assert (counts.given, counts.verified, counts.unverified) == (3, 1, 2)
    assert counts.verified_share == 1 / 3
    assert counts.unverified_citations == [
        {"golden": "a", "trial": 1, "block": "output", "quote": "Friday", "found_in": "context"},
        {
            "golden": "b",
            "trial": 1,
            "block": "M9",
            "quote": "made up",
            "note": "no block M9 was shown",
        },
    ]

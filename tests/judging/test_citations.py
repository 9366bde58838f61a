"""Citations checked against the blocks a judge was shown: pure, no request."""

from __future__ import annotations

from typing import Any

import pytest

from rubriclib.judging.citations import checked_citations, cite_matches, normalised, verified
from rubriclib.judging.prompt.agent_run import cut_middle

BLOCKS = {
    "context": "Apollo 11 landed on 20 July 1969.",
    "output": "It landed in 1969, says the  passage.\nNothing more.",
    "M2": 'tool call book_flight (call_1): {"to": "Paris"}',
}


def check(block: Any, quote: Any) -> dict[str, Any]:
    [checked] = checked_citations([{"block": block, "quote": quote}], BLOCKS)
    return checked


def test_a_verbatim_quote_is_verified_with_its_span_in_the_block() -> None:
    checked = check("context", "landed on 20 July")
    assert checked["status"] == "verified"
    start, end = checked["span"]
    assert BLOCKS["context"][start:end] == "landed on 20 July"


def test_an_invented_quote_is_unverified() -> None:
    checked = check("output", "landed in 1970")
    assert checked == {"block": "output", "quote": "landed in 1970", "status": "unverified"}


def test_a_quote_from_another_block_names_where_it_is() -> None:
    checked = check("output", "20 July 1969")
    assert checked["status"] == "unverified" and checked["found_in"] == "context"


def test_whitespace_and_unicode_forms_are_normalised_and_the_span_is_the_original_text() -> None:
    checked = check("output", "says the passage. Nothing")  # two spaces and a newline in the block
    assert checked["status"] == "verified"
    start, end = checked["span"]
    assert BLOCKS["output"][start:end] == "says the  passage.\nNothing"
    blocks = {"output": "the café’s ﬁle"}  # a precomposed é, a typographic apostrophe, a ligature
    [checked] = checked_citations([{"block": "output", "quote": "cafe\u0301's file"}], blocks)
    assert checked["status"] == "verified" and checked["span"] == [4, 14]


def test_quote_marks_and_ellipses_a_judge_wraps_around_a_quote_are_not_part_of_it() -> None:
    assert check("context", '"landed on 20 July"')["status"] == "verified"
    assert check("context", "...landed on 20 July...")["status"] == "verified"
    assert check("context", "“landed on 20 July”")["status"] == "verified"


def test_block_ids_are_read_as_a_judge_writes_them() -> None:
    for given in ("M2", "[M2]", " m2 ", "[m2]"):
        checked = check(given, '"to": "Paris"')
        assert (checked["block"], checked["status"]) == ("M2", "verified")
    assert check("OUTPUT", "Nothing more")["block"] == "output"


def test_an_unknown_block_is_unverified_and_says_so() -> None:
    checked = check("M9", "Paris")
    assert checked["status"] == "unverified" and checked["note"] == "no block M9 was shown"
    assert checked["found_in"] == "M2"


def test_a_quote_across_a_cut_marker_never_verifies() -> None:
    text = "BEGIN " + "x" * 200 + " END"
    shown = cut_middle(text, 40)
    assert "characters cut" in shown
    blocks = {"M1": shown}
    head, tail = shown.split("\n")[0], shown.split("\n")[-1]
    across = f"{head[-5:]}\n{shown.split(chr(10))[1]}\n{tail[:5]}"
    for quote, status in (
        (head, "verified"),
        (tail, "verified"),
        (across, "unverified"),
        ("characters cut", "unverified"),
    ):
        [checked] = checked_citations([{"block": "M1", "quote": quote}], blocks)
        assert checked["status"] == status, quote
    [tail_checked] = checked_citations([{"block": "M1", "quote": tail}], blocks)
    assert shown[slice(*tail_checked["span"])] == tail


@pytest.mark.parametrize(
    ("raw", "note"),
    [
        ("not a list", "citations is not a list of {block, quote} objects"),
        (["M1: quote"], "not a {block, quote} object"),
        ([{"block": 2, "quote": "x"}], "block and quote must both be strings"),
        ([{"block": "output", "quote": '  "" '}], "the quote is empty"),
    ],
)
def test_malformed_citations_are_kept_as_unverified_never_a_crash(raw: Any, note: str) -> None:
    [checked] = checked_citations(raw, BLOCKS)
    assert checked["status"] == "unverified" and checked["note"] == note


def test_no_citations_given_is_an_empty_list_and_verified_counts() -> None:
    assert checked_citations(None, BLOCKS) == []
    both = checked_citations(
        [{"block": "context", "quote": "1969"}, {"block": "context", "quote": "1970"}], BLOCKS
    )
    assert verified(both) == 1


def test_a_golden_cite_matches_a_verified_quote_that_holds_it_or_is_held() -> None:
    cited = checked_citations([{"block": "context", "quote": "landed on 20 July 1969"}], BLOCKS)
    assert cite_matches("20 July", cited)
    assert cite_matches("Apollo 11 landed on 20  July 1969.", cited)
    assert not cite_matches("1970", cited)
    invented = checked_citations([{"block": "output", "quote": "20 July"}], BLOCKS)
    assert not cite_matches("20 July", invented)  # unverified quotes never count


def test_normalised_keeps_where_each_character_came_from() -> None:
    flat, origin = normalised("a \t\n b")
    assert flat == "a b" and origin == [0, 1, 5]

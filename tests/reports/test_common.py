"""The report helpers every page and table shares: text shown safely in a terminal and in XML."""

from __future__ import annotations

from conftest import HOSTILE, unsafe_characters

from rubriclib.errors import printable
from rubriclib.reports.common import xml_safe


def test_printable_shows_controls_as_escapes_and_keeps_ordinary_text() -> None:
    assert printable("plain, é, 中文, emoji 🎉") == "plain, é, 中文, emoji 🎉"
    assert printable("\x1b[31mred\x1b]0;t\x07") == "\\x1b[31mred\\x1b]0;t\\x07"
    assert printable("a\nb\tc\rd\x00\x9b") == "a\\nb\\tc\\rd\\x00\\x9b"
    assert printable("\u202e\u200b\U000e0041\ud800\u2028") == (
        "\\u202e\\u200b\\U000e0041\\ud800\\u2028"
    )
    assert unsafe_characters(printable(HOSTILE)) == set()


def test_printable_cuts_long_text_between_escapes() -> None:
    assert printable("x" * 200, limit=160) == "x" * 160 + "..."
    assert printable("abc\x1b", limit=5) == "abc..."  # never half of "\x1b"
    assert printable("short", limit=160) == "short"


def test_xml_safe_replaces_what_xml_cannot_carry_and_keeps_line_breaks() -> None:
    assert xml_safe("a\x00b\x1b[1m\x7f\x85\ud800\ufffe\U0001ffff") == (
        "a\\x00b\\x1b[1m\\x7f\\x85\\ud800\\ufffe\\U0001ffff"
    )
    assert xml_safe("tab\tline\nreturn\r é 中 </x> ]]>") == "tab\tline\nreturn\r é 中 </x> ]]>"

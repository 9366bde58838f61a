"""What every report shares: safe text, numbers as text, the run object, JUnit elements.

Every report stays valid whatever text a judge or a goldens file holds: the table shows
control characters as escapes (`printable`), JUnit XML replaces what XML 1.0 cannot carry
(`xml_safe`), and JSON keeps text exactly, escaped by `json.dumps`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rubriclib._version import __version__
from rubriclib.errors import escaped_character, printable
from rubriclib.judging import GradeResult
from rubriclib.measure import CitationCounts, FlipRates, Interval

if TYPE_CHECKING:
    from rubriclib.judging import RunInfo

# What `xml_safe` replaces: characters XML 1.0 forbids even as references (C0 controls but tab,
# newline and carriage return; surrogates; U+FFFE, U+FFFF) and those its section 2.2 asks
# documents to avoid (DEL, C1 controls, noncharacters).
_XML_UNSAFE = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
    + "".join(f"\\U{plane:04x}fffe\\U{plane:04x}ffff" for plane in range(1, 17))
    + "]"
)

_BLANKS = re.compile(r"[ \t\r\n]+")


def xml_safe(text: str) -> str:
    """Text XML 1.0 can carry: characters it forbids or discourages shown as escapes like
    `printable`'s (\\x1b, \\ud800); tab, newline and carriage return are kept."""
    return _XML_UNSAFE.sub(lambda match: escaped_character(match.group()), text)


def one_line(text: str, limit: int) -> str:
    """Text on one line for the table: blanks and line breaks collapsed, the rest `printable`."""
    return printable(_BLANKS.sub(" ", text).strip(), limit)


def percent_text(value: float | None) -> str:
    """A share as a percentage with one decimal (`n/a` when None)."""
    return "n/a" if value is None else f"{value:.1%}"


def flip_rates_text(rates: FlipRates, trials: int, noun: str, errors: int = 0) -> str:
    """Flip rates as the reports say them: `across 3 trials: flipped 1 of 4 golden(s) (25.0%),
    disagreement 8.3% (1 of 12 verdict(s) off their golden's majority)`, saying that judge
    errors were left out when there were some."""
    left_out = "; judge errors left out" if errors else ""
    return (
        f"across {trials} trials: flipped {rates.flipped} of {rates.compared} {noun}(s) "
        f"({percent_text(rates.flipped_share)}), disagreement {percent_text(rates.disagreement)} "
        f"({rates.differing} of {rates.judgments} verdict(s) off their {noun}'s majority"
        f"{left_out})"
    )


def flip_rates_json(rates: FlipRates | None) -> dict[str, Any] | None:
    """Flip rates for JSON (None when each thing was judged once: nothing to compare)."""
    if rates is None:
        return None
    return {
        "flipped": rates.flipped,
        "compared": rates.compared,
        "flipped_share": rates.flipped_share,
        "disagreement": rates.disagreement,
        "differing": rates.differing,
        "judgments": rates.judgments,
    }


def decimal_text(value: float | None) -> str:
    """A number with two decimals (`n/a` when None)."""
    return "n/a" if value is None else f"{value:.2f}"


def latency_seconds(result: GradeResult) -> float:
    """`details.judge.latency_ms` in seconds."""
    return result.details.judge.latency_ms / 1000


def pairwise_text(stats: dict[str, Any]) -> str:
    """Win / tie / loss rates of the output against the baseline, and the position-flip rate."""
    text = (
        f"output win {percent_text(stats['win_rate'])}, tie {percent_text(stats['tie_rate'])}, "
        f"loss {percent_text(stats['loss_rate'])}; position flips "
        f"{percent_text(stats['flip_rate'])}"
    )
    if stats["comparisons"]:
        text += f" ({stats['position_flips']} of {stats['comparisons']})"
    return text


def interval_json(interval: Interval | None) -> dict[str, float] | None:
    """An interval as a JSON report gives it: {"low", "high"}, or None."""
    return None if interval is None else {"low": interval[0], "high": interval[1]}


def interval_text(interval: Interval | None, show: Callable[[float | None], str]) -> str:
    """The 95% interval to print beside a number (empty when there is none)."""
    if interval is None:
        return ""
    return f"  (95% interval {show(interval[0])} to {show(interval[1])})"


def citations_text(counts: CitationCounts) -> str:
    """The citations a judge gave, for a table: `12 given, 10 verified (83.3%), 2 unverified`;
    empty when it gave none (a table without citations stays as it was)."""
    if not counts.given:
        return ""
    return (
        f"{counts.given} given, {counts.verified} verified "
        f"({percent_text(counts.verified_share)}), {counts.unverified} unverified"
    )


def citations_json(counts: CitationCounts) -> dict[str, Any]:
    """The citations a judge gave, for a JSON report: the counts, the verified share (None
    when none was given) and every unverified citation with what was judged."""
    return {
        "given": counts.given,
        "verified": counts.verified,
        "unverified": counts.unverified,
        "verified_share": counts.verified_share,
        "unverified_citations": counts.unverified_citations,
    }


def quotes_text(quotes: list[str], limit: int) -> str:
    """Quotes for a table line: each quoted, on one line, shown safely."""
    return ", ".join(f'"{one_line(quote, limit)}"' for quote in quotes)


def iso_time(timestamp: float) -> str:
    """A time.time() value as ISO 8601 UTC, e.g. 2025-01-31T09:30:00.250Z."""
    moment = datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")
    return moment.replace("+00:00", "Z")


def run_json(info: RunInfo | None, results: list[GradeResult]) -> dict[str, Any]:
    """What a run was (version, judge, endpoint, times, tokens summed over `results`), for the
    `run` object of a JSON report."""
    return {
        "rubriclib_version": __version__,
        "judge_model": info.judge_model if info else None,
        "endpoint": info.endpoint if info else None,
        "started": iso_time(info.started) if info else None,
        "finished": iso_time(info.finished) if info else None,
        "duration_seconds": round(info.finished - info.started, 3) if info else None,
        "usage": {
            "prompt_tokens": sum(result.details.judge.usage.prompt_tokens for result in results),
            "completion_tokens": sum(
                result.details.judge.usage.completion_tokens for result in results
            ),
        },
    }


def xml_element(
    parent: ElementTree.Element, tag: str, text: str | None = None, **attributes: str
) -> ElementTree.Element:
    """A child element whose text and attributes have passed through `xml_safe`."""
    safe = {name: xml_safe(value) for name, value in attributes.items()}
    element = ElementTree.SubElement(parent, tag, safe)
    if text is not None:
        element.text = xml_safe(text)
    return element


def xml_properties(parent: ElementTree.Element, values: dict[str, str]) -> None:
    properties = xml_element(parent, "properties")
    for name, value in values.items():
        xml_element(properties, "property", name=name, value=value)


def junit_totals(
    element: ElementTree.Element, tests: int, failures: int, errors: int, skipped: int, time: float
) -> None:
    """The JUnit totals as attributes, in the usual order; `time` in seconds."""
    totals = {"tests": tests, "failures": failures, "errors": errors, "skipped": skipped}
    for name, value in totals.items():
        element.set(name, str(value))
    element.set("time", f"{max(time, 0.0):.3f}")


def junit_text(root: ElementTree.Element) -> str:
    """A JUnit document as indented XML text, with its declaration."""
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True)


def unjudged_text(unjudged: int, total: int, noun: str, errors: int) -> str:
    """What judge errors kept from being measured, as the goldens and calibration summaries say
    it: `3 of 15 golden(s) could not be judged (4 judge error(s))`."""
    return f"{unjudged} of {total} {noun}(s) could not be judged ({errors} judge error(s))"

"""Reports of a golden run: valid and readable in every format, whatever text a judge returns."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from typing import Any

from conftest import (
    HOSTILE,
    cited_result,
    embedded_data,
    recorded_citation,
    unsafe_characters,
    won,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rubriclib
from rubriclib import Golden, GradeResult, Rubric
from rubriclib.judging.engine import RunInfo
from rubriclib.judging.result import judge_details, make_result
from rubriclib.measure.golden_stats import GoldenOutcome, RubricReport
from rubriclib.measure.goldens import GoldensReport
from rubriclib.reports.goldens import (
    GOLDENS_FORMATTERS,
    format_json,
    format_junit,
    format_table,
    to_json,
)
from rubriclib.reports.html.pages import goldens_page

STARTED = 1_700_000_000.0  # 2023-11-14T22:13:20Z


def judged(
    rubric: Rubric,
    verdict: str,
    reason: str = "r",
    latency_ms: int = 1500,
    usage: dict[str, int] | None = None,
) -> GradeResult:
    usage = usage if usage is not None else {"prompt_tokens": 10, "completion_tokens": 3}
    details = judge_details("m", "required", 1, latency_ms, usage)
    return make_result(rubric, details, verdict, reason)  # type: ignore[arg-type]


def golden(name: str = "g", expected: str = "pass", **fields: Any) -> Golden:
    return Golden(name=name, output=fields.pop("output", "o"), expected=expected, **fields)  # type: ignore[arg-type]


def info(interrupted: str | None = None, planned: int = 2) -> RunInfo:
    return RunInfo(
        judge_model="judge-model",
        endpoint="http://127.0.0.1:8080/v1",
        started=STARTED,
        finished=STARTED + 2.5,
        planned=planned,
        interrupted=interrupted,
    )


def hostile_run(rubric: Rubric, text: str) -> GoldensReport:
    """A miss, a judge error and an agreement, with `text` in every free-text field."""
    fields: dict[str, Any] = {"input": text, "context": text, "reference": text, "why": text}
    fields["tags"] = [text]
    missed = GoldenOutcome(golden("missed", output=text, **fields), [judged(rubric, "fail", text)])
    broken = GoldenOutcome(golden("broken", output=text), [judged(rubric, "error", text)])
    agreed = GoldenOutcome(golden("agreed", output=text), [judged(rubric, "pass", text)])
    return GoldensReport([RubricReport(rubric, [missed, broken, agreed])], 1, info(planned=3))


def test_table_never_passes_control_characters_to_the_terminal(rubric: Rubric) -> None:
    table = format_table(hostile_run(rubric, HOSTILE))
    assert unsafe_characters(table) == set()
    lines = table.splitlines()
    # summary, missed + its reason, broken + its reason, agreed, blank, last line; the marks
    # padded to ERROR's width, the reasons under the names
    assert len(lines) == 8
    assert lines[1].startswith("  MISS  missed  expected pass  got fail")
    assert lines[2].startswith("        \\x1b[31mred\\x1b[0m \\x1b]0;owned\\x07 NUL\\x00")
    assert "\\ud800 " in lines[2] and "\\u202egnp.exe second line" in lines[2]
    assert lines[2].endswith("tabb...") and len(lines[2]) == 8 + 160 + 3  # cut at 160
    assert lines[3].startswith("  ERROR broken  expected pass  got error")


def test_table_reason_is_one_line_with_blanks_collapsed(rubric: Rubric) -> None:
    reason = "first\n\n  second\r\n\tthird\x1fsep"
    outcome = GoldenOutcome(golden(), [judged(rubric, "fail", reason)])
    table = format_table(GoldensReport([RubricReport(rubric, [outcome])], 1))
    assert table.splitlines()[2] == "       first second third\\x1fsep"


def test_junit_stays_valid_and_keeps_hostile_text_as_text(rubric: Rubric) -> None:
    root = ElementTree.fromstring(format_junit(hostile_run(rubric, HOSTILE)))
    cases = list(root.iter("testcase"))
    assert [case.get("name") for case in cases] == [
        "missed [trial 1]",
        "broken [trial 1]",
        "agreed [trial 1]",
    ]  # no testcase injected by the reason's markup
    failure = cases[0].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.startswith("\\x1b[31mred\\x1b[0m \\x1b]0;owned\\x07 NUL\\x00")
    assert "</failure><testcase name='x'> ]]> <![CDATA[ &amp; \\ud800 \\ufffe" in failure.text
    assert cases[1].find("error") is not None and cases[2].find("system-out") is None


def test_json_round_trips_every_text_exactly(rubric: Rubric) -> None:
    document = format_json(hostile_run(rubric, HOSTILE))
    assert document.isascii()
    goldens = json.loads(document)["rubrics"][0]["goldens"]
    assert goldens[0]["results"][0]["reason"] == HOSTILE
    assert [goldens[0][key] for key in ("input", "context", "reference", "output", "why")] == [
        HOSTILE
    ] * 5
    assert goldens[0]["tags"] == [HOSTILE]


def test_very_long_lines_stay_bounded_in_the_table_and_whole_elsewhere(rubric: Rubric) -> None:
    reason = "\x1b" * 50_000 + "y" * 100_000
    run = hostile_run(rubric, reason)
    assert max(len(line) for line in format_table(run).splitlines()) < 400
    failure = ElementTree.fromstring(format_junit(run)).find(".//failure")
    assert failure is not None and failure.text == "\\x1b" * 50_000 + "y" * 100_000
    assert json.loads(format_json(run))["rubrics"][0]["goldens"][0]["results"][0]["reason"] == (
        reason
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(st.characters(exclude_categories=())))
def test_every_format_stays_valid_for_any_text(rubric: Rubric, text: str) -> None:
    run = hostile_run(rubric, text)
    table = format_table(run)
    assert unsafe_characters(table) == set() and len(table.splitlines()) == 8
    root = ElementTree.fromstring(format_junit(run))
    assert len(list(root.iter("testcase"))) == 3
    data = json.loads(format_json(run))
    assert data["rubrics"][0]["goldens"][0]["results"][0]["reason"] == text
    assert data["rubrics"][0]["goldens"][0]["input"] == text


def test_junit_names_are_stable_across_versions_and_free_of_dots(rubric: Rubric) -> None:
    def identities(version: str) -> list[tuple[str | None, str | None]]:
        bumped = rubric.model_copy(update={"version": version})
        outcomes = [GoldenOutcome(golden(), [judged(bumped, "pass"), judged(bumped, "pass")])]
        root = ElementTree.fromstring(
            format_junit(GoldensReport([RubricReport(bumped, outcomes)], 2))
        )
        return [(case.get("classname"), case.get("name")) for case in root.iter("testcase")]

    assert (
        identities("1.2.3")
        == identities("2.0.0-rc.1")
        == [
            ("tiny", "g [trial 1]"),
            ("tiny", "g [trial 2]"),
        ]
    )


def test_junit_suite_carries_identity_totals_and_times(rubric: Rubric) -> None:
    outcomes = [
        GoldenOutcome(golden("a"), [judged(rubric, "pass", latency_ms=1500)]),
        GoldenOutcome(golden("b", "fail", input="q"), [judged(rubric, "pass", "why not")]),
        GoldenOutcome(golden("c"), [judged(rubric, "error", "timed out", latency_ms=250)]),
    ]
    run = GoldensReport([RubricReport(rubric, outcomes)], 1, info(planned=3))
    root = ElementTree.fromstring(format_junit(run))
    assert {key: root.get(key) for key in ("tests", "failures", "errors", "skipped", "time")} == {
        "tests": "3",
        "failures": "1",
        "errors": "1",
        "skipped": "0",
        "time": "2.500",  # the run's wall time
    }
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "tiny@1.2.3"
    assert suite.get("time") == "3.250" and suite.get("timestamp") == "2023-11-14T22:13:20"
    properties = {p.get("name"): p.get("value") for p in suite.iterfind("properties/property")}
    assert properties == {"version": "1.2.3", "digest": rubric.digest, "corrected": "0"}
    a, b, c = suite.iter("testcase")
    assert a.get("time") == "1.500" and list(a) == []
    failure = b.find("failure")
    assert failure is not None and failure.get("message") == "expected fail, got pass"
    assert b.findtext("system-out") == (
        "--- input ---\nq\n--- output ---\no\n--- judge reason ---\nwhy not"
    )
    error = c.find("error")
    assert error is not None and error.get("message") == "judge error"
    assert error.text == "timed out" and "--- judge reason ---\ntimed out" in (
        c.findtext("system-out") or ""
    )


def test_junit_without_run_info_sums_case_times(rubric: Rubric) -> None:
    outcomes = [GoldenOutcome(golden(), [judged(rubric, "pass", latency_ms=1234)])]
    root = ElementTree.fromstring(format_junit(GoldensReport([RubricReport(rubric, outcomes)], 1)))
    suite = root.find("testsuite")
    assert root.get("time") == "1.234" and suite is not None and suite.get("timestamp") is None


def test_json_run_object(rubric: Rubric) -> None:
    outcomes = [
        GoldenOutcome(
            golden("a", tags=["adversarial"], why="w", input="i", context="c", reference="r"),
            [
                judged(rubric, "pass"),
                judged(rubric, "pass", usage={"prompt_tokens": 5, "completion_tokens": 0}),
            ],
        )
    ]
    data = to_json(GoldensReport([RubricReport(rubric, outcomes)], 2, info()))
    assert data["run"] == {
        "rubriclib_version": rubriclib.__version__,
        "judge_model": "judge-model",
        "endpoint": "http://127.0.0.1:8080/v1",
        "started": "2023-11-14T22:13:20.000Z",
        "finished": "2023-11-14T22:13:22.500Z",
        "duration_seconds": 2.5,
        "usage": {"prompt_tokens": 15, "completion_tokens": 3},
        "planned": 2,
        "judged": 2,
        "interrupted": None,
    }
    [entry] = data["rubrics"][0]["goldens"]
    assert {key: entry[key] for key in ("tags", "why", "input", "context", "reference")} == {
        "tags": ["adversarial"],
        "why": "w",
        "input": "i",
        "context": "c",
        "reference": "r",
    }
    assert entry["output"] == "o" and entry["verdicts"] == ["pass", "pass"] and data["ok"] is True


def test_results_that_cost_no_tokens_or_time(rubric: Rubric) -> None:
    bare = judged(rubric, "fail", latency_ms=0, usage={"prompt_tokens": 0, "completion_tokens": 0})
    run = GoldensReport([RubricReport(rubric, [GoldenOutcome(golden(), [bare])])], 1)
    data = to_json(run)
    assert data["run"]["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}
    assert data["run"]["planned"] == 1 and data["run"]["started"] is None
    case = ElementTree.fromstring(format_junit(run)).find(".//testcase")
    assert case is not None and case.get("time") == "0.000"
    assert format_table(run).splitlines()[-1].startswith("REGRESSION: 1 rubric(s)")


def interrupted_run(rubric: Rubric) -> GoldensReport:
    """Trials 2: `done` judged twice, `half` once, `never` not at all; 3 of 6 judgments made."""
    outcomes = [
        GoldenOutcome(golden("done"), [judged(rubric, "pass"), judged(rubric, "pass")]),
        GoldenOutcome(golden("half"), [judged(rubric, "pass")]),
        GoldenOutcome(golden("never", "fail"), []),
    ]
    return GoldensReport([RubricReport(rubric, outcomes)], 2, info("SIGINT", planned=6))


def test_interrupted_table(rubric: Rubric) -> None:
    lines = format_table(interrupted_run(rubric)).splitlines()
    assert lines[-1] == (
        "INTERRUPTED (SIGINT): judged 3 of 6 judgment(s); 1 rubric(s), 3 golden(s) x 2 trial(s); "
        "0 golden(s) missed, 0 judge error(s), 1 golden(s) not judged"
    )
    assert lines[1:5] == [
        "  across 2 trials: flipped 0 of 1 golden(s) (0.0%), disagreement 0.0% (0 of 2 "
        "verdict(s) off their golden's majority)",  # `half`, judged once, is not compared
        "  ok   done   expected pass  got pass, pass",
        "  ok   half   expected pass  got pass  (judged 1 of 2)",
        "  --   never  expected fail  -- not judged",
    ]


def test_interrupted_json(rubric: Rubric) -> None:
    data = json.loads(format_json(interrupted_run(rubric)))
    assert data["ok"] is False and data["run"]["interrupted"] == "SIGINT"
    assert (data["run"]["planned"], data["run"]["judged"]) == (6, 3)
    assert data["rubrics"][0]["goldens"][2]["verdicts"] == []


def test_interrupted_junit_skips_what_was_not_judged(rubric: Rubric) -> None:
    root = ElementTree.fromstring(format_junit(interrupted_run(rubric)))
    assert root.find("properties/property[@name='interrupted']").get("value") == "SIGINT"  # type: ignore[union-attr]
    assert (root.get("tests"), root.get("skipped"), root.get("failures")) == ("6", "3", "0")
    suite = root.find("testsuite")
    assert suite is not None and suite.get("skipped") == "3"
    assert suite.find("properties/property[@name='interrupted']") is not None
    skipped = [
        case.get("name")
        for case in suite.iter("testcase")
        if (mark := case.find("skipped")) is not None
        and mark.get("message") == "not judged: interrupted"
    ]
    assert skipped == ["half [trial 2]", "never [trial 1]", "never [trial 2]"]


def test_a_finished_run_is_unchanged_by_the_interrupt_support(rubric: Rubric) -> None:
    outcomes = [GoldenOutcome(golden(), [judged(rubric, "pass")])]
    run = GoldensReport([RubricReport(rubric, outcomes)], 1, info(planned=1))
    assert format_table(run).splitlines()[-1] == (
        "OK: 1 rubric(s), 1 golden(s) x 1 trial(s); 0 golden(s) missed, 0 judge error(s)"
    )
    root = ElementTree.fromstring(format_junit(run))
    assert root.find("properties") is None and root.find(".//skipped") is None


def test_formatters_by_name_and_module_direction() -> None:
    assert {"table": format_table, "json": format_json, "junit": format_junit} == GOLDENS_FORMATTERS
    probe = (
        "import sys, rubriclib.measure.goldens; "
        "print('rubriclib.reports.common' in sys.modules, 'rubriclib.reports.goldens' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.stdout.strip() == "False False"


def cited_run(rubric: Rubric) -> GoldensReport:
    """A golden met with its cites, one that got its verdict without citing, and a golden
    without cites whose judge gave an unverified citation."""
    wanted = ["on Friday", "the 3rd"]
    met = GoldenOutcome(
        golden("met", "fail", cites=wanted),
        [
            cited_result(
                rubric, "fail", recorded_citation("It is on Friday"), recorded_citation("the 3rd")
            )
        ],
    )
    uncited = GoldenOutcome(
        golden("uncited", "fail", cites=wanted),
        [cited_result(rubric, "fail", recorded_citation("on Friday"))],
    )
    plain = GoldenOutcome(
        golden("plain"),
        [
            cited_result(
                rubric, "pass", recorded_citation("made up", "unverified", found_in="input")
            )
        ],
    )
    return GoldensReport([RubricReport(rubric, [met, uncited, plain])], 1, info(planned=3))


def test_table_names_the_quote_a_golden_was_not_cited_for(rubric: Rubric) -> None:
    lines = format_table(cited_run(rubric)).splitlines()
    assert lines[0].endswith(
        "corrected 0, missed cites 1  citations 4 given, 3 verified (75.0%), 1 unverified"
    )
    assert lines[1].startswith("  ok   met ")
    assert lines[2].startswith("  MISS uncited ") and lines[2].endswith("got fail")
    assert lines[3] == '       not cited: "the 3rd"'
    assert lines[-1].startswith(
        "REGRESSION: 1 rubric(s), 3 golden(s) x 1 trial(s); 1 golden(s) missed"
    )


def test_a_table_without_citations_or_cites_shows_nothing_new(rubric: Rubric) -> None:
    plain = GoldenOutcome(golden(), [judged(rubric, "pass")])
    summary = format_table(GoldensReport([RubricReport(rubric, [plain])], 1)).splitlines()[0]
    assert summary.endswith("judge errors 0, flaky 0, corrected 0")


def test_json_counts_citations_and_lists_the_unverified(rubric: Rubric) -> None:
    data = json.loads(format_json(cited_run(rubric)))
    assert not data["ok"]
    [report] = data["rubrics"]
    assert (report["misses"], report["uncited"], report["accuracy"]) == (1, 1, 1.0)
    assert report["citations"] == {
        "given": 4,
        "verified": 3,
        "unverified": 1,
        "verified_share": 0.75,
        "unverified_citations": [
            {
                "golden": "plain",
                "trial": 1,
                "block": "output",
                "quote": "made up",
                "found_in": "input",
            }
        ],
    }
    met, uncited, plain = report["goldens"]
    assert met["cites"] == ["on Friday", "the 3rd"] and met["agreed"] and met["met"] == [True]
    assert uncited["uncited"] == [["the 3rd"]] and not uncited["agreed"]
    assert plain["cites"] == [] and plain["uncited"] == [[]] and plain["agreed"]


def test_json_counts_are_there_when_the_judge_gave_no_citation(rubric: Rubric) -> None:
    run = GoldensReport(
        [RubricReport(rubric, [GoldenOutcome(golden(), [judged(rubric, "pass")])])], 1
    )
    [report] = to_json(run)["rubrics"]
    assert report["citations"] == {
        "given": 0,
        "verified": 0,
        "unverified": 0,
        "verified_share": None,
        "unverified_citations": [],
    }


def test_junit_fails_a_case_that_got_its_verdict_without_citing(rubric: Rubric) -> None:
    root = ElementTree.fromstring(format_junit(cited_run(rubric)))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "0")
    cases = {case.get("name"): case for case in root.iter("testcase")}
    failure = cases["uncited [trial 1]"].find("failure")
    assert failure is not None
    assert failure.get("message") == 'expected fail, got fail but did not cite "the 3rd"'
    assert (failure.text or "").startswith('not cited: "the 3rd"\n')
    assert list(cases["met [trial 1]"]) == [] and list(cases["plain [trial 1]"]) == []


def test_the_goldens_page_notes_citations_and_the_quotes_not_cited(rubric: Rubric) -> None:
    notes = embedded_data(goldens_page(cited_run(rubric)))["notes"]
    assert notes == [
        "tiny: citations 4 given, 3 verified (75.0%), 1 unverified",
        'tiny: golden uncited got its expected verdict without citing "the 3rd"',
    ]
    plain = GoldensReport(
        [RubricReport(rubric, [GoldenOutcome(golden(), [judged(rubric, "pass")])])], 1
    )
    assert embedded_data(goldens_page(plain))["notes"] == []


def flipping_run(rubric: Rubric, pairwise: Rubric) -> GoldensReport:
    """Trials 3 of two rubrics: `tiny` with a steady golden and one split 2-1, a pairwise
    rubric with one golden whose winner went output, tie, output."""
    steady = GoldenOutcome(golden("steady"), [judged(rubric, "pass")] * 3)
    split = [judged(rubric, "pass"), judged(rubric, "fail"), judged(rubric, "pass")]
    winners = [won(pairwise, winner) for winner in ("output", "tie", "output")]
    contest = GoldenOutcome(golden("contest", expected_winner="output", baseline="b"), winners)
    return GoldensReport(
        [
            RubricReport(rubric, [steady, GoldenOutcome(golden("split"), split)]),
            RubricReport(pairwise, [contest]),
        ],
        3,
    )


def test_flip_rates_per_rubric_and_over_the_run(rubric: Rubric, pairwise: Rubric) -> None:
    run = flipping_run(rubric, pairwise)
    lines = format_table(run).splitlines()
    assert lines[1:3] == [
        "  across 3 trials: flipped 1 of 2 golden(s) (50.0%), disagreement 16.7% (1 of 6 "
        "verdict(s) off their golden's majority)",
        "  flipped across trials: split",
    ]
    assert (  # a pairwise golden flips between winners
        "  across 3 trials: flipped 1 of 1 golden(s) (100.0%), disagreement 33.3% (1 of 3 "
        "verdict(s) off their golden's majority)"
    ) in lines
    assert lines[-2] == (
        "all rubrics across 3 trials: flipped 2 of 3 golden(s) (66.7%), disagreement 22.2% "
        "(2 of 9 verdict(s) off their golden's majority)"
    )
    document = to_json(run)
    assert document["flip_rates"]["flipped"] == 2 and document["flip_rates"]["judgments"] == 9
    assert [one["flip_rates"]["disagreement"] for one in document["rubrics"]] == [1 / 6, 1 / 3]
    root = ElementTree.fromstring(format_junit(run))
    suites = {
        suite.get("name"): {
            found.get("name"): found.get("value") for found in suite.iter("property")
        }
        for suite in root.iter("testsuite")
    }
    assert suites["tiny@1.2.3"]["flipped_share"] == "0.5000"
    assert suites["tiny@1.2.3"]["disagreement"] == "0.1667"
    overall = {
        found.get("name"): found.get("value") for found in root.findall("properties/property")
    }
    assert overall == {
        "trials": "3",
        "flipped": "2",
        "compared": "3",
        "flipped_share": "0.6667",
        "disagreement": "0.2222",
    }

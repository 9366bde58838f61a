"""Agreement statistics of a golden run, checked against values worked out by hand."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import cited_result, item_entry, keyword_responder, recorded_citation, tally
from judge_server import JudgeServer, Reply, tool_reply

from rubriclib import Golden, GradeResult, Rubric, RubricError, load_rubric
from rubriclib.cli import main
from rubriclib.item import Item
from rubriclib.judging.result import judge_details, make_result, pairwise_result, with_details
from rubriclib.measure.golden_stats import GoldenOutcome, RubricReport
from rubriclib.measure.goldens import GoldensReport, plan_run, run_goldens
from rubriclib.reports.goldens import format_json, format_table
from rubriclib.reports.goldens_junit import format_junit


def result(rubric: Rubric, verdict: str) -> GradeResult:
    details = judge_details("m", "required", 1, 1, {"prompt_tokens": 0, "completion_tokens": 0})
    return make_result(rubric, details, verdict, "r")  # type: ignore[arg-type]


def outcome(rubric: Rubric, expected: str, *verdicts: str) -> GoldenOutcome:
    golden = Golden(name=f"g-{expected}-{'-'.join(verdicts)}", output="o", expected=expected)  # type: ignore[arg-type]
    return GoldenOutcome(golden, [result(rubric, verdict) for verdict in verdicts])


def test_counts_accuracy_and_kappa(rubric: Rubric) -> None:
    # 20 judgments: expected pass 10 (judged 8 pass, 2 fail); expected fail 10 (1 pass, 9 fail).
    outcomes = [outcome(rubric, "pass", "pass")] * 8 + [outcome(rubric, "pass", "fail")] * 2
    outcomes += [outcome(rubric, "fail", "pass")] + [outcome(rubric, "fail", "fail")] * 9
    report = RubricReport(rubric, outcomes)
    assert report.counts == {
        "true_pass": 8,
        "false_pass": 1,
        "true_fail": 9,
        "false_fail": 2,
        "errors": 0,
    }
    assert report.accuracy == pytest.approx(17 / 20)
    # observed 0.85; chance = 0.45*0.5 + 0.55*0.5 = 0.5; kappa = 0.35 / 0.5
    assert report.kappa == pytest.approx(0.7)
    assert not report.ok


def test_errors_are_counted_apart_and_never_as_agreement(rubric: Rubric) -> None:
    report = RubricReport(
        rubric, [outcome(rubric, "pass", "pass"), outcome(rubric, "fail", "error")]
    )
    assert report.counts["errors"] == 1 and report.counts["true_fail"] == 0
    assert report.errors == 1 and report.judged == 1 and report.misses == 0
    assert report.accuracy == 1.0 and not report.ok  # over the judged: the error is apart
    assert [one.status for one in report.outcomes] == ["ok", "error"]


def test_a_golden_is_a_miss_when_any_judgment_with_a_verdict_missed(rubric: Rubric) -> None:
    assert outcome(rubric, "pass", "error", "fail").status == "miss"
    assert outcome(rubric, "pass", "pass", "error").status == "error"
    assert outcome(rubric, "pass", "pass", "pass").status == "ok"
    unjudged = Golden(name="unjudged", output="o", expected="pass")
    assert GoldenOutcome(unjudged, []).status == "not judged"


def test_kappa_is_undefined_when_chance_agreement_is_certain(rubric: Rubric) -> None:
    report = RubricReport(rubric, [outcome(rubric, "pass", "pass")] * 3)
    assert report.kappa is None and report.accuracy == 1.0 and report.ok
    assert RubricReport(rubric, []).kappa is None and RubricReport(rubric, []).accuracy is None


def test_perfect_disagreement_has_negative_kappa(rubric: Rubric) -> None:
    report = RubricReport(
        rubric, [outcome(rubric, "pass", "fail"), outcome(rubric, "fail", "pass")]
    )
    assert report.kappa == pytest.approx(-1.0)


def test_flaky_is_disagreement_across_trials(rubric: Rubric) -> None:
    steady = outcome(rubric, "pass", "fail", "fail")
    flaky = outcome(rubric, "pass", "pass", "error")
    report = RubricReport(rubric, [steady, flaky])
    assert not steady.flaky and flaky.flaky and report.flaky == [flaky.golden.name]
    table = format_table(GoldensReport([report], trials=2))
    assert "FLAKY" in table and table.splitlines()[-1].startswith("REGRESSION")


def test_intervals_bracket_accuracy_and_kappa_and_flipped_goldens_are_named(
    rubric: Rubric,
) -> None:
    outcomes = [outcome(rubric, "pass", "pass", "pass")] * 6 + [
        outcome(rubric, "fail", "fail", "fail")
    ] * 5
    outcomes += [outcome(rubric, "pass", "pass", "fail"), outcome(rubric, "fail", "fail", "pass")]
    report = RubricReport(rubric, outcomes)
    low, high = report.accuracy_interval  # type: ignore[misc]
    assert low < report.accuracy < high <= 1.0  # type: ignore[operator]
    kappa_low, kappa_high = report.kappa_interval  # type: ignore[misc]
    assert kappa_low < report.kappa < kappa_high <= 1.0  # type: ignore[operator]
    assert report.accuracy_interval == RubricReport(rubric, outcomes).accuracy_interval  # seeded
    table = format_table(GoldensReport([report], trials=2))
    assert "accuracy 92.3%  (95% interval " in table and "kappa 0.85 almost perfect  (95% " in table
    flipped = [line for line in table.splitlines() if "flipped across trials" in line]
    assert flipped == [
        f"  flipped across trials: {outcomes[-2].golden.name}, {outcomes[-1].golden.name}"
    ]
    assert "flipped across trials" not in format_table(
        GoldensReport([RubricReport(rubric, outcomes[:11])], trials=2)
    )


def test_flip_rates_count_goldens_that_flipped_and_verdicts_off_the_majority(
    rubric: Rubric,
) -> None:
    # 4 goldens x 3 trials: steady; 2-1 split; steady; a judge error beside 2 verdicts that
    # split 1-1 (the tie: 1 of its 2 verdicts is off its majority, whichever is the majority)
    outcomes = [
        outcome(rubric, "pass", "pass", "pass", "pass"),
        outcome(rubric, "pass", "pass", "fail", "pass"),
        outcome(rubric, "fail", "fail", "fail", "fail"),
        outcome(rubric, "fail", "error", "pass", "fail"),
        outcome(rubric, "fail", "error", "error", "fail"),  # one verdict: nothing to compare
    ]
    report = RubricReport(rubric, outcomes)
    assert report.flipped == [outcomes[1].golden.name, outcomes[3].golden.name]
    rates = report.flip_rates
    assert (rates.compared, rates.flipped, rates.judgments, rates.differing) == (4, 2, 11, 2)
    assert rates.flipped_share == 0.5 and rates.disagreement == pytest.approx(2 / 11)
    # a judge error is a flaky answer, but no flip: the steady verdicts of one golden are
    assert outcome(rubric, "pass", "pass", "error").flaky
    assert not outcome(rubric, "pass", "pass", "error").flipped
    table = format_table(GoldensReport([report], trials=3))
    assert (
        "  across 3 trials: flipped 2 of 4 golden(s) (50.0%), disagreement 18.2% (2 of 11 "
        "verdict(s) off their golden's majority; judge errors left out)"
    ) in table.splitlines()


def test_a_single_trial_reports_no_flip_rates(rubric: Rubric) -> None:
    report = RubricReport(rubric, [outcome(rubric, "pass", "pass")])
    run = GoldensReport([report, report], trials=1)
    table = format_table(run)
    assert "across" not in table and "flipped" not in table
    document = json.loads(format_json(run))
    assert document["flip_rates"] is None
    assert [rubric["flip_rates"] for rubric in document["rubrics"]] == [None, None]
    assert "flipped" not in format_junit(run) and "disagreement" not in format_junit(run)


class RaisingJudge:
    """A judge whose agrade raises for one output; the run must still give one result each."""

    model = "raising"
    endpoint = "http://127.0.0.1:1/v1"
    pace_key = endpoint

    async def agrade_item(self, rubric: Rubric, item: Item, **kwargs: Any) -> GradeResult:
        if item.output == "boom":
            raise RuntimeError("boom")
        await asyncio.sleep(0.01 if item.output == "slow" else 0)
        return result(rubric, "pass")


def test_every_item_yields_one_result_in_input_order(rubric: Rubric) -> None:
    goldens = [
        Golden(name="slow", output="slow", expected="pass"),
        Golden(name="boom", output="boom", expected="pass"),
        Golden(name="fast", output="fast", expected="pass"),
    ]
    run = asyncio.run(run_goldens(RaisingJudge(), [(rubric, goldens)], trials=2, concurrency=3))  # type: ignore[arg-type]
    [report] = run.rubrics
    assert [o.golden.name for o in report.outcomes] == ["slow", "boom", "fast"]
    assert [o.verdicts for o in report.outcomes] == [
        ["pass", "pass"],
        ["error", "error"],
        ["pass", "pass"],
    ]
    assert "unexpected RuntimeError" in report.outcomes[1].results[0].reason


def test_invalid_run_settings(rubric: Rubric) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        asyncio.run(run_goldens(RaisingJudge(), [(rubric, [])], trials=0))  # type: ignore[arg-type]


def test_corrected_judgments_are_counted_in_every_format(rubric: Rubric) -> None:
    import json
    import xml.etree.ElementTree as ElementTree

    from rubriclib.reports.goldens import format_json, format_junit

    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    corrected = make_result(
        rubric, judge_details("m", "named", 2, 1, usage, "no call"), "pass", "r"
    )
    golden = Golden(name="g", output="o", expected="pass")
    report = RubricReport(
        rubric, [GoldenOutcome(golden, [corrected, result(rubric, "pass"), result(rubric, "pass")])]
    )
    run = GoldensReport([report], trials=3)
    assert report.corrected == 1 and report.modes == {"named": 1, "required": 2}
    assert ", corrected 1" in format_table(run).splitlines()[0]
    data = json.loads(format_json(run))["rubrics"][0]
    assert data["corrected"] == 1 and data["modes"] == {"named": 1, "required": 2}
    suite = ElementTree.fromstring(format_junit(run)).find("testsuite")
    assert suite is not None
    assert suite.find("properties/property[@name='corrected']").get("value") == "1"  # type: ignore[union-attr]
    marked = [case for case in suite.iter("testcase") if case.find("properties") is not None]
    assert len(marked) == 1


def winner_outcome(rubric: Rubric, expected: str, *winners: str) -> GoldenOutcome:
    """A pairwise golden expecting `expected` to win, judged once per winner given."""
    golden = Golden(
        name=f"g-{expected}-{'-'.join(winners)}", output="o", baseline="b", expected_winner=expected
    )  # type: ignore[call-arg]
    details = judge_details("m", "required", 1, 1, {"prompt_tokens": 0, "completion_tokens": 0})
    pairwise = {"orders": [], "position_flip": False, "flips": 0, "comparisons": 1}
    return GoldenOutcome(
        golden,
        [pairwise_result(rubric, details, w, "r", {**pairwise, "winner": w}) for w in winners],
    )


def test_pairwise_counts_are_winners_and_add_up_to_the_accuracy() -> None:
    import xml.etree.ElementTree as ElementTree

    from rubriclib.reports.goldens import format_json, format_junit

    rubric = load_rubric("preference")
    # 16 judgments: expected output 6 (output 4, tie 2); expected baseline 10 (baseline 6,
    # tie 4). The pass/fail basis counted the 4 ties as true fails (14 of 16 "agreeing").
    outcomes = [winner_outcome(rubric, "output", "output")] * 4
    outcomes += [winner_outcome(rubric, "output", "tie")] * 2
    outcomes += [winner_outcome(rubric, "baseline", "baseline")] * 6
    outcomes += [winner_outcome(rubric, "baseline", "tie")] * 4
    report = RubricReport(rubric, outcomes)
    assert report.accuracy == pytest.approx(10 / 16)
    assert report.counts == {
        "expected_output": {"output": 4, "tie": 2, "baseline": 0},
        "expected_baseline": {"baseline": 6, "tie": 4, "output": 0},
        "errors": 0,
    }
    run = GoldensReport([report], trials=1)
    assert run.misses == 6
    summary = format_table(run).splitlines()[0]
    assert "accuracy 62.5%" in summary and "true pass" not in summary
    assert "expected output: got output 4, tie 2, baseline 0" in summary
    assert "expected baseline: got baseline 6, tie 4, output 0; judge errors 0" in summary
    assert json.loads(format_json(run))["rubrics"][0]["counts"] == report.counts
    suite = ElementTree.fromstring(format_junit(run)).find("testsuite")
    assert suite is not None and len(suite.findall("testcase/failure")) == 6
    assert suite.get("failures") == "6"  # the totals count the failures the cases show


def test_plan_run_adds_the_extra_goldens_that_fit_and_counts_trials(
    library: Path, write_file: Callable[..., Path]
) -> None:
    extra = write_file("extra.yaml", "- {name: fresh, output: x, expected: pass}\n")
    plan = plan_run(["keywords"], str(extra), trials=3)
    [(rubric, goldens)] = plan.rubrics
    assert rubric.name == "keywords"
    assert [golden.name for golden in goldens] == ["says-pass", "says-fail", "fresh"]
    assert plan.trials == 3 and plan.judgments == 9


def test_plan_run_with_no_reference_plans_every_resolvable_rubric(library: Path) -> None:
    names = [rubric.name for rubric, _ in plan_run([]).rubrics]
    assert "keywords" in names and "groundedness" in names


def test_plan_run_names_every_bad_extra_golden_at_once(
    library: Path, write_file: Callable[..., Path]
) -> None:
    extra = write_file(
        "extra.yaml",
        "- {name: says-pass, output: x, expected: pass}\n"
        "- {name: duel, output: x, baseline: y, expected_winner: output}\n",
    )
    with pytest.raises(RubricError) as raised:
        plan_run(["keywords"], str(extra))
    assert [str(problem) for problem in raised.value.problems] == [
        f"{extra}:1: goldens[0].name: duplicate golden name 'says-pass' (the rubric's own "
        "goldens have it)"
    ]
    pairwise_only = write_file(
        "pairwise.yaml", "- {name: d, output: x, baseline: y, expected_winner: tie}\n"
    )
    with pytest.raises(RubricError, match="fit no rubric in the run"):
        plan_run(["keywords"], str(pairwise_only))


def cites_golden(*cites: str, expected: str = "fail") -> Golden:
    return Golden(name="cites", output="o", expected=expected, cites=list(cites))  # type: ignore[arg-type]


def test_a_golden_with_cites_is_met_only_when_each_is_cited_and_verified(rubric: Rubric) -> None:
    golden = cites_golden("on Friday", "the 3rd")
    cited = cited_result(
        rubric, "fail", recorded_citation("It is on Friday."), recorded_citation("the 3rd")
    )
    half = cited_result(
        rubric, "fail", recorded_citation("on Friday"), recorded_citation("the 3rd", "unverified")
    )
    wrong = cited_result(
        rubric, "pass", recorded_citation("on Friday"), recorded_citation("the 3rd")
    )
    judged = GoldenOutcome(golden, [cited, half, wrong])
    assert judged.met == [True, False, False]
    assert [judged.uncited(result) for result in judged.results] == [[], ["the 3rd"], []]
    assert not judged.agreed and GoldenOutcome(golden, [cited]).agreed
    report = RubricReport(rubric, [judged])
    # accuracy and kappa measure verdicts; a missed cite is a miss of its own, counted apart
    assert report.misses == 2 and report.uncited == 1 and report.accuracy == 2 / 3
    assert report.asks_cites and not report.ok
    assert not RubricReport(rubric, [outcome(rubric, "pass", "pass")]).asks_cites


def test_a_cite_may_be_met_by_any_checklist_item_or_vote(rubric: Rubric) -> None:
    golden = cites_golden("on Friday", "the 3rd")
    items = with_details(
        cited_result(rubric, "fail"),
        checklist=[
            item_entry("a", "no", citations=[recorded_citation("on Friday")]),
            item_entry("b", "yes", citations=[recorded_citation("the 3rd", "unverified")]),
        ],
    )
    assert GoldenOutcome(golden, [items]).uncited(items) == ["the 3rd"]
    voted = with_details(
        cited_result(rubric, "fail"),
        votes=tally(
            ["fail", "fail"],
            citations=[[recorded_citation("on Friday")], [recorded_citation("on the 3rd")]],
        ),
    )
    assert GoldenOutcome(golden, [voted]).met == [True]


def test_citation_counts_name_each_unverified_by_golden_and_trial(rubric: Rubric) -> None:
    golden = cites_golden("x")
    results = [
        cited_result(
            rubric,
            "fail",
            recorded_citation("x"),
            recorded_citation("y", "unverified", found_in="input"),
        ),
        cited_result(rubric, "fail", recorded_citation("x")),
    ]
    counts = RubricReport(rubric, [GoldenOutcome(golden, results)]).citations
    assert (counts.given, counts.verified, counts.unverified) == (3, 2, 1)
    assert counts.unverified_citations == [
        {"golden": "cites", "trial": 1, "block": "output", "quote": "y", "found_in": "input"}
    ]


@pytest.mark.parametrize(
    ("quote", "exit_code", "mark"),
    [("on Friday", 0, "ok  "), ("on Saturday", 1, "MISS")],
)
def test_test_goldens_passes_a_golden_only_when_the_judge_cites_its_quote(
    library: Path,
    endpoint: JudgeServer,
    write_file: Callable[..., Path],
    quote: str,
    exit_code: int,
    mark: str,
) -> None:
    extra = write_file(
        "cites.yaml",
        "- name: wrong-day\n"
        "  context: The meeting is on Monday.\n"
        "  output: The meeting is on Friday.\n"
        "  expected: fail\n"
        "  cites: [on Friday]\n",
    )
    by_keyword = keyword_responder()  # keywords' own goldens, answered without citations

    def respond(body: dict[str, Any]) -> Reply:
        if "on Friday" not in body["messages"][1]["content"]:
            return by_keyword(body)
        cited = [{"block": "output", "quote": quote}]
        return tool_reply("set_grade_fail", {"reason": "the day is wrong", "citations": cited})

    endpoint.responder = respond
    arguments = ["test-goldens", "keywords", "--goldens", str(extra), "--no-cache"]
    table = CliRunner().invoke(main, arguments)
    assert table.exit_code == exit_code, table.output
    [line] = [line for line in table.output.splitlines() if "wrong-day" in line]
    assert line.startswith(f"  {mark} wrong-day") and line.endswith("got fail")
    assert ('not cited: "on Friday"' in table.output) == (exit_code == 1)
    report = json.loads(CliRunner().invoke(main, [*arguments, "--format", "json"]).output)
    [rubric] = report["rubrics"]
    [golden] = [golden for golden in rubric["goldens"] if golden["name"] == "wrong-day"]
    assert golden["agreed"] == (exit_code == 0) and report["ok"] == (exit_code == 0)
    assert (rubric["citations"]["given"], rubric["citations"]["verified"]) == (1, 1 - exit_code)
    if exit_code:
        [unverified] = rubric["citations"]["unverified_citations"]
        assert unverified == {"golden": "wrong-day", "trial": 1, "block": "output", "quote": quote}

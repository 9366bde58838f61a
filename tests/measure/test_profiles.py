"""Judge profiles fitted on checklist probabilities: the evidence read from a result, the
per-item bias correction, the regression and its cross-validated accuracy."""

from __future__ import annotations

import pytest

from rubriclib.measure.profiles import Evidence, cross_validated, evidence, fit
from rubriclib.rubrics.checklist import ChecklistItem

ITEMS = [
    ChecklistItem(id="invented", question="Does it invent?", fail_if="yes"),
    ChecklistItem(id="answers", question="Does it answer?", fail_if="no"),
]


def test_a_result_s_p_yes_becomes_each_item_s_probability_of_passing() -> None:
    details = {"checklist": [{"id": "invented", "p_yes": 0.2}, {"id": "answers", "p_yes": 0.9}]}
    read = evidence(ITEMS, details, "pass")
    assert read is not None and read.label == "pass"
    assert read.passing == {"invented": pytest.approx(0.8), "answers": pytest.approx(0.9)}
    abstained = {"checklist": [{"id": "invented", "p_yes": 0.2}, {"id": "answers", "p_yes": None}]}
    assert evidence(ITEMS, abstained, "pass") is None
    assert evidence(ITEMS, {"checklist": [{"id": "invented", "answer": "no"}]}, "pass") is None
    assert evidence(ITEMS, {}, "fail") is None


def biased_rows(count: int) -> list[Evidence]:
    """`count` rows, half passing: `real` tells them apart, `biased` answers the failing way
    for every one (a little less surely for the passing ones)."""
    rows = []
    for index in range(count):
        passes = index % 2 == 0
        passing = {"real": 0.9 if passes else 0.2, "biased": 0.2 if passes else 0.05}
        rows.append(Evidence(passing, "pass" if passes else "fail"))
    return rows


def test_an_item_that_always_answers_the_failing_way_is_centred_and_stops_failing_all() -> None:
    rows = biased_rows(12)
    rule = sum(("pass" if min(r.passing.values()) > 0.5 else "fail") == r.label for r in rows)
    assert rule == 6  # the rubric's rule fails every row: the biased item decides
    fitted = cross_validated(rows)
    assert set(fitted.profile.offsets) == {"biased"}
    assert fitted.cross_validated == 1.0 and fitted.in_sample == 1.0
    assert fitted.held_out == [row.label for row in rows]


def test_an_item_seen_fewer_than_eight_times_keeps_its_own_odds() -> None:
    assert fit(biased_rows(6)).offsets == {}


def test_an_item_that_sometimes_passes_is_not_corrected() -> None:
    rows = biased_rows(12)
    rows[0] = Evidence({"real": 0.9, "biased": 0.7}, "pass")
    assert fit(rows).offsets == {}


def test_cross_validation_holds_each_row_out_of_its_own_fit() -> None:
    rows = biased_rows(10)
    rows[4] = Evidence({"real": 0.2, "biased": 0.05}, "pass")  # a row no fit can get right
    fitted = cross_validated(rows)
    assert fitted.held_out[4] == "fail"
    assert fitted.cross_validated == pytest.approx(0.9)
    assert 0 <= fitted.calibration_error <= 1
    again = cross_validated(rows)
    assert again.held_out_p == fitted.held_out_p  # deterministic folds


def test_probabilities_in_a_narrow_band_still_separate_the_labels() -> None:
    """A small judge's p(pass) moves within a tenth of the unit interval: 0.62-0.66 for the
    passing rows, 0.52-0.56 for the failing ones, two passing to one failing. The fit is
    penalised on standardised weights, so it separates them rather than giving every row the
    majority label."""
    rows = [
        Evidence({"one": 0.62 + 0.01 * (i % 5), "two": 0.62 + 0.01 * (i % 5)}, "pass")
        for i in range(10)
    ] + [
        Evidence({"one": 0.52 + 0.01 * (i % 5), "two": 0.52 + 0.01 * (i % 5)}, "fail")
        for i in range(5)
    ]
    fitted = cross_validated(rows)
    assert fitted.in_sample == 1.0 and fitted.cross_validated == 1.0
    assert fit(rows).verdict({"one": 0.53, "two": 0.53}) == "fail"


def crossed_rows(count: int) -> list[Evidence]:
    """`count` rows, half passing, that only an item's own weight tells apart: a passing row
    has `a` high and `b` low, a failing one the reverse, so every row has the same mean and
    minimum (0.5 and 0.3)."""
    rows = []
    for index in range(count):
        passes = index % 2 == 0
        passing = {"a": 0.7, "b": 0.3} if passes else {"a": 0.3, "b": 0.7}
        rows.append(Evidence(passing, "pass" if passes else "fail"))
    return rows


def test_twenty_rows_give_each_item_a_weight_of_its_own() -> None:
    fitted = cross_validated(crossed_rows(20))
    weights = fitted.profile.item_weights
    assert set(weights) == {"a", "b"} and weights["a"] > 0 > weights["b"]
    assert fitted.cross_validated == 1.0  # every fold fits item weights too, on 16 rows


def test_fewer_than_twenty_rows_keep_equal_weights() -> None:
    fitted = cross_validated(crossed_rows(19))
    assert fitted.profile.item_weights == {}
    assert fitted.in_sample <= 11 / 19  # mean and minimum are the same on every row


def test_item_weights_are_shrunk_toward_equal_weights() -> None:
    """With a heavier penalty on an item's own weight than on the mean's, a fit whose items
    all say the same thing puts the weight on the mean, not on the items."""
    rows = [
        Evidence(
            {"a": 0.8, "b": 0.8} if i % 2 == 0 else {"a": 0.2, "b": 0.2},
            "pass" if i % 2 == 0 else "fail",
        )
        for i in range(20)
    ]
    profile = fit(rows, per_item=True)
    own = max(abs(weight) for weight in profile.item_weights.values())
    assert profile.weights[0] > 2 * own

"""agreement.py: kappa, accuracy, baselines, score agreement and the intervals around them."""

from __future__ import annotations

import pytest

from rubriclib.measure.agreement import (
    accuracy,
    base_rate,
    bootstrap_interval,
    cohen_kappa,
    kappa_band,
    majority_baseline,
    paired_difference_interval,
    score_agreement,
    why_kappa_undefined,
    wilson_interval,
)

# The classic worked example: 20 both pass, 5 human pass / judge fail, 10 human fail / judge
# pass, 15 both fail. Observed 0.70, chance 0.5 x 0.6 + 0.5 x 0.4 = 0.50, kappa 0.40.
CLASSIC = (
    [("pass", "pass")] * 20
    + [("pass", "fail")] * 5
    + [("fail", "pass")] * 10
    + [("fail", "fail")] * 15
)


def test_kappa_accuracy_and_baselines_of_a_known_table() -> None:
    assert cohen_kappa(CLASSIC) == pytest.approx(0.40)
    assert accuracy(CLASSIC) == pytest.approx(0.70)
    assert base_rate(CLASSIC) == pytest.approx(0.50)
    assert majority_baseline([("fail", "pass")] * 3 + [("pass", "pass")]) == ("fail", 0.75)


def test_kappa_is_zero_at_chance_and_negative_below_it() -> None:
    assert cohen_kappa([("pass", "pass"), ("pass", "fail")]) == pytest.approx(0.0)
    opposite = [("pass", "fail"), ("fail", "pass")] * 3
    assert cohen_kappa(opposite) == pytest.approx(-1.0)
    assert kappa_band(-1.0) == "poor"


@pytest.mark.parametrize(
    ("kappa", "band"),
    [
        (0.0, "slight"),
        (0.20, "slight"),
        (0.21, "fair"),
        (0.40, "fair"),
        (0.55, "moderate"),
        (0.61, "substantial"),
        (0.80, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
    ],
)
def test_kappa_bands_follow_landis_and_koch(kappa: float, band: str) -> None:
    assert kappa_band(kappa) == band


def test_one_class_only_leaves_kappa_undefined_with_a_reason() -> None:
    same = [("pass", "pass")] * 4
    assert cohen_kappa(same) is None
    assert "every human label and every judge verdict is pass" in str(why_kappa_undefined(same))
    assert cohen_kappa([]) is None and why_kappa_undefined([]) == "no row was judged"
    assert bootstrap_interval(same, cohen_kappa) is None  # every resample is one class too
    assert bootstrap_interval(same, accuracy) == (1.0, 1.0)


def test_the_bootstrap_is_deterministic_and_holds_the_point_estimate() -> None:
    first = bootstrap_interval(CLASSIC, cohen_kappa)
    assert first is not None and first == bootstrap_interval(CLASSIC, cohen_kappa)
    assert first != bootstrap_interval(CLASSIC, cohen_kappa, seed=1)
    low, high = first
    assert low < 0.40 < high and high - low < 0.6
    low, high = bootstrap_interval(CLASSIC, accuracy) or (0.0, 0.0)
    assert low < 0.70 < high


def test_wilson_interval_and_the_paired_difference() -> None:
    assert wilson_interval(17, 20) == pytest.approx((0.6396, 0.9476), abs=1e-4)
    assert wilson_interval(0, 0) is None
    low, high = wilson_interval(0, 10) or (1, 1)
    assert low == 0 and high == pytest.approx(0.2775, abs=1e-4)
    same = paired_difference_interval(50, 0, 0, 50)
    assert same is not None and same[0] < 0 < same[1]  # identical runs: within noise
    worse = paired_difference_interval(60, 0, 30, 10)
    assert worse is not None and worse[1] < 0  # 30 of 100 went pass -> fail: a real drop
    noisy = paired_difference_interval(45, 3, 2, 50)
    assert noisy is not None and noisy[0] < 0.01 < noisy[1]


def test_score_agreement_is_exact_matches_and_mean_absolute_error() -> None:
    exact, error, count = score_agreement([(5, 5), (4, 2), (1, 1), (3, 4)]) or (0, 0, 0)
    assert (exact, error, count) == (0.5, pytest.approx(0.75), 4)
    assert score_agreement([]) is None

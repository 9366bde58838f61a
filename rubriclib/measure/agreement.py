"""Agreement statistics between two raters (a human and a judge), and of a judge with itself
across trials (`flip_rates`). Pure: (label, verdict) pairs or answers in, numbers out; no
rubriclib imports.

Intervals are bootstrap percentile intervals with a fixed seed, so the same pairs always give
the same intervals.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

RESAMPLES = 2000
"""Bootstrap resamples behind each interval."""
SEED = 0
"""The bootstrap's seed: the same verdicts always give the same intervals."""
CONFIDENCE = 0.95
KAPPA_BANDS = (
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.00, "almost perfect"),
)
"""Landis & Koch (1977): below 0 poor, then each band up to its top: 0 to 0.20 slight, ..."""

Pair = tuple[str, str]
"""(human label, judge verdict), each pass or fail."""
Interval = tuple[float, float]
Sample = TypeVar("Sample")
"""What a bootstrap resamples: a pair of raters' answers, or a row's paired outcome."""


def accuracy(pairs: Sequence[Pair]) -> float | None:
    """Share of pairs where the judge gave the human's label; None with no pairs."""
    return sum(human == judge for human, judge in pairs) / len(pairs) if pairs else None


def cohen_kappa(pairs: Sequence[Pair]) -> float | None:
    """Cohen's kappa: (observed - chance) / (1 - chance); None when undefined (no pairs, or
    one class only: see why_kappa_undefined)."""
    cells = Counter(pairs)  # one pass: the bootstrap calls this thousands of times
    n = len(pairs)
    humans, judges = Counter[str](), Counter[str]()
    for (human, judge), count in cells.items():
        humans[human] += count
        judges[judge] += count
    chance = sum(humans[value] * judges[value] for value in humans)
    if not n or chance == n * n:  # chance agreement 1: kappa would divide by zero
        return None
    observed = sum(count for (human, judge), count in cells.items() if human == judge)
    return (observed * n - chance) / (n * n - chance)


def why_kappa_undefined(pairs: Sequence[Pair]) -> str | None:
    """Why kappa cannot be computed for these pairs, or None when it can."""
    if not pairs:
        return "no row was judged"
    values = {value for pair in pairs for value in pair}
    if len(values) == 1:  # chance agreement is 1: kappa would divide by zero
        return (
            f"every human label and every judge verdict is {values.pop()}: agreement by chance "
            "is 100%, so kappa is undefined; label rows of both kinds"
        )
    return None


def kappa_band(kappa: float) -> str:
    """Landis & Koch's word for a kappa: poor, slight, fair, moderate, substantial, almost
    perfect."""
    if kappa < 0:
        return "poor"
    return next((word for top, word in KAPPA_BANDS if kappa <= top + 1e-9), "almost perfect")


def base_rate(pairs: Sequence[Pair]) -> float | None:
    """Share of human labels that are pass."""
    return sum(human == "pass" for human, _ in pairs) / len(pairs) if pairs else None


def majority_baseline(pairs: Sequence[Pair]) -> tuple[str, float] | None:
    """The majority human label and the accuracy of a judge that always gives it."""
    rate = base_rate(pairs)
    if rate is None:
        return None
    return ("pass", rate) if rate >= 0.5 else ("fail", 1 - rate)


def bootstrap_interval(
    pairs: Sequence[Sample],
    statistic: Callable[[Sequence[Sample]], float | None],
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Interval | None:
    """The 95% percentile bootstrap interval of `statistic`: recompute it on `resamples` draws
    of the pairs with replacement (a fixed seed), keep the middle 95%. Resamples where the
    statistic is undefined are left out; None when every one is."""
    if not pairs:
        return None
    generator = random.Random(seed)
    values = sorted(
        value
        for _ in range(resamples)
        if (value := statistic(generator.choices(pairs, k=len(pairs)))) is not None
    )
    if not values:
        return None
    tail = (1 - CONFIDENCE) / 2
    return _percentile(values, tail), _percentile(values, 1 - tail)


def _percentile(ordered: Sequence[float], share: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def score_agreement(pairs: Iterable[tuple[int, int]]) -> tuple[float, float, int] | None:
    """(exact-score agreement, mean absolute error, pairs) over (human score, judge score)
    pairs; None when there are none."""
    scored = list(pairs)
    if not scored:
        return None
    exact = sum(human == judge for human, judge in scored) / len(scored)
    error = sum(abs(human - judge) for human, judge in scored) / len(scored)
    return exact, error, len(scored)


@dataclass(frozen=True)
class FlipRates:
    """How steady a judge was across trials of the same thing, judge errors left out: of the
    `compared` things (goldens, rows) that got a verdict at least twice, `flipped` got more
    than one; of their `judgments` (verdicts), `differing` differ from their thing's majority."""

    compared: int
    flipped: int
    judgments: int
    differing: int

    @property
    def flipped_share(self) -> float | None:
        """Share of the compared things whose verdict changed across trials (None: none)."""
        return self.flipped / self.compared if self.compared else None

    @property
    def disagreement(self) -> float | None:
        """Share of the verdicts that differ from their thing's majority verdict (None: none)."""
        return self.differing / self.judgments if self.judgments else None


def flip_rates(answers: Iterable[Sequence[str]]) -> FlipRates:
    """The flip rates of things each judged over several trials, given each thing's answers
    (verdicts; on a pairwise or labels rubric winners or labels). `error` answers are left
    out, and a thing with fewer than two others too (it cannot flip). A thing's majority is
    its most common answer; in a tie, any of the tied ones, which differ by the same count
    (a 2-trial pass / fail split is 1 verdict of 2 differing)."""
    compared = flipped = judgments = differing = 0
    for one in answers:
        counts = Counter(answer for answer in one if answer != "error")
        verdicts = counts.total()
        if verdicts < 2:
            continue
        compared += 1
        flipped += len(counts) > 1
        judgments += verdicts
        differing += verdicts - max(counts.values())
    return FlipRates(compared, flipped, judgments, differing)


Z_95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def wilson_interval(successes: int, total: int, z: float = Z_95) -> Interval | None:
    """The Wilson score 95% interval of a proportion (successes of total); None with none."""
    if total <= 0:
        return None
    share = successes / total
    spread = z * z / total
    centre = (share + spread / 2) / (1 + spread)
    half = z * math.sqrt(share * (1 - share) / total + spread / (4 * total)) / (1 + spread)
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference_interval(
    both: int, only_new: int, only_old: int, neither: int
) -> Interval | None:
    """The 95% interval of new rate - old rate over paired outcomes (Newcombe 1998, method 10,
    as in Altman's Statistics with Confidence: the Wilson limits of each rate joined through
    their continuity-corrected correlation). `both`: pairs where old and new succeed;
    `only_new`, `only_old`: where one does; `neither`. None with no pairs."""
    total = both + only_new + only_old + neither
    new = wilson_interval(both + only_new, total)
    old = wilson_interval(both + only_old, total)
    if new is None or old is None:
        return None
    new_rate, old_rate = (both + only_new) / total, (both + only_old) / total
    margins = (both + only_new) * (only_old + neither) * (both + only_old) * (only_new + neither)
    association: float = both * neither - only_new * only_old
    if association > total / 2:
        association -= total / 2
    elif association > 0:
        association = 0.0
    phi = association / math.sqrt(margins) if margins else 0.0
    low_new, high_new = new_rate - new[0], new[1] - new_rate
    low_old, high_old = old_rate - old[0], old[1] - old_rate
    below = math.sqrt(max(0.0, low_new**2 - 2 * phi * low_new * high_old + high_old**2))
    above = math.sqrt(max(0.0, high_new**2 - 2 * phi * high_new * low_old + low_old**2))
    difference = new_rate - old_rate
    return max(-1.0, difference - below), min(1.0, difference + above)

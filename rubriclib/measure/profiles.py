"""Pure: fitting a judge profile (`judging.profile`) on labelled rows: how one judge's
checklist probabilities become a verdict.

Probability answers (`Judge(answers="probability")`) give each checklist item a p(yes); the
rubric's rule fails a candidate when any item's failing answer has p >= 0.5. A small judge has
biased items (one that answers the failing way whatever it reads) and a threshold that is not
0.5, so a profile is fitted on labels, kept small for the 15-20 goldens a rubric has:

- a per-item offset: an item that answered the failing way for every candidate it has seen
  (at least `LEAST_SEEN`) has its log-odds centred on their median over those candidates, as
  batch calibration does; any other item keeps its own;
- three global parameters: an L2-regularised logistic regression on the mean and the minimum
  of the items' (offset) probabilities of passing, standardised over the rows for the fit (a
  small judge's probabilities span a tenth of the unit interval, where the penalty on raw
  weights left only the bias: every verdict the majority label);
- with at least `PER_ITEM_ROWS` labelled rows, a weight per item on top, shrunk toward equal
  weights (a heavier penalty on each item's departure from the mean's share).

`cross_validated` reports the accuracy of verdicts each made by a profile fitted without that
row (k folds), beside the in-sample figure; only the cross-validated one is to be quoted.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rubriclib.judging import Profile, features, item_passing, logit, shifted, sigmoid
from rubriclib.rubrics import ChecklistItem

if TYPE_CHECKING:
    from rubriclib.measure.calibration import Calibration

LEAST_SEEN = 8
"""Candidates an item must have answered before its bias is corrected."""
L2 = 1.0
"""The regression's L2 penalty on the standardised features' weights: few rows, so the weights
stay near zero unless the rows insist."""
ITEM_L2 = 4.0
"""The penalty on an item's own weight (its departure from equal weights): four times the
global one, as 20-odd rows say little about any one item."""
PER_ITEM_ROWS = 20
"""Labelled rows a fit needs before items get weights of their own."""
FOLDS = 5


@dataclass(frozen=True)
class Evidence:
    """One labelled candidate: each item's probability of passing (of its answer that is not
    `fail_if`), by item id, and the verdict its label says."""

    passing: Mapping[str, float]
    label: str


def evidence(
    items: Sequence[ChecklistItem], details: Mapping[str, object], label: str
) -> Evidence | None:
    """A result's checklist probabilities as Evidence, or None when it has none for some item
    (an error, an abstention, or answers by tool call)."""
    passing = item_passing(items, details)
    return Evidence(passing, label) if passing is not None else None


def calibration_evidence(calibration: Calibration) -> list[Evidence]:
    """The rows of a calibration judged with every item's p(yes) (not errors, abstentions or
    tool answers), as Evidence with the human's verdict."""
    items = calibration.rubric.checklist
    read = [
        (item_passing(items, one.result.details), one.labelled.label.verdict)
        for one in calibration.judged
    ]
    return [Evidence(passing, label) for passing, label in read if passing is not None]


def fit(rows: Sequence[Evidence], per_item: bool = False) -> Profile:
    """The profile of these labelled rows (at least one); with `per_item`, each item's own
    weight too, its departure from equal weights penalised by `ITEM_L2`."""
    offsets = {}
    for item in rows[0].passing:
        seen = [logit(row.passing[item]) for row in rows]
        if len(seen) >= LEAST_SEEN and all(odds < 0 for odds in seen):  # always the failing way
            offsets[item] = -statistics.median(seen)
    items = sorted(rows[0].passing) if per_item else []
    shown = []
    for row in rows:
        each = shifted(row.passing, offsets)
        shown.append((*features(row.passing, offsets), *(each[item] for item in items)))
    labels = [1.0 if row.label == "pass" else 0.0 for row in rows]
    penalties = [L2, L2, *[ITEM_L2] * len(items)]
    bias, mean, least, *own = _logistic(shown, labels, penalties)
    return Profile(offsets, bias, (mean, least), dict(zip(items, own, strict=True)))


@dataclass(frozen=True)
class Fitted:
    """A fit's report: the profile on every row, the verdict each row gets from a profile
    fitted without it (`held_out`, in row order) with its probability of passing, and the
    accuracies."""

    profile: Profile
    held_out: list[str]
    held_out_p: list[float]
    cross_validated: float
    in_sample: float
    calibration_error: float
    """Expected calibration error of the held-out probabilities (10 equal bins)."""


def cross_validated(rows: Sequence[Evidence], folds: int = FOLDS) -> Fitted:
    """`fit` measured by k-fold cross-validation (row i in fold i mod k: deterministic). Items
    get weights of their own when there are at least `PER_ITEM_ROWS` rows, in every fold's fit
    as in the profile's, so the cross-validated figure measures the profile written."""
    per_item = len(rows) >= PER_ITEM_ROWS
    folds = max(2, min(folds, len(rows)))
    held_out: list[str] = [""] * len(rows)
    held_out_p = [0.0] * len(rows)
    for fold in range(folds):
        training = [row for index, row in enumerate(rows) if index % folds != fold]
        if not training:
            continue
        profile = fit(training, per_item)
        for index in range(fold, len(rows), folds):
            held_out_p[index] = profile.p_pass(rows[index].passing)
            held_out[index] = profile.verdict(rows[index].passing)
    profile = fit(rows, per_item)
    labels = [row.label for row in rows]
    return Fitted(
        profile,
        held_out,
        held_out_p,
        _share(held_out, labels),
        _share([profile.verdict(row.passing) for row in rows], labels),
        _calibration_error(held_out_p, labels),
    )


def _logistic(
    features: Sequence[tuple[float, ...]], labels: Sequence[float], penalties: Sequence[float]
) -> list[float]:
    """Bias and a weight per feature, on the features as given, minimising the log loss plus
    each weight's L2 `penalties` on the features standardised over these rows (Newton's
    method)."""
    columns = list(zip(*features, strict=True))
    centre = [statistics.fmean(column) for column in columns]
    spread = [statistics.pstdev(column) or 1.0 for column in columns]
    rows = [
        (1.0, *((v - c) / s for v, c, s in zip(x, centre, spread, strict=True))) for x in features
    ]
    bias, *weights = _newton(rows, labels, [0.0, *penalties])
    raw = [w / s for w, s in zip(weights, spread, strict=True)]
    return [bias - sum(w * c for w, c in zip(raw, centre, strict=True)), *raw]


def _newton(
    rows: Sequence[tuple[float, ...]], labels: Sequence[float], penalties: Sequence[float]
) -> list[float]:
    """Parameters minimising the log loss plus each one's L2 `penalties` (the first, on the
    constant 1 every row starts with, is 0: the bias is free)."""
    n = len(penalties)
    theta = [0.0] * n
    for _ in range(50):
        gradient = [penalty * t for penalty, t in zip(penalties, theta, strict=True)]
        hessian = [[penalties[i] if i == j else 0.0 for j in range(n)] for i in range(n)]
        for x, y in zip(rows, labels, strict=True):
            p = sigmoid(sum(t * v for t, v in zip(theta, x, strict=True)))
            for i in range(n):
                gradient[i] += (p - y) * x[i]
                for j in range(n):
                    hessian[i][j] += p * (1 - p) * x[i] * x[j]
        step = _solve(hessian, gradient)
        theta = [t - s for t, s in zip(theta, step, strict=True)]
        if max(abs(s) for s in step) < 1e-9:
            break
    return theta


def _solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """x with matrix @ x = vector (Gaussian elimination with partial pivoting; the L2 term
    keeps the matrix positive definite)."""
    n = len(vector)
    rows = [[*matrix[i], vector[i]] for i in range(n)]
    for column in range(n):
        pivot = max(range(column, n), key=lambda r: abs(rows[r][column]))
        rows[column], rows[pivot] = rows[pivot], rows[column]
        if abs(rows[column][column]) < 1e-12:
            return [0.0] * n
        for r in range(column + 1, n):
            factor = rows[r][column] / rows[column][column]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[column], strict=True)]
    solution = [0.0] * n
    for i in reversed(range(n)):
        known = sum(rows[i][j] * solution[j] for j in range(i + 1, n))
        solution[i] = (rows[i][n] - known) / rows[i][i]
    return solution


def _calibration_error(probabilities: Sequence[float], labels: Sequence[str]) -> float:
    bins: dict[int, list[tuple[float, float]]] = {}
    for p, label in zip(probabilities, labels, strict=True):
        bins.setdefault(min(int(p * 10), 9), []).append((p, 1.0 if label == "pass" else 0.0))
    total = max(len(labels), 1)
    gaps = [
        len(pairs)
        * abs(statistics.fmean(p for p, _ in pairs) - statistics.fmean(y for _, y in pairs))
        for pairs in bins.values()
    ]
    return sum(gaps) / total


def _share(verdicts: Sequence[str], labels: Sequence[str]) -> float:
    return sum(v == y for v, y in zip(verdicts, labels, strict=True)) / max(len(labels), 1)

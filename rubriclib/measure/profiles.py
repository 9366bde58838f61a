"""Pure: how one judge's checklist probabilities become a verdict, fitted on labelled rows.

Probability answers (`Judge(answers="probability")`) give each checklist item a p(yes); the
rubric's rule fails a candidate when any item's failing answer has p >= 0.5. A small judge has
biased items (one that answers the failing way whatever it reads) and a threshold that is not
0.5, so a profile is fitted on labels, kept small for the 15-20 goldens a rubric has:

- a per-item offset: an item that answered the failing way for every candidate it has seen
  (at least `LEAST_SEEN`) has its log-odds centred on their median over those candidates, as
  batch calibration does; any other item keeps its own;
- three global parameters: an L2-regularised logistic regression on the mean and the minimum
  of the items' (offset) probabilities of passing.

`cross_validated` reports the accuracy of verdicts each made by a profile fitted without that
row (k folds), beside the in-sample figure; only the cross-validated one is to be quoted.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rubriclib.rubrics.checklist import ChecklistItem

LEAST_SEEN = 8
"""Candidates an item must have answered before its bias is corrected."""
L2 = 1.0
"""The regression's L2 penalty: few rows, so the weights stay near zero unless the rows insist."""
FOLDS = 5
_EDGE = 1e-4
"""How close to 0 or 1 a probability may come before its log-odds are taken."""


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
    listed = details.get("checklist")
    if not isinstance(listed, list):
        return None
    p_yes = {entry.get("id"): entry.get("p_yes") for entry in listed if isinstance(entry, dict)}
    passing = {}
    for item in items:
        p = p_yes.get(item.id)
        if not isinstance(p, float | int) or isinstance(p, bool):
            return None
        passing[item.id] = 1 - float(p) if item.fail_if == "yes" else float(p)
    return Evidence(passing, label)


@dataclass(frozen=True)
class Profile:
    """A fitted profile: per-item log-odds offsets and the regression's bias and weights (on
    the mean and the minimum of the items' probabilities of passing)."""

    offsets: Mapping[str, float]
    bias: float
    weights: tuple[float, float]

    def p_pass(self, passing: Mapping[str, float]) -> float:
        """The probability that a candidate with these item probabilities passes."""
        mean, least = _features(passing, self.offsets)
        return _sigmoid(self.bias + self.weights[0] * mean + self.weights[1] * least)

    def verdict(self, passing: Mapping[str, float]) -> str:
        """pass at a probability of passing above one half (a tie never passes)."""
        return "pass" if self.p_pass(passing) > 0.5 else "fail"


def fit(rows: Sequence[Evidence]) -> Profile:
    """The profile of these labelled rows (at least one)."""
    offsets = {}
    for item in rows[0].passing:
        seen = [_logit(row.passing[item]) for row in rows]
        if len(seen) >= LEAST_SEEN and all(odds < 0 for odds in seen):  # always the failing way
            offsets[item] = -statistics.median(seen)
    features = [_features(row.passing, offsets) for row in rows]
    labels = [1.0 if row.label == "pass" else 0.0 for row in rows]
    bias, mean, least = _logistic(features, labels)
    return Profile(offsets, bias, (mean, least))


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
    """`fit` measured by k-fold cross-validation (row i in fold i mod k: deterministic)."""
    folds = max(2, min(folds, len(rows)))
    held_out: list[str] = [""] * len(rows)
    held_out_p = [0.0] * len(rows)
    for fold in range(folds):
        training = [row for index, row in enumerate(rows) if index % folds != fold]
        if not training:
            continue
        profile = fit(training)
        for index in range(fold, len(rows), folds):
            held_out_p[index] = profile.p_pass(rows[index].passing)
            held_out[index] = profile.verdict(rows[index].passing)
    profile = fit(rows)
    labels = [row.label for row in rows]
    return Fitted(
        profile,
        held_out,
        held_out_p,
        _share(held_out, labels),
        _share([profile.verdict(row.passing) for row in rows], labels),
        _calibration_error(held_out_p, labels),
    )


def _features(passing: Mapping[str, float], offsets: Mapping[str, float]) -> tuple[float, float]:
    shifted = [_sigmoid(_logit(p) + offsets.get(item, 0.0)) for item, p in sorted(passing.items())]
    return statistics.fmean(shifted), min(shifted)


def _logistic(features: Sequence[tuple[float, float]], labels: Sequence[float]) -> list[float]:
    """Bias and two weights minimising the log loss plus L2 on the weights (Newton's method:
    a 3x3 system per step)."""
    theta = [0.0, 0.0, 0.0]
    rows = [(1.0, *x) for x in features]
    for _ in range(50):
        gradient = [0.0, L2 * theta[1], L2 * theta[2]]
        hessian = [[0.0] * 3 for _ in range(3)]
        hessian[1][1] = hessian[2][2] = L2
        for x, y in zip(rows, labels, strict=True):
            p = _sigmoid(sum(t * v for t, v in zip(theta, x, strict=True)))
            for i in range(3):
                gradient[i] += (p - y) * x[i]
                for j in range(3):
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


def _logit(p: float) -> float:
    p = min(max(p, _EDGE), 1 - _EDGE)
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))

"""A judge profile: how one judge model's checklist probabilities become a verdict on one
rubric version, fitted by `rubriclib calibrate --fit` (`measure.profiles`) and applied by a
Judge with probability answers when its model and the rubric's digest match.

A profile file is `rubriclib-profiles/MODEL/RUBRIC@VERSION.yaml` in the project (beside its
rubriclib.toml or pyproject.toml, else the working directory). One written for another rubric
digest or another model is never applied: the judge says so once and keeps the rubric's rule.
"""

from __future__ import annotations

import hashlib
import logging
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from rubriclib.judging.result.details import Block, as_written
from rubriclib.rubrics import ChecklistItem, Rubric

logger = logging.getLogger("rubriclib")
FOLDER = "rubriclib-profiles"
_EDGE = 1e-4
"""How close to 0 or 1 a probability may come before its log-odds are taken."""


@dataclass(frozen=True)
class Profile:
    """Per-item log-odds offsets, and a logistic regression's bias and weights on the mean and
    the minimum of the items' (offset) probabilities of passing, plus, when it was fitted on
    enough rows, a weight of each item's own (how far it departs from equal weights)."""

    offsets: Mapping[str, float]
    bias: float
    weights: tuple[float, float]
    item_weights: Mapping[str, float] = field(default_factory=dict)

    def p_pass(self, passing: Mapping[str, float]) -> float:
        """The probability that a candidate whose items pass with these probabilities passes."""
        each = shifted(passing, self.offsets)
        mean, least = features(passing, self.offsets)
        own = sum(weight * each[item] for item, weight in self.item_weights.items())
        return sigmoid(self.bias + self.weights[0] * mean + self.weights[1] * least + own)

    def verdict(self, passing: Mapping[str, float]) -> Literal["pass", "fail"]:
        """pass above one half (a tie never passes)."""
        return "pass" if self.p_pass(passing) > 0.5 else "fail"


def shifted(passing: Mapping[str, float], offsets: Mapping[str, float]) -> dict[str, float]:
    """Each item's probability of passing with its offset applied."""
    return {item: sigmoid(logit(p) + offsets.get(item, 0.0)) for item, p in passing.items()}


def features(passing: Mapping[str, float], offsets: Mapping[str, float]) -> tuple[float, float]:
    """The mean and the minimum of the items' probabilities of passing, offsets applied."""
    values = [p for _, p in sorted(shifted(passing, offsets).items())]
    return statistics.fmean(values), min(values)


def logit(p: float) -> float:
    p = min(max(p, _EDGE), 1 - _EDGE)
    return math.log(p / (1 - p))


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def item_passing(
    items: Sequence[ChecklistItem], details: Block | Mapping[str, Any]
) -> dict[str, float] | None:
    """Each item's probability of passing (of its answer that is not `fail_if`) in a result's
    details (or a results file's, read from JSON), or None when some item has no p(yes) (an
    error, an abstention, a tool answer)."""
    listed = as_written(details).get("checklist")
    if not isinstance(listed, list):
        return None
    p_yes = {entry.get("id"): entry.get("p_yes") for entry in listed if isinstance(entry, dict)}
    passing = {}
    for item in items:
        p = p_yes.get(item.id)
        if not isinstance(p, float | int) or isinstance(p, bool):
            return None
        passing[item.id] = 1 - float(p) if item.fail_if == "yes" else float(p)
    return passing


def profile_path(root: Path, model: str, rubric: Rubric) -> Path:
    """Where the profile of `model` on `rubric` is kept under the project `root` (a model name's
    `/` and `:` become `_`, so it is one folder)."""
    folder = "".join("_" if c in "/\\:" else c for c in model)
    return root / FOLDER / folder / f"{rubric.name}@{rubric.version}.yaml"


@dataclass(frozen=True)
class Applied:
    """A profile read from its file, with what a result records of it."""

    profile: Profile
    path: Path
    digest: str
    """The sha256 of the file: a result names exactly the profile it was judged with."""


def read_profile(path: Path, model: str, rubric: Rubric) -> Applied | str | None:
    """The profile at `path`, or why it may not be applied (another rubric digest or model,
    not a profile), or None when there is no file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"{path}: cannot be read ({error.strerror})"
    try:
        fields: Any = yaml.safe_load(data)
        if fields["rubric"]["digest"] != rubric.digest:
            return f"{path} was fitted on another version of {rubric.name} (digest differs)"
        if fields["model"] != model:
            return f"{path} was fitted for the model {fields['model']!r}, not {model!r}"
        offsets = {str(k): float(v) for k, v in (fields.get("offsets") or {}).items()}
        weights = (float(fields["weights"]["mean"]), float(fields["weights"]["min"]))
        own = {str(k): float(v) for k, v in (fields.get("item_weights") or {}).items()}
        if set(own) - {item.id for item in rubric.checklist}:
            raise KeyError("item_weights")
        profile = Profile(offsets, float(fields["bias"]), weights, own)
    except (yaml.YAMLError, TypeError, KeyError, ValueError, AttributeError):
        return f"{path} is not a judge profile (rubriclib calibrate --fit writes one)"
    return Applied(profile, path, hashlib.sha256(data).hexdigest())


def profile_text(profile: Profile, model: str, rubric: Rubric, measured: Mapping[str, Any]) -> str:
    """A profile file: the rubric and model it is for, its parameters, and how it measured."""
    fields: dict[str, Any] = {
        "rubric": {"name": rubric.name, "version": rubric.version, "digest": rubric.digest},
        "model": model,
        "offsets": {item: round(offset, 6) for item, offset in sorted(profile.offsets.items())},
        "bias": round(profile.bias, 6),
        "weights": {"mean": round(profile.weights[0], 6), "min": round(profile.weights[1], 6)},
    }
    if profile.item_weights:
        fields["item_weights"] = {k: round(v, 6) for k, v in sorted(profile.item_weights.items())}
    fields["measured"] = dict(measured)
    return yaml.safe_dump(fields, sort_keys=False, allow_unicode=True)

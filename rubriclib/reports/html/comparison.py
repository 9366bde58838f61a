"""Two results files of one eval compared: judgments matched by (row, grader), the verdicts
that changed grouped by what differs between the runs, and each grader's change in pass rate
with a paired 95% interval."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rubriclib.measure import paired_difference_interval
from rubriclib.reports.citations import citations_change
from rubriclib.reports.html.data import ResultsFile, judge_models, rubric_label

SAME_RUN = "same rubric and judge: the judge answered differently"
"""The group of changes where nothing recorded differs between the two lines."""


def change_kind(old: str, new: str) -> str:
    """`pass→fail`, `fail→pass`, `→error` (whatever it was), `error→pass` or `error→fail`."""
    return "→error" if new == "error" else f"{old}→{new}"


def what_differs(old: dict[str, Any], new: dict[str, Any]) -> str:
    """What the two lines of one (row, grader) record differently: the rubric's version or
    digest, the judge model, the row's metadata or output; SAME_RUN when none."""
    old_details, new_details = old["result"]["details"], new["result"]["details"]
    differences = []
    old_rubric, new_rubric = old_details["rubric"], new_details["rubric"]
    if old_rubric["digest"] != new_rubric["digest"]:
        name = new_rubric["name"]
        if old_rubric["version"] != new_rubric["version"] or old_rubric["name"] != name:
            differences.append(
                f"rubric {old_rubric['name']}@{old_rubric['version']} → "
                f"{name}@{new_rubric['version']}"
            )
        else:
            differences.append(
                f"rubric {name}@{new_rubric['version']} text changed, version not bumped "
                f"({old_rubric['digest'][:8]} → {new_rubric['digest'][:8]})"
            )
    old_models, new_models = judge_models(old_details), judge_models(new_details)
    if old_models != new_models:
        differences.append(f"judge {', '.join(old_models)} → {', '.join(new_models)}")
    if old.get("metadata") != new.get("metadata") or old.get("output") != new.get("output"):
        differences.append("row content (metadata or output)")
    return "; ".join(differences) or SAME_RUN


def side(line: dict[str, Any]) -> dict[str, Any]:
    """One run's side of a change: verdict, score, reason, rubric and judge."""
    details = line["result"]["details"]
    return {
        "verdict": line["verdict"],
        "score": line["result"].get("score"),
        "reason": line["result"]["reason"],
        "rubric": rubric_label(details["rubric"]),
        "model": ", ".join(judge_models(details)),
    }


def pass_rate_change(name: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """A grader's pass rate in each run over its matched judgments, the change and its paired
    95% interval; `within_noise` when the interval holds 0 (an error is not a pass)."""
    cells = Counter((old == "pass", new == "pass") for old, new in pairs)
    both, only_new = cells[True, True], cells[False, True]
    only_old, neither = cells[True, False], cells[False, False]
    matched = len(pairs)
    interval = paired_difference_interval(both, only_new, only_old, neither)
    old_rate = (both + only_old) / matched if matched else None
    new_rate = (both + only_new) / matched if matched else None
    return {
        "name": name,
        "matched": matched,
        "old_pass_rate": old_rate,
        "new_pass_rate": new_rate,
        "change": new_rate - old_rate if old_rate is not None and new_rate is not None else None,
        "interval": interval,
        "within_noise": interval is not None and interval[0] <= 0 <= interval[1],
    }


def compare(new: ResultsFile, old: ResultsFile) -> dict[str, Any]:
    """What changed from `old` to `new`: matched, unmatched, per-grader changes, and each
    changed verdict with both sides and whether its citations changed too, in groups by what
    differs (largest group first)."""
    matched = [key for key in new.lines if key in old.lines]
    pairs_by_grader: dict[str, list[tuple[str, str]]] = {}
    changes: list[dict[str, Any]] = []
    for row, grader in matched:
        old_line, new_line = old.lines[row, grader], new.lines[row, grader]
        pairs_by_grader.setdefault(grader, []).append((old_line["verdict"], new_line["verdict"]))
        if old_line["verdict"] == new_line["verdict"]:
            continue
        changes.append(
            {
                "row": row,
                "grader": grader,
                "kind": change_kind(old_line["verdict"], new_line["verdict"]),
                "differs": what_differs(old_line, new_line),
                "old": side(old_line),
                "new": side(new_line),
                "citations": citations_change(old_line, new_line),
            }
        )
    sizes = Counter(change["differs"] for change in changes)
    groups = []
    for differs, count in sizes.most_common():
        kinds = Counter(change["kind"] for change in changes if change["differs"] == differs)
        groups.append({"differs": differs, "count": count, "kinds": dict(kinds.most_common())})
    order = {group["differs"]: index for index, group in enumerate(groups)}
    for change in changes:
        change["group"] = order[change.pop("differs")]
    return {
        "matched": len(matched),
        "only_new": len(new.lines) - len(matched),
        "only_old": len(old.lines) - len(matched),
        "graders": [pass_rate_change(name, pairs) for name, pairs in pairs_by_grader.items()],
        "groups": groups,
        "changes": changes,
    }

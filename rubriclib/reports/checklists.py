"""The checklist side of an HTML report: each checklist judgment's items (id, answer, reason,
p) and, per grader, which items decided the failures most often. Which answer fails an item
(its `fail_if`) is not in a results line: it comes from the rubric that judged, found by its
digest (among the rubrics given, else on the rubric search path); where none is found the
items are shown unmarked and uncounted. Holistic results add nothing."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from rubriclib.errors import RubricError
from rubriclib.judging import GradeResult, failed_items
from rubriclib.rubrics import Rubric, load_rubric
from rubriclib.validation import NAME_PATTERN

RubricFinder = Callable[[dict[str, Any]], Rubric | None]
"""The rubric with a results line's `details.rubric` identity (name, version, digest), or None."""


def rubric_finder(known: Iterable[Rubric] = ()) -> RubricFinder:
    """Finds the rubric that judged: one of `known` with its digest, else NAME@==VERSION on the
    search path when its digest still matches. Each digest is looked up once."""
    by_digest: dict[str, Rubric | None] = {rubric.digest: rubric for rubric in known}

    def find(identity: dict[str, Any]) -> Rubric | None:
        digest = str(identity["digest"])
        if digest not in by_digest:
            found = _on_search_path(str(identity["name"]), str(identity["version"]))
            by_digest[digest] = found if found is not None and found.digest == digest else None
        return by_digest[digest]

    return find


def _on_search_path(name: str, version: str) -> Rubric | None:
    """The rubric NAME at exactly VERSION, or None; a name that is not a rubric name (a results
    file is data: it could hold a path) is never looked up."""
    if not re.fullmatch(NAME_PATTERN, name):
        return None
    try:
        return load_rubric(f"{name}@=={version}")
    except (RubricError, ValueError, OSError):
        return None


def checklist_of(details: dict[str, Any], rubric: Rubric | None) -> list[dict[str, Any]] | None:
    """A checklist judgment's items as its detail panel shows them: id, answer, reason, p where
    known and, when the rubric that judged was found, `failed` (the answer was its fail_if).
    None for a holistic judgment."""
    listed = details.get("checklist")
    if not isinstance(listed, list):
        return None
    fail_if = {check.id: check.fail_if for check in rubric.checklist} if rubric else None
    shown = []
    for entry in listed:
        if not isinstance(entry, dict):
            continue
        answer = entry.get("answer") if isinstance(entry.get("answer"), str) else None
        item: dict[str, Any] = {
            "id": str(entry.get("id")),
            "answer": answer,
            "reason": str(entry.get("reason", "")),
        }
        p = entry.get("p")
        if isinstance(p, int | float) and not isinstance(p, bool):
            item["p"] = p
        if fail_if is not None:
            item["failed"] = answer is not None and answer == fail_if.get(item["id"])
        shown.append(item)
    return shown


def checklist_failures(
    lines: list[dict[str, Any]], find: RubricFinder
) -> tuple[dict[str, int], int] | None:
    """Over one grader's lines: how often each checklist item decided a failure, most often
    first (checklist_protocol.failed_items per rubric that judged), and how many checklist
    judgments were left uncounted (their rubric not found). None when no line is a checklist
    judgment."""
    by_digest: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        details = line["result"]["details"]
        if isinstance(details.get("checklist"), list):
            by_digest.setdefault(str(details["rubric"]["digest"]), []).append(line)
    if not by_digest:
        return None
    counts: Counter[str] = Counter()
    uncounted = 0
    for group in by_digest.values():
        rubric = find(group[0]["result"]["details"]["rubric"])
        if rubric is None:
            uncounted += len(group)
            continue
        results = (GradeResult.model_construct(**line["result"]) for line in group)
        counts.update(failed_items(rubric, results))
    return dict(counts.most_common()), uncounted


def unmarked_notes(lines: Iterable[dict[str, Any]], find: RubricFinder) -> list[str]:
    """One note per rubric whose checklist judgments are shown unmarked: it was not found."""
    missing = {}
    for line in lines:
        identity = line["result"]["details"]["rubric"]
        if isinstance(line["result"]["details"].get("checklist"), list) and find(identity) is None:
            missing[str(identity["digest"])] = identity
    return [
        f"checklist items of {rubric['name']}@{rubric['version']} "
        f"{str(rubric['digest'])[:8]} are not marked failed or counted: no rubric with that "
        "digest was found (the eval's rubrics, or by name on the rubric search path)"
        for rubric in missing.values()
    ]

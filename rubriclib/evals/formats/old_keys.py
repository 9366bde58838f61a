"""An eval file's judge settings spelt the old way (`checklist:`, `checklist_answers:`, renamed
`mode:` and `answers:`; `settings.RENAMED_KEYS`), wherever a judge's settings go: the eval's
`judge:`, a grader, its `judge:` and its panel's `judges:`."""

from __future__ import annotations

from typing import Any

from rubriclib.settings import Respelling


def respelt(data: dict[str, Any], label: str) -> tuple[dict[str, Any], Respelling]:
    """`data` (an eval file in rubriclib's shape, `label` its name in problems) with every
    judge setting spelt the new way, and what its old keys say (`Respelling`)."""
    found = Respelling(label)
    respelt = dict(data)
    if "judge" in data:
        respelt["judge"] = found.settings(data["judge"], "judge")
    if isinstance(data.get("graders"), list):
        graders = enumerate(data["graders"])
        respelt["graders"] = [_grader(found, g, f"graders[{i}]") for i, g in graders]
    return respelt, found


def _grader(found: Respelling, grader: Any, at: str) -> Any:
    """A grader's own settings, its `judge:` and its panel's `judges:`, respelt."""
    grader = found.settings(grader, at)
    if isinstance(grader, dict) and "judge" in grader:
        grader["judge"] = found.settings(grader["judge"], f"{at}.judge")
    if isinstance(grader, dict) and isinstance(grader.get("judges"), list):
        members = enumerate(grader["judges"])
        grader["judges"] = [found.settings(m, f"{at}.judges[{i}]") for i, m in members]
    return grader

"""waza's eval.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rubriclib.errors import Problem
from rubriclib.evalfile.model import Eval, Grader, JudgeSettings
from rubriclib.evalfile.sources import dataset_source, grader_rubric


def read(
    data: dict[str, Any], path: Path, override: Path | None, problems: list[Problem]
) -> Eval | None:
    """waza's eval.yaml: `prompt` graders are judged, other grader types are skipped; its
    tasks run an agent, so the outputs come from `--dataset` (recorded outputs)."""
    label = str(path)
    graders, skipped = [], []
    if data.get("tasks"):
        skipped.append("tasks: waza runs agents; rubriclib judges recorded outputs (--dataset)")
    for index, raw in enumerate(data.get("graders") or []):
        where = f"graders[{index}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            problems.append(Problem(label, where, "must be a mapping with a name"))
            continue
        if raw.get("type") != "prompt":
            skipped.append(f"{where} {raw['name']}: type {raw.get('type')!r} is not a judge")
            continue
        config = raw.get("config") or {}
        if not isinstance(config, dict):
            problems.append(Problem(label, f"{where}.config", "must be a mapping"))
            continue
        # continue_session and mode steer waza's agent session, which is not run here
        known = {"rubric", "prompt", "model", "continue_session", "mode"}
        unknown = sorted(set(config) - known)
        unknown += sorted(set(raw) - {"type", "name", "config"})
        for key in unknown:
            problems.append(Problem(label, f"{where}.config.{key}", "is not supported"))
        if ("rubric" in config) == ("prompt" in config):
            problems.append(
                Problem(label, f"{where}.config", "needs exactly one of rubric, prompt")
            )
            continue
        rubric = grader_rubric(
            config.get("rubric"), config.get("prompt"), raw["name"], path, problems, index
        )
        if rubric is not None:
            graders.append(Grader(raw["name"], rubric, JudgeSettings(model=config.get("model"))))
    if not graders and not problems:
        problems.append(Problem(label, "graders", "has no prompt grader to run"))
    source = dataset_source(None, None, path, override, problems, hint=" (waza: --dataset FILE)")
    if problems or source is None:
        return None
    name = str(data.get("name") or path.stem)
    return Eval(name, path, "waza", source, graders, [], data.get("description"), skipped)

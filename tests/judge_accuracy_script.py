"""benchmarks/judge_accuracy.py (the small-judge accuracy harness) loaded as a module: it is a
script, not a package, and its tests read its rows and samples without a model."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "judge_accuracy.py"


def accuracy_benchmark() -> Any:
    """benchmarks/judge_accuracy.py as a module."""
    spec = importlib.util.spec_from_file_location("judge_accuracy", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

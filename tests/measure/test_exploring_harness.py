"""benchmarks/exploring_accuracy.py's needle set, read without a model: what the measurement of
exploring judges is made of."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from rubriclib import load_rubric, read_transcript

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "exploring_accuracy.py"


def test_the_needle_set_plants_one_failing_test_in_the_middle_of_long_runs(
    tmp_path: Path,
) -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("exploring_accuracy", SCRIPT)
    assert spec is not None and spec.loader is not None
    harness = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(harness)
    paths = harness.write_set(tmp_path, 4)
    load_rubric(str(tmp_path / "tests-pass.md"))  # a valid rubric
    for kind in ("short", "long"):
        rows = [json.loads(line) for line in paths[kind].read_text().splitlines()]
        assert [row["expected"] for row in rows] == ["fail", "pass", "fail", "pass"]
        for row in rows:
            run = read_transcript(row["transcript"])
            tests = next(m.text for m in run.messages if "PASSED" in m.text).splitlines()
            planted = [at for at, line in enumerate(tests) if "FAILED" in line]
            assert not any("FAILED" in m.text for m in run.messages[-1:])  # not given away
            if row["expected"] == "pass":
                assert planted == []  # nothing to find
                assert "FAILED" not in json.dumps(row)
            else:  # one line, in the middle, where a cut falls
                assert planted == [(len(tests) - 1) // 2]
    short, long = (len(paths[kind].read_text()) for kind in ("short", "long"))
    assert long > harness.PADDING * short

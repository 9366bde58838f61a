"""The small-judge accuracy harness (benchmarks/judge_accuracy.py) without a model: its seeded
sample of goldens across rubrics, the launcher that judges only that sample, and the flip rates
its rows read from a `--trials` report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import KEYWORD_RUBRIC
from judge_accuracy_script import SCRIPT, accuracy_benchmark
from judge_server import JudgeServer

from rubriclib.rubrics.registry import load_goldens, load_rubric

FLIPPING = KEYWORD_RUBRIC.replace("name: keywords", "name: flipping").replace(
    "goldens:\n",
    'goldens:\n  - {name: flips, output: "verdict:flip", expected: pass}\n',
)
"""The keyword rubric with a golden whose verdict alternates on every request."""


def test_the_sample_is_the_same_for_the_same_seed_and_taken_in_turn_across_rubrics() -> None:
    harness = accuracy_benchmark()
    rubrics = ["helpfulness", "answer-relevance", "groundedness"]
    sample = harness.sample_goldens(rubrics, 10, 0)
    assert sample == harness.sample_goldens(rubrics, 10, 0)
    assert [len(names) for names in sample.values()] == [4, 3, 3]
    for name, names in sample.items():
        assert set(names) <= {golden.name for golden in load_goldens(load_rubric(name))}
        assert len(set(names)) == len(names)
    assert harness.sample_goldens(rubrics, 10, 1) != sample
    every = harness.sample_goldens(["groundedness"], 1000, 0)["groundedness"]
    assert len(every) == len(load_goldens(load_rubric("groundedness")))


def test_the_launcher_judges_only_the_sampled_goldens_and_the_rows_give_their_flip_rates(
    library: Path, endpoint: JudgeServer, tmp_path: Path
) -> None:
    (library / "flipping.md").write_text(FLIPPING)
    sample = tmp_path / "sample.json"
    sample.write_text(json.dumps({"flipping": ["flips", "says-fail"]}))
    report = tmp_path / "report.json"
    command = [sys.executable, str(SCRIPT), "--narrowed-to", str(sample), "test-goldens"]
    command += ["flipping", "--trials", "2", "--concurrency", "1", "--format", "json"]
    done = subprocess.run([*command, "--out", str(report)], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr  # the flipping golden missed once
    judged = json.loads(report.read_text())
    goldens = judged["rubrics"][0]["goldens"]
    assert [golden["name"] for golden in goldens] == ["flips", "says-fail"]  # not says-pass
    assert endpoint.request_count == 4
    rows = accuracy_benchmark().per_rubric(judged)
    assert rows["flipping"]["flipped"] == "1/2 (50%)"
    assert rows["(all)"]["flipped"] == "1/2 (50%)"
    assert rows["(all)"]["accuracy"].startswith("3/4 75% [")  # with its interval
    assert rows["flipping"]["disagreement"].endswith("/4)")
    assert rows["flipping"]["false passes"] == rows["(all)"]["false passes"] == "0/2"  # judgments


def test_rows_of_a_single_trial_leave_the_flip_columns_empty() -> None:
    harness = accuracy_benchmark()
    assert harness.flip_cells(None) == {"flipped": "", "disagreement": ""}
    rates = {"flipped": 2, "compared": 8, "flipped_share": 0.25}
    rates |= {"disagreement": 1 / 12, "differing": 2, "judgments": 24}
    assert harness.flip_cells(rates) == {"flipped": "2/8 (25%)", "disagreement": "8% (2/24)"}

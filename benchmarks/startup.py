"""CLI start-up against the floor our dependencies set: `python -c "import pydantic, yaml, click"`.

Each command runs as a subprocess, median of 7 runs, with a warm bytecode cache kept in a
temporary folder (PYTHONPYCACHEPREFIX), as an installed package has: an environment with
PYTHONDONTWRITEBYTECODE=1 would otherwise compile rubriclib's modules at every start. Also checks
that importing rubriclib does not import openai (only commands that judge need it). Run with
`make bench`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 7
TARGET_RATIO = 1.5
BIN = Path(sys.executable).parent
FLOOR = [sys.executable, "-c", "import pydantic, yaml, click"]
ONE_MODEL = [
    sys.executable,
    "-c",
    "import pydantic, yaml, click\nclass A(pydantic.BaseModel): x: int",
]
COMMANDS = {
    "rubriclib list": [str(BIN / "rubriclib"), "list"],
    "rubriclib --help": [str(BIN / "rubriclib"), "--help"],
    "rubriclib validate groundedness": [str(BIN / "rubriclib"), "validate", "groundedness"],
}


def median_ms(command: list[str], environment: dict[str, str]) -> float:
    """Median wall milliseconds from start to exit, after one untimed run (warm caches)."""
    subprocess.run(command, capture_output=True, check=True, env=environment)
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True, env=environment)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as bytecode:
        environment = {**os.environ, "PYTHONPYCACHEPREFIX": bytecode}
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        measure(environment)


def measure(environment: dict[str, str]) -> None:
    print(f"== Start-up: median of {RUNS} runs each, against `{' '.join(FLOOR[1:])}`")
    bare = median_ms([sys.executable, "-c", "pass"], environment)
    floor = median_ms(FLOOR, environment)
    print(f"  {'python -c pass':34} {bare:7.1f} ms")
    print(f"  {'import pydantic, yaml, click':34} {floor:7.1f} ms  (the floor, 1.00x)")
    one_model = median_ms(ONE_MODEL, environment)
    print(f"  {'  + build one pydantic model':34} {one_model:7.1f} ms  {one_model / floor:5.2f}x")
    for name, command in COMMANDS.items():
        took = median_ms(command, environment)
        ratio = took / floor
        met = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(f"  {name:34} {took:7.1f} ms  {ratio:5.2f}x  (target <= {TARGET_RATIO}x: {met})")
    check = "import rubriclib, sys; print('openai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    imported = done.stdout.strip()
    print(
        f"  `import rubriclib` imports openai: {imported} "
        f"(expected False: {'met' if imported == 'False' else 'NOT met'})"
    )


if __name__ == "__main__":
    main()

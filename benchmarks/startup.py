"""CLI start-up against the floor our own dependencies set: importing pydantic, yaml and click
and building one pydantic model (what any command that reads a rubric must do).

Each command runs as a subprocess, median of 7 runs interleaved with the floor's, with a warm
bytecode cache kept in a temporary folder (PYTHONPYCACHEPREFIX), as an installed package has: an
environment with PYTHONDONTWRITEBYTECODE=1 would otherwise compile rubriclib's modules at every
start. The floor and the commands are measured side by side in each of ROUNDS rounds, and the
target must hold in every round, not only the best. Also checks that importing rubriclib does
not import openai (only commands that judge need it). Run with `make bench`.
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
ROUNDS = 3
TARGET_RATIO = 1.5
BIN = Path(sys.executable).parent
IMPORTS = [sys.executable, "-c", "import pydantic, yaml, click"]
FLOOR = [
    sys.executable,
    "-c",
    "import pydantic, yaml, click\nclass A(pydantic.BaseModel): x: int",
]
COMMANDS = {
    "rubriclib list": [str(BIN / "rubriclib"), "list"],
    "rubriclib --help": [str(BIN / "rubriclib"), "--help"],
    "rubriclib validate groundedness": [str(BIN / "rubriclib"), "validate", "groundedness"],
}


def medians_ms(commands: dict[str, list[str]], environment: dict[str, str]) -> dict[str, float]:
    """Median wall milliseconds from start to exit of each command, after one untimed run of
    each (warm caches). The runs are interleaved (every command once, RUNS times), so a change
    in the machine's speed during a round touches the floor and the commands alike."""
    for command in commands.values():
        subprocess.run(command, capture_output=True, check=True, env=environment)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, command in commands.items():
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True, env=environment)
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(each) for name, each in times.items()}


def main() -> None:
    with tempfile.TemporaryDirectory() as bytecode:
        environment = {**os.environ, "PYTHONPYCACHEPREFIX": bytecode}
        environment.pop("PYTHONDONTWRITEBYTECODE", None)
        measure(environment)


def measure(environment: dict[str, str]) -> None:
    print(
        f"== Start-up: median of {RUNS} runs each, {ROUNDS} rounds, against the floor "
        "(import pydantic, yaml, click and build one pydantic model)"
    )
    worst: dict[str, float] = {}
    for round_number in range(1, ROUNDS + 1):
        timed = medians_ms(
            {
                "bare": [sys.executable, "-c", "pass"],
                "imports": IMPORTS,
                "floor": FLOOR,
                **COMMANDS,
            },
            environment,
        )
        floor = timed["floor"]
        print(f"  round {round_number}")
        print(f"    {'python -c pass':34} {timed['bare']:7.1f} ms")
        imports = timed["imports"]
        print(f"    {'import pydantic, yaml, click':34} {imports:7.1f} ms  {imports / floor:5.2f}x")
        print(f"    {'  + build one pydantic model':34} {floor:7.1f} ms  (the floor, 1.00x)")
        for name in COMMANDS:
            ratio = timed[name] / floor
            worst[name] = max(worst.get(name, 0.0), ratio)
            print(f"    {name:34} {timed[name]:7.1f} ms  {ratio:5.2f}x")
    for name, ratio in worst.items():
        met = "met" if ratio <= TARGET_RATIO else "NOT met"
        print(f"  {name:34} worst round {ratio:5.2f}x  (target <= {TARGET_RATIO}x: {met})")
    check = "import rubriclib, sys; print('openai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True)
    imported = done.stdout.strip()
    print(
        f"  `import rubriclib` imports openai: {imported} "
        f"(expected False: {'met' if imported == 'False' else 'NOT met'})"
    )


if __name__ == "__main__":
    main()

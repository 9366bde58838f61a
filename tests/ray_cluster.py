"""A Ray cluster of two nodes on this machine, started once for the whole test session by the
docs' multi-node recipe (the `ray-cluster` snippet of docs/judging-tables.md, each command run
as shown but for the sizes and ports below): the head and a worker node, each a `ray start
--block` process in the ray venv with the judge's key in its environment, killed with all it
started by pid (never `ray stop`, which stops every Ray of the machine). Its own temporary
folder keeps other Ray users of the machine from finding it, and the token Ray asks for is a
new one."""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

RAY_MAIN = "import sys; from ray.scripts.scripts import main; sys.exit(main())"
RUBRICLIB_MAIN = "import sys; from rubriclib.cli import main; sys.exit(main())"
"""The commands run by the venv's python: their scripts' first lines name the python of the
tree that made the venv, which a venv linked into a worktree is not."""
STARTED = "This command will now block forever"


class RayCluster:
    """The docs' cluster: `env` is a node's environment (the key, Ray's token, rubriclib on
    PYTHONPATH), `address` the head's, `folder` Ray's temporary folder (its logs), and
    `commands` the recipe's rubriclib commands, to run with `run_rubriclib`."""

    def __init__(self, python: Path, recipe: str, env: dict[str, str], key: str) -> None:
        self.python = python
        self.folder = Path(tempfile.mkdtemp(prefix="rl-ray-", dir="/tmp"))  # short socket paths
        self.env = dict(env)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.commands: list[list[str]] = []
        self.nodes: list[subprocess.Popen[bytes]] = []
        self._key = key
        self.recipe = recipe

    def __enter__(self) -> RayCluster:
        try:
            for line in self.recipe.splitlines():
                if line.startswith("$ "):
                    self._run(shlex.split(line[2:], comments=True))
        except BaseException:
            self.__exit__()
            raise
        return self

    def _run(self, command: list[str]) -> None:
        program, *arguments = command
        if program == "export":
            shown = dict(argument.split("=", 1) for argument in arguments)
            real = {"RAY_AUTH_TOKEN": secrets.token_hex(32), "OPENAI_API_KEY": self._key}
            self.env.update({name: real.get(name, value) for name, value in shown.items()})
            return
        arguments = [self.here(argument) for argument in arguments]
        if program == "rubriclib":
            self.commands.append(arguments)
            return
        assert program == "ray" and arguments[0] == "start", f"not in the recipe: {command}"
        self._start(arguments)

    def here(self, argument: str) -> str:
        """A recipe's argument as it is run here: the head's address and port."""
        changes = {"HEAD:6379": self.address, "6379": str(self.port)}
        return changes.get(argument, argument)

    def _start(self, arguments: list[str]) -> None:
        """A node: the recipe's `ray start`, blocking (so its pid stops it and all it started)
        with this cluster's temporary folder, no dashboard and no usage statistics; the head
        with 2 CPUs and the worker 1 (two actors of half a CPU on two nodes of one would leave
        no node the whole CPU a Ray Data read task asks for: the run would hang)."""
        head = "--head" in arguments
        at = arguments.index("--num-cpus") + 1
        arguments[at] = "2" if head else "1"
        extra = ["--block", "--disable-usage-stats", "--temp-dir", str(self.folder)]
        if head:
            extra += ["--include-dashboard", "false"]
        log = self.folder / f"node-{len(self.nodes)}.log"
        with log.open("wb") as out:
            node = subprocess.Popen(  # noqa: S603 - the docs' command, in the ray venv
                [str(self.python), "-c", RAY_MAIN, *arguments, *extra],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.nodes.append(node)
        deadline = time.monotonic() + 300  # seconds each on a loaded 2-core machine
        while STARTED not in log.read_text(errors="replace"):
            if node.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"ray start failed:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)

    def run_rubriclib(
        self, arguments: list[str], work: Path, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`rubriclib ARGUMENTS` in the ray venv, in `work`, as a driver of this cluster."""
        return subprocess.run(  # noqa: S603 - our own command
            self.rubriclib(arguments),
            cwd=work,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )

    def rubriclib(self, arguments: list[str]) -> list[str]:
        return [str(self.python), "-c", RUBRICLIB_MAIN, *arguments]

    def judging_actors(self) -> list[int]:
        """The pids of the eval engine's judging actors running on this cluster's nodes."""
        return judging_actors([node.pid for node in self.nodes])

    def __exit__(self, *exc: object) -> None:
        # Killed, the nodes and all they started (a graceful stop took 30 s): first stopped, so
        # none starts another process meanwhile, then each one found is sent SIGKILL.
        nodes = [node.pid for node in self.nodes]
        for wanted in (signal.SIGSTOP, signal.SIGKILL):
            for pid in [*nodes, *descendants(nodes)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, wanted)
        for node in self.nodes:
            node.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def without_judge_settings(env: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """An environment without any judge setting or key of the caller's."""
    return {k: v for k, v in env.items() if not k.startswith(("OPENAI_", "RUBRICLIB_", "RAY_"))}


def descendants(roots: list[int]) -> set[int]:
    """The pids under `roots` (children, their children...), read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = set(roots)
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def judging_actors(roots: list[int]) -> list[int]:
    """The pids of `eval --engine ray`'s judging actors (`ray::MapWorker(MapBatches(
    JudgingActor))`) among the processes under `roots`: never another Ray's on the machine."""
    actors = []
    for pid in descendants(roots):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if title.startswith(b"ray::MapWorker(MapBatches(JudgingActor))"):
            actors.append(pid)
    return sorted(actors)

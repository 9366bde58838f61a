"""Where `rubriclib eval` makes its judgments: `--engine local` (this process, the default) or
`--engine ray` (a Ray cluster, `--address` or a local one); what the Ray engine cannot run is
refused before any request and before Ray starts."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import click

from rubriclib.cli.app import BadInput
from rubriclib.errors import EvalError

if TYPE_CHECKING:
    from rubriclib.evals import Eval, RayEngine, ReadyRun


def with_engine_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """`--engine` and `--address` on `command`."""
    command = click.option(
        "--address",
        help="With --engine ray: the cluster to run on (as `ray.init(address=...)` takes it: "
        "HEAD:6379, auto, ray://HEAD:10001); without it a local cluster is started.",
    )(command)
    return click.option(
        "--engine",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="Where the judgments are made: this process, or a Ray cluster (the same results "
        "file, report, gate and --resume; needs pip install 'rubriclib[ray]').",
    )(command)


def refuse_engine(engine: str, address: str | None, use_batch: bool, ev: Eval) -> None:
    """Exit 2 when the engine chosen cannot run this eval as asked: `--address` without Ray,
    Ray with `--batch`, an eval the Ray engine cannot run (naming each key), Ray not installed."""
    if engine != "ray":
        if address is not None:
            raise click.UsageError("--address needs --engine ray")
        return
    from rubriclib.evals import ray_missing, ray_refusals

    if use_batch:
        raise click.UsageError(
            "--engine ray and --batch: choose one (a Batch API sends the requests itself)"
        )
    if problems := ray_refusals(ev):
        raise EvalError(problems)
    if (missing := ray_missing()) is not None:
        raise BadInput(
            f"--engine ray: {missing} is not installed here: pip install 'rubriclib[ray]'"
        )


@contextlib.contextmanager
def judged_on(engine: str, ready: ReadyRun, address: str | None) -> Iterator[RayEngine | None]:
    """While inside, the Ray engine for `ready` connected to its cluster (None: judge here)."""
    if engine != "ray":
        yield None
        return
    from rubriclib.evals import RayEngine

    ray = RayEngine(ready, address)
    ray.start()
    try:
        yield ray
    finally:
        ray.close()

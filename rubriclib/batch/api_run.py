"""A run judged through the Batch API (`eval --batch`, `test-goldens --batch`): its graders
rebuilt as judges that each send through their own `api.BatchTransport`, over one state file."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rubriclib.batch.api import POLL_SECONDS, BatchTransport
from rubriclib.batch.files import MAX_REQUESTS, open_state
from rubriclib.batch.judges import batch_judges

if TYPE_CHECKING:
    from rubriclib.judging import Grader, Judge


@dataclass
class BatchRun:
    """A run judged through the Batch API: its judges, each built to send through its own
    BatchTransport (to its own endpoint, with its own key), sharing one state file."""

    judges: dict[str, Judge]
    """The run's graders by name, as judges that send through batches."""
    transports: list[BatchTransport]

    def refused(self) -> str | None:
        """Why the endpoint refused the run's batch upload, if it did (see
        BatchTransport.refused)."""
        return next((each.refused for each in self.transports if each.refused), None)

    def in_flight(self, judgments: int) -> int:
        """Judgments to start at once: all of them, up to a batch's size (one wave a batch)."""
        return max(1, min(judgments, MAX_REQUESTS))

    async def aclose(self) -> None:
        """Stop following the batches (they keep running at the provider), even where a
        judgment still holds its judge."""
        for transport in self.transports:
            await transport.aclose()


def open_batch_run(
    graders: Mapping[str, Grader],
    results: Path,
    *,
    resume: bool,
    poll_seconds: float = POLL_SECONDS,
    progress: Callable[[str], None] | None = None,
    api_key_envs: Mapping[str, str] | None = None,
) -> BatchRun:
    """The graders of a run writing `results`, built to judge through the Batch API (`eval
    --batch` and `test-goldens --batch` alike): its state file opened (`files.open_state`: the
    recorded one with `resume`), a judge panel refused (`judges.batch_judges`).
    `api_key_envs` names, by grader, the variable holding a judge's key, for the record."""
    state = open_state(results, resume)
    key_envs = {id(graders[name]): env for name, env in (api_key_envs or {}).items()}
    transports: list[BatchTransport] = []

    def make(judge: Judge) -> BatchTransport:
        transport = BatchTransport(
            judge.endpoint,
            judge.api_key,
            state,
            api_key_env=key_envs.get(id(judge)),
            resume=resume,
            poll_seconds=poll_seconds,
            progress=progress,
        )
        transports.append(transport)
        return transport

    return BatchRun(batch_judges(graders, make), transports)

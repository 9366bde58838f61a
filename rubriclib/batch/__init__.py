"""Batch: the same judgments through provider Batch APIs and offline batch files.

`files` holds the batch files, the state of a batch run and the offline transports (`Recorder`,
`Answerer`); `judges` rebuilds a run's judges to send through a batch transport; `api` is the
provider Batch API as a transport, and the status and cancel of recorded batches (`refresh`);
`api_run` opens a run's judges over Batch API transports and one state file (`open_batch_run`).
A batch is only another way for a judgment's requests to travel: every judgment still runs
through `judging`'s engine. Driving an eval through batch files is `evals.batch_run`'s job.

Other rooms import only the names of the face below (an import-linter contract holds them to it).
This room imports only the root leaves and `judging`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rubriclib._faces import lazy_face

# The face: other rooms import these names only from here.
if TYPE_CHECKING:
    from rubriclib.batch.api import refresh as refresh
    from rubriclib.batch.api_run import BatchRun as BatchRun
    from rubriclib.batch.api_run import open_batch_run as open_batch_run
    from rubriclib.batch.files import Answerer as Answerer
    from rubriclib.batch.files import BatchState as BatchState
    from rubriclib.batch.files import OutputFile as OutputFile
    from rubriclib.batch.files import Recorder as Recorder
    from rubriclib.batch.files import estimate as estimate
    from rubriclib.batch.files import estimate_lines as estimate_lines
    from rubriclib.batch.files import estimated_tokens as estimated_tokens
    from rubriclib.batch.files import read_output as read_output
    from rubriclib.batch.files import state_path as state_path
    from rubriclib.batch.files import write_requests as write_requests
    from rubriclib.batch.judges import batch_judges as batch_judges

_HOMES = {
    "Answerer": ".files",
    "BatchRun": ".api_run",
    "BatchState": ".files",
    "OutputFile": ".files",
    "Recorder": ".files",
    "batch_judges": ".judges",
    "estimate": ".files",
    "estimate_lines": ".files",
    "estimated_tokens": ".files",
    "open_batch_run": ".api_run",
    "read_output": ".files",
    "refresh": ".api",
    "state_path": ".files",
    "write_requests": ".files",
}
__getattr__, __dir__ = lazy_face(__name__, _HOMES)

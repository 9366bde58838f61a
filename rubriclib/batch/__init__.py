"""Batch: the same judgments through provider Batch APIs and offline batch files.

`files` holds the batch files, the state of a batch run and the offline transports (`Recorder`,
`Answerer`); `judges` rebuilds a run's judges to send through a batch transport; `api` is the
provider Batch API as a transport, and the status and cancel of recorded batches (`refresh`);
`api_run` opens a run's judges over Batch API transports and one state file (`open_batch_run`).
A batch is only another way for a judgment's requests to travel: every judgment still runs
through `judging`'s engine. Driving an eval through batch files is `evals.batch_run`'s job.

Other rooms use: `api_run.open_batch_run` / `BatchRun`, `api.refresh`, `judges.batch_judges`,
`files`' `Recorder`, `Answerer`, `read_output`, `OutputFile`, `BatchState`, `state_path`,
`write_requests` and `estimate`. This room imports only the root leaves and `judging`.
"""

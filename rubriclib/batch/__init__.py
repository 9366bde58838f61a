"""Batch: the same judgments through provider Batch APIs and offline batch files.

`files` holds the batch files, the state of a batch run and the offline transports (`Recorder`,
`Answerer`); `judges` rebuilds a run's judges to send through a batch transport; `api` is the
provider Batch API as a transport and a batch run's lifecycle (`open_batch_run`, `refresh`).
A batch is only another way for a judgment's requests to travel: every judgment still runs
through `judging`'s engine. Driving an eval through batch files is `evals.batch_run`'s job.

Other rooms use: `api.open_batch_run` / `BatchRun` / `refresh`, `judges.batch_judges`, `files`'
`Recorder`, `Answerer`, `read_output`, `OutputFile`, `BatchState`, `state_path`,
`write_requests` and `estimate`. This room imports only the root leaves and `judging`.
"""

"""Batch: the same judgments through provider Batch APIs and offline batch files.

`files` holds the batch files, the state of a batch run and the offline transports (`Recorder`,
`Answerer`); `judges` rebuilds an eval's judges to send through a batch transport; `api` is the
provider Batch API as a transport and a batch run's lifecycle. A batch is only another way for
a judgment's requests to travel: every judgment still runs through `judging`.

Other rooms use: `api.open_batch_run`, `api.BatchRun`, `judges.batch_judges`, `files`'s
`Recorder`, `Answerer`, `read_output` and `estimate`. This room imports the root leaves,
`rubrics` and `judging`.
"""

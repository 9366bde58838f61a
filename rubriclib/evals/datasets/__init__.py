"""Datasets: the rows an eval judges. `dataset` (JSONL streamed, JSON, CSV, YAML, inline rows
-> Rows of Items, every bad row named) reads inspect_ai logs through `inspect_logs` (a row per
sample) and OpenTelemetry exports through `otlp_rows` (a row per trace).

Other rooms use: `Dataset`, `Row`, `parse_row`, `MAX_PROBLEMS`.
"""

from rubriclib.evals.datasets.dataset import MAX_PROBLEMS, Dataset, Row, parse_row

__all__ = ["MAX_PROBLEMS", "Dataset", "Row", "parse_row"]

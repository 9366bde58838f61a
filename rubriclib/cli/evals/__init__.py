"""Commands that run an eval file: `eval` (`evaluate`, its choices in `choice`, its plan in
`dry_run`, its engines in `engines`), `batch` through a provider's Batch API, and `report` on
results written."""

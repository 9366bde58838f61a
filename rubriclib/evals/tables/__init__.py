"""Tables judged a batch at a time: `columns` (a pandas DataFrame, a pyarrow Table or a dict of
columns, read as plain columns and given back with the result columns added) ->
`table_judge` (`TableJudge`: a rubric over a batch's rows on the engine, picklable for Ray
Data's actors and Spark's executors; `result_key`, the anti-join a resumed table runs).
pandas, pyarrow and pyspark are imported only for a table of theirs: they come from the
extras."""

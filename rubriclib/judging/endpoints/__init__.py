"""Reaching a judge endpoint: how requests travel (`transport`), what a failure means
(`failures`), a run's pace per endpoint (`pacer`), and one endpoint as a Judge uses it: its key,
limits and learned quirks (`endpoint`)."""

"""Commands that measure a rubric against human labels: `calibrate` and `align`."""

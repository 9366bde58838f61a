"""Placeholder: the letta adapter is being written."""

SHIM_FILENAME = "rubriclib_grader.py"
SHIM_TEXT = ""
USAGE = "{path}"

"""Placeholder: the promptfoo adapter is being written."""

SHIM_FILENAME = "rubriclib_assert.py"
SHIM_TEXT = ""
USAGE = "{path}"

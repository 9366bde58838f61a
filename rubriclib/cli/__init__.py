"""The `rubriclib` console script: parse arguments, call the library, print. No logic of its own.

`app` holds the group and what commands share; each other module registers its commands.
"""

from rubriclib.cli import (  # noqa: F401 - registers commands
    batch,
    calibrate,
    evaluate,
    integrations,
    report,
    rubrics,
    runs,
    versions,
)
from rubriclib.cli.app import main

__all__ = ["main"]

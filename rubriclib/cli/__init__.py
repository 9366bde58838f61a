"""The `rubriclib` console script: parse arguments, call the library, print. No logic of its own.

`app` holds the group and what commands share; each other module registers its commands.
"""

from rubriclib.cli import batch, calibrate, evaluate, integrations, rubrics, runs, versions  # noqa: F401 - registers commands
from rubriclib.cli.app import main

__all__ = ["main"]

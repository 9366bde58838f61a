"""The `rubriclib` console script: parse arguments, call the library, print. No logic of its own.

`app` holds the group and what commands share, `options` the options several commands take;
each other module registers its commands, and is imported when one of them is looked up
(`app.COMMAND_MODULES`). The top room: no other room imports it (`main` is the console
script's entry point).
"""

from rubriclib.cli.app import main

__all__ = ["main"]

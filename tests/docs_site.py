"""The documentation site built as `make docs` builds it (strict), for the tests of the site
(tests/docs/test_site.py) and of its search box in a browser (tests/browser)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
REPOSITORY = "RUBRICLIB_REPO_URL"
"""The repository's address the site links when built with it (docs/hooks/repository.py)."""


def built_site(folder: Path, settings: dict[str, str]) -> Path:
    """The site built strictly into `folder`, with these environment variables besides (and
    no repository address unless they give one)."""
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    environment.pop(REPOSITORY, None)
    environment |= settings
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet"]
        + ["--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(folder)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    return folder

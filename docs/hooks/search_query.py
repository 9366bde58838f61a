"""The search box reads a query as the index is split: docs/hooks/search_query.js, appended to
Material for MkDocs' search worker, keeps a flag's leading dashes ("--frozen") and a hyphenated
word ("checklist-answers") whole, as mkdocs.yml's search separator keeps them in the index.
Material has no setting for how a query is read, and its lunr takes a leading "-" as "must not
contain", so `--frozen` found nothing."""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

PATCH = Path(__file__).with_name("search_query.js")
WORKER = re.compile(r"assets/javascripts/workers/search\.\w+\.min\.js")
"""Material's search worker, named by a hash of its content."""


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Material's search worker replaced by itself with the patch after it."""
    workers = [file for file in files if WORKER.fullmatch(file.src_uri)]
    if len(workers) != 1:
        raise PluginError(f"search_query: expected one search worker, found {len(workers)}")
    worker = workers[0]
    original = Path(worker.abs_src_path or "").read_text(encoding="utf-8")
    files.remove(worker)
    patched = f"{original}\n{PATCH.read_text(encoding='utf-8')}"
    files.append(File.generated(config, worker.src_uri, content=patched))
    return files

"""The repository's links, given its address at build time: `RUBRICLIB_REPO_URL` (as
`https://github.com/OWNER/rubriclib`) becomes the header's repository link and each page's edit
link on the main branch; a built-in's page edits its rubric file, the changelog page
CHANGELOG.md. Without it the site links no repository (none is recorded to invent one from)."""

from __future__ import annotations

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files

EDIT_URI = "edit/main/docs/"
"""Each page's source, relative to the repository's address."""
SOURCES = {"changelog.md": "../CHANGELOG.md"}
"""Pages whose text lives outside docs/: the file to edit, relative to docs/."""
LIBRARY = "library/"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Edit links on main when the repository's address is given, else none."""
    config.edit_uri = EDIT_URI if config.repo_url else None
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """A built-in's generated page edits its rubric; the changelog page edits CHANGELOG.md."""
    for file in files.documentation_pages():
        name = file.src_uri.removeprefix(LIBRARY)
        if file.src_uri in SOURCES:
            file.edit_uri = SOURCES[file.src_uri]
        elif file.src_uri.startswith(LIBRARY) and name != "index.md":
            file.edit_uri = f"../rubrics/{name}"
    return files

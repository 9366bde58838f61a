"""A remote reference -> a Rubric: from the cache when it holds what the reference resolves to
(offline: whatever it last resolved to), else fetched and kept."""

from __future__ import annotations

from rubriclib.config import offline
from rubriclib.rubrics.reading import decode_text
from rubriclib.rubrics.remote.fetching import fetch_git_file, fetch_https_file, resolve_revision
from rubriclib.rubrics.remote.reference import RemoteReference, parse_reference, refuse
from rubriclib.rubrics.remote.store import Fetched, RubricStore
from rubriclib.rubrics.rubric import RemoteOrigin, Rubric, parse_rubric_text

FETCH_COMMAND = "rubriclib lock {reference}"
"""The command that fetches a reference an offline run lacks (and pins it)."""


def load_remote(ref: str) -> Rubric:
    """The rubric a remote reference names; a RubricError when it is refused, cannot be
    fetched, is offline and not in the cache, or is not a valid rubric."""
    reference = parse_reference(ref)
    store = RubricStore()
    fetched, content = _cached(reference, store) if offline() else _fetched(reference, store)
    return remote_rubric(reference, fetched, content, store)


def _cached(reference: RemoteReference, store: RubricStore) -> tuple[Fetched, bytes]:
    """Offline: what the reference last resolved to, from the cache, or a RubricError naming
    the command that fetches it."""
    fetched = store.recorded(reference.text)
    content = store.read(fetched.sha256) if fetched is not None else None
    if fetched is None or content is None:
        refuse(reference.text, "reference", offline_miss(reference.text))
    return fetched, content


def offline_miss(reference: str) -> str:
    """Why an offline run stops on a reference the cache lacks, and how to fetch it."""
    return (
        "is not in the rubric cache, and offline (--offline or RUBRICLIB_OFFLINE=1) nothing is "
        f"fetched; run `{FETCH_COMMAND.format(reference=reference)}` online to fetch it"
    )


def _fetched(reference: RemoteReference, store: RubricStore) -> tuple[Fetched, bytes]:
    """Online: the reference resolved now; its file from the cache when the commit is one
    already fetched, else fetched and kept."""
    if reference.kind == "file":
        content = fetch_https_file(reference)
        fetched = Fetched(reference.url, store.put(content))
    else:
        commit = resolve_revision(reference).commit
        known = store.recorded(reference.text)
        same = known is not None and known.commit == commit
        cached = store.read(known.sha256) if known is not None and same else None
        if known is not None and cached is not None:
            return known, cached
        content = fetch_git_file(reference, commit)
        fetched = Fetched(commit, store.put(content))
    store.record(reference.text, fetched)
    return fetched, content


def remote_rubric(
    reference: RemoteReference, fetched: Fetched, content: bytes, store: RubricStore
) -> Rubric:
    """The rubric in a fetched file, its source naming the reference and the commit."""
    pinned = "sha256" if reference.kind == "file" else "commit"
    shown = fetched.sha256 if reference.kind == "file" else fetched.commit
    label = f"{reference.text} (remote, {pinned} {shown[:12]})"
    source = f"remote:{reference.text} ({pinned} {shown})"
    text = decode_text(content, label)
    rubric = parse_rubric_text(text, store.path(fetched.sha256), source, label)
    origin = RemoteOrigin(reference=reference.text, commit=fetched.commit, sha256=fetched.sha256)
    return rubric.model_copy(update={"remote": origin})

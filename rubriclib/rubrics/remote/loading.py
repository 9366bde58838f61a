"""A remote reference -> a Rubric: the lock's pinned content when the lock pins it (saying when
the tag has moved since), else what it resolves to now (offline: what it last resolved to),
from the cache when it holds it, else fetched and kept."""

from __future__ import annotations

import logging

from rubriclib.config import find_project, offline
from rubriclib.errors import Problem, RubricError
from rubriclib.rubrics.reading import decode_text
from rubriclib.rubrics.remote.pins import RemotePin, read_pins
from rubriclib.rubrics.remote.reference import RemoteReference, parse_reference, refuse
from rubriclib.rubrics.remote.store import Fetched, RubricStore
from rubriclib.rubrics.rubric import RemoteOrigin, Rubric, parse_rubric_text

# `fetching` (git, http.client, ssl: about 17 ms) is imported where a fetch happens, so listing
# or loading a pinned rubric from the cache (`rubriclib list`) does not pay for it.

logger = logging.getLogger("rubriclib")


def load_remote(ref: str, *, locked: bool = True) -> Rubric:
    """The rubric a remote reference names: the lock's pin (unless `locked` is False, as for
    `rubriclib update`), else resolved now; a RubricError when it is refused, cannot be
    fetched, is offline and not in the cache, or is not a valid rubric."""
    reference = parse_reference(ref)
    store = RubricStore()
    pin = read_pins(find_project()[0]).get(reference.text) if locked else None
    if pin is not None:
        fetched, content = _pinned(reference, pin, store)
    elif offline():
        fetched, content = _cached(reference, store)
    else:
        fetched, content = _fetched(reference, store)
    return remote_rubric(reference, fetched, content, store)


def _pinned(
    reference: RemoteReference, pin: RemotePin, store: RubricStore
) -> tuple[Fetched, bytes]:
    """The locked content: from the cache, else (online) fetched at the locked commit and
    refused unless its sha256 is the pin's. Online, a moved tag is said, not followed."""
    fetched = Fetched(pin.commit, pin.sha256, pin.kind)
    if not offline():
        _say_if_moved(reference, pin)
    if (content := store.read(pin.sha256)) is not None:
        return fetched, content
    if offline():
        refuse(reference.text, "reference", offline_miss(reference.text, pinned=True))
    from rubriclib.rubrics.remote.fetching import fetch_git_file, fetch_https_file

    if reference.kind == "file":
        content = fetch_https_file(reference)
    else:
        content = fetch_git_file(reference, pin.commit)
    if (found := store.put(content)) != pin.sha256:
        refuse(
            reference.text,
            "sha256",
            f"content differs from the lock (sha256 {found[:12]}, locked {pin.sha256[:12]}); "
            f"`rubriclib update {reference.text}` moves the pin after a review",
        )
    return fetched, content


def _say_if_moved(reference: RemoteReference, pin: RemotePin) -> None:
    """Warn when the locked tag (or branch) now names another commit than the lock's."""
    if reference.kind == "file" or pin.kind == "commit":
        return
    from rubriclib.rubrics.remote.fetching import resolve_revision

    try:
        now = resolve_revision(reference).commit
    except RubricError as error:  # the locked content may still be cached
        logger.warning("%s: cannot check the pin: %s", reference.text, error.problems[0].message)
        return
    if now != pin.commit:
        logger.warning(
            "%s: %s moved: locked at %s, now at %s; using the locked commit (`rubriclib update "
            "%s` moves the pin)",
            reference.text,
            reference.rev or "the default branch",
            pin.commit[:12],
            now[:12],
            reference.text,
        )


def _cached(reference: RemoteReference, store: RubricStore) -> tuple[Fetched, bytes]:
    """Offline: what the reference last resolved to, from the cache, or a RubricError naming
    the command that fetches it."""
    fetched = store.recorded(reference.text)
    content = store.read(fetched.sha256) if fetched is not None else None
    if fetched is None or content is None:
        refuse(reference.text, "reference", offline_miss(reference.text))
    return fetched, content


def offline_miss(reference: str, pinned: bool = False) -> str:
    """Why an offline run stops on a reference the cache lacks, and how to fetch it."""
    command = f"rubriclib show {reference}" if pinned else f"rubriclib lock {reference}"
    what = "its locked content is" if pinned else "it is"
    return (
        f"{what} not in the rubric cache, and offline (--offline or RUBRICLIB_OFFLINE=1) nothing "
        f"is fetched; run `{command}` online to fetch it"
    )


def _fetched(reference: RemoteReference, store: RubricStore) -> tuple[Fetched, bytes]:
    """Online: the reference resolved now; its file from the cache when the commit is one
    already fetched, else fetched and kept."""
    from rubriclib.rubrics.remote.fetching import fetch_git_file, fetch_https_file, resolve_revision

    if reference.kind == "file":
        content = fetch_https_file(reference)
        fetched = Fetched(reference.url, store.put(content), "file")
    else:
        revision = resolve_revision(reference)
        known = store.recorded(reference.text)
        same = known is not None and known.commit == revision.commit
        cached = store.read(known.sha256) if known is not None and same else None
        if known is not None and cached is not None:
            return Fetched(known.commit, known.sha256, revision.kind), cached
        content = fetch_git_file(reference, revision.commit)
        fetched = Fetched(revision.commit, store.put(content), revision.kind)
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
    origin = RemoteOrigin(
        reference=reference.text, commit=fetched.commit, kind=fetched.kind, sha256=fetched.sha256
    )
    return rubric.model_copy(update={"remote": origin})


def locked_remote_rubrics() -> tuple[list[Rubric], list[Problem]]:
    """The remote rubrics the project's lock pins, as locked (for `list`): from the cache
    without asking any server, else fetched (offline: a problem naming the fetching command);
    the problems of those that cannot be loaded."""
    store = RubricStore()
    rubrics, problems = [], []
    for reference_text, pin in sorted(read_pins(find_project()[0]).items()):
        content = store.read(pin.sha256)
        try:
            if content is None:
                rubrics.append(load_remote(reference_text))
                continue
            fetched = Fetched(pin.commit, pin.sha256, pin.kind)
            rubrics.append(remote_rubric(parse_reference(reference_text), fetched, content, store))
        except RubricError as error:
            problems.extend(error.problems)
    return rubrics, problems

"""Pure: which references are remote, and what a remote one names.

The rule (docs/versions.md, "Remote rubrics"): a reference is remote when it starts with `git+`
or `https://` (or `http://`, refused below unless to a loopback address), or when it starts
with a host name holding a dot followed by `/PATH@REV#SUBPATH` (`github.com/org/repo@v1.0.0#
rubrics/x.md`). Anything else keeps the registry's rules (a name, a pin, a path), and a
reference starting with `./` is always a path. The forms:

- `HOST/PATH@REV#SUBPATH`: the git repository `https://HOST/PATH`, at REV, file SUBPATH;
- `git+URL[@REV]#SUBPATH`: any URL git understands (`https://`, `ssh://`, `file://`);
- `https://HOST/.../NAME.md`: one file.

REV is a git revision (a tag, a commit or a branch), never a semver range; a reference naming
no REV, or a branch, is floating. A reference never holds credentials: `user:token@` (or any
user in an https URL) is refused, and errors name the reference with its user part hidden.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal, NoReturn

from rubriclib.errors import RubricError

TAKEN_AS_REMOTE = "taken as a remote reference"
TAKEN_AS_PATH = "taken as a path"

_HOST_FORM = re.compile(
    r"(?P<host>[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)/(?P<path>[^@#\s]+)@(?P<rev>[^#\s]+)#(?P<sub>.+)"
)
_SCHEMES = ("git+", "https://", "http://")
_USER_PART = re.compile(r"(?<=://)[^/@\s]*@")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_LOOPBACK_NAMES = ("localhost",)


@dataclass(frozen=True)
class RemoteReference:
    """A remote rubric reference, parsed: a git repository at a revision and a file in it, or
    one file fetched over https."""

    text: str
    """The reference as written (it holds no credentials: those are refused)."""
    kind: Literal["git", "file"]
    url: str
    """The repository's URL for git (without `git+`), the file's URL for `file`."""
    rev: str | None = None
    """The git revision named after `@`; None when none is (a floating reference)."""
    subpath: str = ""
    """The rubric file inside the repository (git only)."""

    @property
    def names_commit(self) -> bool:
        """Whether REV is a full commit id (never floating)."""
        return self.rev is not None and bool(_COMMIT.fullmatch(self.rev))


def is_remote_reference(ref: str) -> bool:
    """Whether `ref` is taken as a remote reference (the module's rule); `./` forces a path."""
    ref = ref.strip()
    if ref.startswith("./"):
        return False
    return ref.lower().startswith(_SCHEMES) or bool(_HOST_FORM.fullmatch(ref))


def taken_as_path(ref: str) -> str:
    """How an error on a path reference says so, naming the remote forms when the reference
    starts like a host's (`github.com/org/repo#x.md`, with no `@REV`, is a path)."""
    if re.match(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+/", ref):
        return f"{TAKEN_AS_PATH}; a remote reference is HOST/PATH@REV#FILE or git+URL@REV#FILE"
    return TAKEN_AS_PATH


def redacted(text: str) -> str:
    """`text` with any user part of a URL (`user:token@`) hidden, for an error or a log."""
    return _USER_PART.sub("***@", text)


def parse_reference(ref: str) -> RemoteReference:
    """The remote reference `ref` names (`is_remote_reference` holds), or a RubricError saying it
    was taken as remote and why it is refused; the error never repeats a credential."""
    ref = ref.strip()
    label = redacted(ref)
    if host := _HOST_FORM.fullmatch(ref):
        url = f"https://{host['host']}/{host['path']}"
        found = RemoteReference(ref, "git", url, host["rev"], host["sub"])
    elif ref.lower().startswith("git+"):
        found = _git_reference(ref, label)
    else:
        found = _file_reference(ref, label)
    refuse_unsafe_url(found.url, label)
    if found.kind == "git":
        found = RemoteReference(ref, "git", found.url, found.rev, checked_subpath(found, label))
    return found


def _git_reference(ref: str, label: str) -> RemoteReference:
    """`git+URL[@REV]#SUBPATH`: REV is after the last `@` past the URL's host."""
    location, hash_mark, subpath = ref[len("git+") :].partition("#")
    if not hash_mark or not subpath:
        refuse(label, "reference", "names no file: write git+URL@REV#PATH/TO/RUBRIC.md")
    parts = urllib.parse.urlsplit(location)
    if not parts.scheme or "://" not in location:
        refuse(label, "reference", f"{parts.scheme or location!r} is not a URL git can fetch")
    host_end = location.index("://") + 3 + len(parts.netloc)
    url, at, rev = location.rpartition("@")
    if not at or len(url) < host_end:  # no '@', or only the one of a user (ssh://git@host)
        return RemoteReference(ref, "git", location, None, subpath)
    if not rev:
        refuse(label, "reference", "names no revision after '@'")
    return RemoteReference(ref, "git", url, rev, subpath)


def _file_reference(ref: str, label: str) -> RemoteReference:
    """`https://HOST/.../NAME.md`: one file, no revision, no fragment."""
    if "#" in ref:
        refuse(
            label,
            "reference",
            "an https reference names one file (https://HOST/.../NAME.md); for a file in a git "
            "repository write git+https://HOST/REPO@REV#PATH",
        )
    if not urllib.parse.urlsplit(ref).path.endswith(".md"):
        refuse(label, "reference", "an https reference names one rubric file ending in .md")
    return RemoteReference(ref, "file", ref)


def refuse_unsafe_url(url: str, label: str) -> None:
    """Refuse credentials in a URL, and plain http except to a loopback address."""
    if (problem := unsafe_url_problem(url)) is not None:
        refuse(label, "reference", problem)


def unsafe_url_problem(url: str) -> str | None:
    """What makes `url` unsafe to fetch (credentials in it, plain http but to a loopback
    address), or None."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is not None or (parts.username and parts.scheme in ("https", "http")):
        return (
            "holds credentials (user:token@); remove them and let git's credential helper "
            "supply them (docs: Sharing rubrics, private repositories)"
        )
    if parts.scheme == "http" and not _loopback(parts.hostname or ""):
        return "plain http:// is refused except to a loopback address"
    return None


def _loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def checked_subpath(reference: RemoteReference, label: str) -> str:
    """The file inside the repository, refused when it could leave it (absolute, `..`)."""
    subpath = reference.subpath.strip()
    path = PurePosixPath(subpath)
    if not subpath or subpath.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", subpath):
        refuse(label, "subpath", f"{subpath!r} must be a relative path inside the repository")
    if ".." in path.parts or "\\" in subpath:
        refuse(label, "subpath", f"{subpath!r} leaves the repository")
    return path.as_posix()


def refuse(label: str, field: str, message: str) -> NoReturn:
    """Raise a RubricError saying the reference was taken as remote."""
    raise RubricError.single(label, field, f"{message} ({TAKEN_AS_REMOTE})")

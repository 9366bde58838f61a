"""Settings, with one precedence rule: a command-line flag, then the environment, then the
project's configuration (`rubriclib.toml`, or `[tool.rubriclib]` in `pyproject.toml`, found
from the working directory up), then the default. `rubriclib config` shows where each came from.
"""

from __future__ import annotations

import functools
import os
import tomllib
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubriclib.errors import JudgeConfigError, Problem, RubricError

DEFAULTS: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "base_url": None,
    "concurrency": 8,
    "cache": True,
    "paths": [],
    "max_prompt_tokens": 128_000,
    "protocol": "tools",
    "evidence": "auto",
    "indexes": [],
}
ENVIRONMENT = {
    "model": "RUBRICLIB_MODEL",
    "base_url": "OPENAI_BASE_URL",
    "concurrency": "RUBRICLIB_CONCURRENCY",
    "cache": "RUBRICLIB_CACHE_DIR",
    "paths": "RUBRICLIB_PATH",
    "max_prompt_tokens": "RUBRICLIB_MAX_PROMPT_TOKENS",
    "protocol": "RUBRICLIB_PROTOCOL",
    "evidence": "RUBRICLIB_EVIDENCE",
    "indexes": "RUBRICLIB_INDEXES",
}
"""The environment variable of each setting."""
PROTOCOLS = ("tools", "json", "auto")
"""How a judge may be asked for its verdict (`settings.Protocol`)."""
EVIDENCE_MODES = ("whole", "explore", "auto")
"""How a judge may be shown an agent run (`settings.Evidence`)."""
CHOICES = {"protocol": PROTOCOLS, "evidence": EVIDENCE_MODES}
"""The settings that take one of a few words, and those words."""
CONFIG_FILES = ("rubriclib.toml", "pyproject.toml")
HEADER_VARIABLES = ("OPENAI_ORG_ID", "OPENAI_PROJECT_ID")
"""Variables whose values every client (ours and the SDK's) sends as request headers."""


@dataclass(frozen=True)
class Setting:
    """A setting's value and where it came from (`flag`, `env NAME`, a config file, `default`)."""

    value: Any
    origin: str


def find_project() -> tuple[Path, Path | None]:
    """The project root (the nearest folder, from the working directory up, holding
    rubriclib.toml or pyproject.toml; else the working directory) and its config file."""
    here = Path.cwd()
    for folder in (here, *here.parents):
        for name in CONFIG_FILES:
            if (folder / name).is_file():
                return folder, folder / name
    return here, None


def project_config() -> tuple[dict[str, Any], Path | None]:
    """The project's settings as written (`paths` made absolute) and the file they are from;
    a RubricError naming the file and key for a bad one. Read once per file version: every
    rubric lookup asks for it."""
    _, path = find_project()
    if path is None:
        return {}, None
    try:
        changed = path.stat().st_mtime_ns
    except OSError:
        changed = 0
    data = dict(_read_config(path, changed))
    for key in ("paths", "indexes"):
        if key in data:
            data[key] = list(data[key])
    return data, path


@functools.lru_cache(maxsize=8)
def _read_config(path: Path, changed: int) -> tuple[tuple[str, Any], ...]:
    """The validated settings of one config file as it was at modification time `changed`."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise RubricError.single(str(path), "config", f"cannot be read: {error}") from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("rubriclib", {})
    problems = [
        Problem(str(path), key, f"unknown setting; known: {', '.join(DEFAULTS)}")
        for key in data
        if key not in DEFAULTS
    ]
    problems += _type_problems(data, path)
    if problems:
        raise RubricError(problems)
    if "paths" in data:
        data["paths"] = tuple(str((path.parent / folder).resolve()) for folder in data["paths"])
    if "indexes" in data:
        data["indexes"] = tuple(_located(index, path.parent) for index in data["indexes"])
    return tuple(data.items())


def _located(index: str, folder: Path) -> str:
    """An index as configured: a URL as written, a path made absolute from the file's folder."""
    if "://" in index:
        return index
    return str((folder / Path(index).expanduser()).resolve())


def _type_problems(data: dict[str, Any], path: Path) -> list[Problem]:
    checks = {
        "model": lambda v: isinstance(v, str) and v != "",
        "base_url": lambda v: isinstance(v, str),
        "concurrency": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "max_prompt_tokens": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "cache": lambda v: isinstance(v, bool | str),
        "paths": lambda v: isinstance(v, list) and all(isinstance(f, str) for f in v),
        "protocol": lambda v: v in PROTOCOLS,
        "evidence": lambda v: v in EVIDENCE_MODES,
        "indexes": lambda v: isinstance(v, list) and all(isinstance(i, str) and i for i in v),
    }
    kinds = {
        "model": "a model name",
        "base_url": "a URL",
        "concurrency": "an integer of at least 1",
        "max_prompt_tokens": "an integer of at least 1",
        "cache": "true, false or a folder",
        "paths": "a list of folders",
        "protocol": "tools, json or auto",
        "evidence": "whole, explore or auto",
        "indexes": "a list of index URLs or files",
    }
    return [
        Problem(str(path), key, f"must be {kinds[key]}, not {value!r}")
        for key, value in data.items()
        if key in checks and not checks[key](value)
    ]


def resolve(name: str, flag: Any = None) -> Setting:
    """One setting by the precedence rule."""
    if flag is not None:
        return Setting(flag, "flag")
    variable = ENVIRONMENT[name]
    raw = os.environ.get(variable)
    if raw:
        return Setting(_from_environment(name, raw), f"env {variable}")
    data, path = project_config()
    if name in data:
        where = f"{path}" if path and path.name != "pyproject.toml" else f"{path} [tool.rubriclib]"
        return Setting(data[name], where)
    return Setting(DEFAULTS[name], "default")


def _from_environment(name: str, raw: str) -> Any:
    if name == "paths":
        return [entry for entry in raw.split(os.pathsep) if entry.strip()]
    if name == "indexes":  # URLs hold colons: the entries are separated by spaces
        return raw.split()
    if name in ("concurrency", "max_prompt_tokens"):
        try:
            return max(1, int(raw))
        except ValueError:
            raise RubricError.single(
                ENVIRONMENT[name], "value", f"must be an integer, not {raw!r}"
            ) from None
    if name in CHOICES and raw not in CHOICES[name]:
        words = CHOICES[name]
        why = f"must be {', '.join(words[:-1])} or {words[-1]}, not {raw!r}"
        raise RubricError.single(ENVIRONMENT[name], "value", why)
    return raw


def effective() -> dict[str, Setting]:
    """Every setting as a command would see it without flags."""
    return {name: resolve(name) for name in DEFAULTS}


def search_paths() -> list[Path]:
    """Rubric folders searched by name after the project's own rubrics/: the config's `paths`,
    then RUBRICLIB_PATH's folders (empty entries skipped)."""
    configured = [Path(folder) for folder in project_config()[0].get("paths", [])]
    raw = os.environ.get(ENVIRONMENT["paths"], "")
    listed = [Path(entry).expanduser() for entry in raw.split(os.pathsep) if entry.strip()]
    return configured + listed


def default_cache_dir() -> Path:
    """$RUBRICLIB_CACHE_DIR, else $XDG_CACHE_HOME/rubriclib, else ~/.cache/rubriclib."""
    if folder := os.environ.get(ENVIRONMENT["cache"]):
        return Path(folder).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "rubriclib"


def rubric_cache_dir() -> Path:
    """Where fetched remote rubrics are kept: `rubrics/` in the verdict cache's folder (the
    configured `cache` folder, else `default_cache_dir()`), whether or not verdicts are cached."""
    setting = resolve("cache").value
    folder = Path(setting).expanduser() if isinstance(setting, str) else default_cache_dir()
    return folder / "rubrics"


OFFLINE_VARIABLE = "RUBRICLIB_OFFLINE"
"""Set to 1 (as `--offline` does) so no remote rubric is fetched: only the cache is read."""


def offline() -> bool:
    """Whether remote rubrics may only come from the cache (`--offline`, RUBRICLIB_OFFLINE=1)."""
    return os.environ.get(OFFLINE_VARIABLE, "").strip().lower() in ("1", "true", "yes", "on")


def cache_setting(no_cache: bool) -> bool | str:
    """What a command that judges passes as `Judge(cache=...)`: off with --no-cache, else the
    configured folder (or on, in the default folder, unless the config says `cache = false`)."""
    if no_cache:
        return False
    setting = resolve("cache")
    return setting.value if isinstance(setting.value, str) else bool(setting.value)


def capabilities_setting() -> bool | str:
    """Where a command that judges remembers what each endpoint accepts (`Judge(capabilities=
    ...)`): the verdict cache's folder, with or without --no-cache (which is about verdicts);
    nowhere when the config says `cache = false`."""
    return cache_setting(no_cache=False)


def check_header_value(name: str, value: str) -> str:
    """`value` if it can travel in an HTTP header as it is (visible ASCII only); else a
    JudgeConfigError naming `name` and what is wrong, never the value."""
    kinds = (
        ("a line break", lambda c: c in "\r\n"),
        ("a control character", lambda c: c < " " or c == "\x7f"),
        ("a non-ASCII character", lambda c: not c.isascii()),
        ("a space", lambda c: c.isspace()),
    )
    if value.endswith(("\r", "\n")):
        problem = "ends with a line break (a key file saved with Windows line endings?)"
    elif found := next(
        ((kind, at) for kind, test in kinds for at, c in enumerate(value, 1) if test(c)), None
    ):
        problem = f"holds {found[0]} at character {found[1]} of {len(value)}"
    else:
        return value
    raise JudgeConfigError(
        f"{name}: {problem}; an HTTP header cannot carry it (the value is not shown): "
        "fix the value and run again"
    )


def credential(variable: str, *, named_by: str | None = None) -> str | None:
    """The value of the environment variable holding a key (None when unset or empty),
    checked with the header values the clients take from the environment (HEADER_VARIABLES)
    before any request is made. A variable a file names (`named_by`, e.g. "api_key_env") must
    be set: falling back to OPENAI_API_KEY would send that key to another endpoint."""
    check_environment_headers()
    value = os.environ.get(variable)
    if not value and named_by:
        raise JudgeConfigError(f"{named_by}: ${variable} is not set")
    return check_header_value(variable, value) if value else None


def judge_key(api_key: str | None, base_url: str | None) -> Setting:
    """The key a Judge sends and where it came from (named when an endpoint refuses it, never
    the key): `api_key` if given (checked as a header value; origin `api_key`), else
    $OPENAI_API_KEY (`env OPENAI_API_KEY`); "not-needed" for an endpoint named by `base_url`
    that takes none (`default`). With neither a key nor a base URL, a JudgeConfigError (OpenAI's
    own API needs a key)."""
    if api_key:
        check_environment_headers()
        return Setting(check_header_value("api_key", api_key), "api_key")
    if key := credential("OPENAI_API_KEY"):
        return Setting(key, "env OPENAI_API_KEY")
    if base_url is None:
        raise JudgeConfigError(
            "no API key: set OPENAI_API_KEY, or OPENAI_BASE_URL for a server that needs none"
        )
    return Setting("not-needed", "default")


def check_environment_headers() -> None:
    """Check every HEADER_VARIABLES value that is set (check_header_value)."""
    for variable in HEADER_VARIABLES:
        if value := os.environ.get(variable):
            check_header_value(variable, value)


def base_url_problem(url: str) -> str | None:
    """What makes `url` unusable as an endpoint (it needs http:// or https://, a host and a
    port that is a number, in visible ASCII), or None; the URL itself is never quoted."""
    try:
        check_header_value("url", url)
    except JudgeConfigError as error:
        return str(error).removeprefix("url: ").split(";")[0]
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return "is not a URL rubriclib can use: it needs http:// or https:// and a host"
    try:
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return "has a bad port (it must be a number up to 65535)"
    return None if parts.hostname else "has no host (e.g. http://127.0.0.1:8000/v1)"


def checked_base_url(flag: str | None = None, flag_name: str = "base_url") -> str | None:
    """The base_url setting (see resolve), or a JudgeConfigError naming where it came from
    (the flag as `flag_name`, the variable, or the config file and key) when it is unusable."""
    setting = resolve("base_url", flag or None)
    if not setting.value:
        return None
    if problem := base_url_problem(setting.value):
        if setting.origin == "flag":
            where = flag_name
        elif setting.origin.startswith("env "):
            where = setting.origin.removeprefix("env ")
        else:
            where = f"{setting.origin}: base_url"
        raise JudgeConfigError(f"{where}: {problem}")
    return str(setting.value)

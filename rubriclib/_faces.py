"""A room's face: the names other rooms import from a package, each loaded from its home module
on first use, so importing a room costs nothing until a name is used."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_face(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`package`'s `__getattr__` and `__dir__`: each name in `homes` is imported from its home
    module (a name relative to the package, like `.judge`) when first asked for, then kept.
    A home `module:attribute` exports that attribute under the name (the package face's `align`
    is the measure face's `align_rubric`: a room's face cannot export a name one of its modules
    has, which importing that module sets on the package)."""
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = homes[name].partition(":")
        value = getattr(importlib.import_module(module, package), attribute or name)
        namespace[name] = value  # later lookups skip this function
        return value

    def names() -> list[str]:
        return sorted({*namespace, *homes})

    return load, names

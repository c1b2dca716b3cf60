"""The one way kcard loads what a manifest or a plugin names as "module:name"."""

from __future__ import annotations

import importlib
from typing import Any

from kcard_core.errors import KcardError


def load_object(target: str) -> Any:
    """The object ``target`` ("package.module:name") names, importing its module (ImportError or
    AttributeError when either is missing)."""
    module_name, colon, name = target.partition(":")
    if not (colon and module_name and name):
        raise KcardError(f"{target!r} names no object: write it as module:name")
    return getattr(importlib.import_module(module_name), name)


def lazy(target: str, doc: str = "") -> Any:
    """A factory for what ``target`` names that imports it only when called (or asked for its
    ``from_spec``): registering it costs nothing, so ``kcard --help`` and the listing commands,
    which load every plugin, import no model library."""
    def build(*args: Any, **options: Any) -> Any:
        return load_object(target)(*args, **options)

    build.from_spec = lambda spec, *args, **context: load_object(target).from_spec(spec, *args, **context)  # type: ignore[attr-defined]
    build.__doc__, build.__qualname__, build.__module__ = doc, target.partition(":")[2], target.partition(":")[0]
    return build

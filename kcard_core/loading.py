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

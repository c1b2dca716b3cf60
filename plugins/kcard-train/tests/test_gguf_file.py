"""kcard train writes its GGUF files itself (the gguf package): the same model llama.cpp and transformers run."""

import numpy as np
import pytest

from kcard_core.errors import KcardError
from kcard_train.gguf_file import metadata, rotary_rows


def test_rotary_rows_interleave_each_heads_halves():
    weight = np.arange(16).reshape(8, 2)  # two heads of four rows: halves [0, 1] [2, 3] and [4, 5] [6, 7]
    assert rotary_rows(weight, heads=2)[:, 0].tolist() == [0, 4, 2, 6, 8, 12, 10, 14]


def test_metadata_reads_every_kind_of_value_back_as_written(tmp_path):
    import gguf

    writer = gguf.GGUFWriter(tmp_path / "t.gguf", "llama")
    writer.add_string("general.license", "apache-2.0")
    writer.add_bool("tokenizer.ggml.add_bos_token", False)
    writer.add_uint32("tokenizer.ggml.eos_token_id", 2)
    writer.add_float32("llama.rope.freq_base", 10000.0)
    writer.add_array("tokenizer.ggml.tokens", ["<s>", "é", "a b"])
    writer.add_array("tokenizer.ggml.token_type", [3, 1, 1])
    writer.add_tensor("token_embd.weight", np.zeros((2, 32), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    found = {key: (value, kind, element)
             for key, value, kind, element in metadata(tmp_path / "t.gguf", lambda key: True)}
    assert found["general.license"] == (b"apache-2.0", gguf.GGUFValueType.STRING, None)
    assert found["tokenizer.ggml.add_bos_token"] == (False, gguf.GGUFValueType.BOOL, None)
    assert found["tokenizer.ggml.eos_token_id"] == (2, gguf.GGUFValueType.UINT32, None)
    assert found["llama.rope.freq_base"] == (10000.0, gguf.GGUFValueType.FLOAT32, None)
    assert found["tokenizer.ggml.tokens"] == ([b"<s>", "é".encode(), b"a b"], gguf.GGUFValueType.ARRAY,
                                              gguf.GGUFValueType.STRING)
    assert found["tokenizer.ggml.token_type"] == ([3, 1, 1], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)
    assert list(found)[0] == "general.architecture"  # the writer's own key, first: file order
    only = metadata(tmp_path / "t.gguf", lambda key: key.startswith("tokenizer."))
    assert [key for key, *_ in only] == ["tokenizer.ggml.add_bos_token", "tokenizer.ggml.eos_token_id",
                                         "tokenizer.ggml.tokens", "tokenizer.ggml.token_type"]
    whole = (tmp_path / "t.gguf").read_bytes()
    for name, data in (("zip", b"PK\x03\x04" + bytes(40)), ("empty", b""), ("cut", whole[:200])):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(KcardError, match="not a whole GGUF file"):
            metadata(tmp_path / name, lambda key: True)


@pytest.mark.slow
def test_a_written_model_reads_back_as_the_same_weights_and_answers_alike(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from kcard_core.models import TRAINING_BASE, resolve_model
    from kcard_core.plugins import load_registry
    from kcard_train.gguf_file import write_model
    from kcard_train.trainer import load_base

    model, tokenizer, _ = load_base("tiny-random")
    write_model(model, resolve_model(TRAINING_BASE)[1], tmp_path / "model.gguf")
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

"""A trained card's GGUF files, written with the gguf package: nothing is fetched, nothing is run.

- :func:`write_model`: a fully trained Llama-architecture model (SmolLM2, or the tiny test model) as
  one GGUF, its 2-D weights in Q8_0 and the rest in F32, with the tokenizer (vocabulary, merges,
  special tokens, chat template) of a template GGUF that has the same tokenizer (the base model's).
- :func:`write_lora`: a PEFT LoRA adapter as a GGUF adapter (F16) that llama.cpp applies to the base.

llama.cpp's rotary layout differs from Hugging Face's: the rows of the query and key projections are
reordered head by head (:func:`rotary_rows`).
"""

from __future__ import annotations

import mmap
import re
import struct
from pathlib import Path

import gguf
import numpy as np
from gguf import GGUFValueType as Kind

from kcard_core.errors import KcardError

ARCH = "llama"
# the struct formats of GGUF's fixed-size values
SCALARS = {Kind.UINT8: "<B", Kind.INT8: "<b", Kind.UINT16: "<H", Kind.INT16: "<h", Kind.UINT32: "<I",
           Kind.INT32: "<i", Kind.FLOAT32: "<f", Kind.BOOL: "<?", Kind.UINT64: "<Q", Kind.INT64: "<q",
           Kind.FLOAT64: "<d"}


def rotary_rows(weight: np.ndarray, heads: int) -> np.ndarray:
    """``weight`` (output rows first) with each head's rows in llama.cpp's order: Hugging Face keeps
    a head's two rotary halves apart, llama.cpp interleaves them."""
    half = weight.shape[0] // heads // 2
    return weight.reshape(heads, 2, half, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def _llama_config(config) -> dict[str, int | float]:
    if getattr(config, "model_type", None) != ARCH:
        raise KcardError(f"kcard train writes GGUF for Llama-architecture models (SmolLM2); this base is "
                         f"{getattr(config, 'model_type', 'unknown')!r}")
    return {"block_count": config.num_hidden_layers, "context_length": config.max_position_embeddings,
            "embedding_length": config.hidden_size, "feed_forward_length": config.intermediate_size,
            "attention.head_count": config.num_attention_heads,
            "attention.head_count_kv": config.num_key_value_heads,
            "rope.freq_base": float(config.rope_theta if hasattr(config, "rope_theta")
                                    else config.rope_parameters["rope_theta"]),
            "attention.layer_norm_rms_epsilon": float(config.rms_norm_eps), "vocab_size": config.vocab_size,
            "rope.dimension_count": config.hidden_size // config.num_attention_heads,
            "attention.key_length": config.hidden_size // config.num_attention_heads,
            "attention.value_length": config.hidden_size // config.num_attention_heads}


def _name(names, hf_name: str) -> str:
    name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
    if name is None:
        raise KcardError(f"no GGUF name for the weight {hf_name}")
    return name


def _weight(hf_name: str, tensor, config) -> np.ndarray:
    array = tensor.detach().float().cpu().numpy()
    if hf_name.endswith("q_proj.weight"):
        return rotary_rows(array, config.num_attention_heads)
    if hf_name.endswith("k_proj.weight"):
        return rotary_rows(array, config.num_key_value_heads)
    return array


def metadata(path: Path, keep) -> list[tuple[str, object, Kind, Kind | None]]:
    """The key-value metadata of the GGUF file at ``path`` whose keys ``keep`` accepts, in file order:
    (key, value, value type, an array's element type or None), strings as bytes. Reads the header
    alone (a vocabulary in a tenth of a second). Raises KcardError for a file that is not a whole GGUF
    file of version 2 or later."""
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _fields(data, keep)
    except (struct.error, ValueError, KeyError) as error:  # not GGUF, cut short, empty, an unknown type
        raise KcardError(f"{path} is not a whole GGUF file ({error})") from error


def _fields(data: mmap.mmap, keep) -> list[tuple[str, object, Kind, Kind | None]]:
    magic, version, _, count = struct.unpack_from("<4sIQQ", data)
    if magic != b"GGUF" or version < 2:
        raise ValueError("no GGUF magic number, or a version before 2")
    at = 24

    def value(kind: Kind):
        nonlocal at
        if kind == Kind.STRING:
            (size,) = struct.unpack_from("<Q", data, at)
            at += 8 + size
            return data[at - size:at]
        if kind == Kind.ARRAY:
            element, size = struct.unpack_from("<IQ", data, at)
            at += 12
            if element not in SCALARS:
                return [value(Kind(element)) for _ in range(size)]
            array = np.frombuffer(data, SCALARS[element], size, at)
            at += array.nbytes
            return array.tolist()
        (found,) = struct.unpack_from(SCALARS[kind], data, at)
        at += struct.calcsize(SCALARS[kind])
        return found

    fields = []
    for _ in range(count):
        key = value(Kind.STRING).decode()
        kind = Kind(struct.unpack_from("<I", data, at)[0])
        at += 4
        element = Kind(struct.unpack_from("<I", data, at)[0]) if kind == Kind.ARRAY else None
        found = value(kind)
        if keep(key):
            fields.append((key, found, kind, element))
    return fields


def write_model(model, template: Path, out: Path) -> None:
    """Write ``model`` (a transformers Llama model, on the CPU) to ``out``: its configuration and
    weights, with the tokenizer and licence of ``template`` (a GGUF of any architecture whose tokenizer
    the model uses). Raises KcardError for a model of another architecture."""
    config = model.config
    hyper = _llama_config(config)
    writer = gguf.GGUFWriter(out, ARCH)
    # the tokenizer and the licence; not the template's shape or name
    for key, value, kind, element in metadata(template, lambda key: key.startswith("tokenizer.")
                                              or key == "general.license"):
        writer.add_key_value(key, value, kind, element)
    for key, value in hyper.items():
        kind = Kind.FLOAT32 if isinstance(value, float) else Kind.UINT32
        writer.add_key_value(f"{ARCH}.{key}", value, kind)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config.num_hidden_layers)
    for hf_name, tensor in model.state_dict().items():
        if hf_name == "lm_head.weight" and config.tie_word_embeddings:
            continue  # llama.cpp reads the output projection from token_embd
        array = _weight(hf_name, tensor, config)
        if array.ndim == 2 and array.shape[-1] % 32 == 0:
            writer.add_tensor(_name(names, hf_name), gguf.quants.quantize(array, gguf.GGMLQuantizationType.Q8_0),
                              raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            writer.add_tensor(_name(names, hf_name), array.astype(np.float32))
    _finish(writer)


def write_lora(model, out: Path) -> None:
    """Write the LoRA adapter of ``model`` (a PEFT model over a Llama base) to ``out`` as a GGUF
    adapter: each adapted weight's A and B matrices in F16 and its scale (alpha)."""
    config = model.get_base_model().config
    _llama_config(config)
    (adapter,) = model.peft_config.values()
    writer = gguf.GGUFWriter(out, ARCH)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", float(adapter.lora_alpha))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config.num_hidden_layers)
    for key, tensor in model.state_dict().items():
        if ".lora_A." not in key and ".lora_B." not in key:
            continue
        part = "lora_a" if ".lora_A." in key else "lora_b"
        hf_name = re.sub(r"\.lora_[AB]\.default", "", key.removeprefix("base_model.model."))
        # B's rows are the weight's output rows: in llama.cpp's rotary order, as the weight's are
        array = _weight(hf_name, tensor, config) if part == "lora_b" else tensor.detach().float().cpu().numpy()
        writer.add_tensor(f"{_name(names, hf_name)}.{part}", array.astype(np.float16))
    _finish(writer)


def _finish(writer) -> None:
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

"""Exports the trained model as a Hugging Face Llama checkpoint directory:

    config.json             LlamaForCausalLM, model_type llama
    model.safetensors       every tensor as F32
    tokenizer.json          the byte-level BPE tokenizer (tokenizer.py)
    tokenizer_config.json
    generation_config.json

The safetensors file is written here, without the safetensors package: an 8-byte little-endian
header length N, N bytes of JSON header (padded with spaces to a multiple of 8) mapping each
tensor name to {"dtype", "shape", "data_offsets": [begin, end]} with offsets into the data
section, then the data section: the tensors' little-endian bytes, one after another.
"""

import json
import os
import struct

import numpy as np

from checkpoint import write_atomically


def safetensors_bytes(tensors):
    """The .safetensors file for {name: float tensor}, tensors in name order, F32."""
    header, chunks, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        data = t.float().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def read_safetensors(path):
    """{name: numpy float32 array} of an F32 .safetensors file (for the tests and tools)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            raise ValueError(f"{path}: tensor {name} is {info['dtype']}, not F32")
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(data[begin:end], dtype="<f4").reshape(info["shape"])
    return out


def hf_config(c, eot_id):
    """config.json as transformers writes it for LlamaForCausalLM."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": c.vocab_size,
        "hidden_size": c.hidden_size,
        "intermediate_size": c.intermediate_size,
        "num_hidden_layers": c.num_layers,
        "num_attention_heads": c.num_heads,
        "num_key_value_heads": c.num_kv_heads,
        "head_dim": c.head_dim,
        "max_position_embeddings": c.max_position_embeddings,
        "hidden_act": "silu",
        "rms_norm_eps": c.rms_norm_eps,
        "rope_theta": c.rope_theta,
        "rope_scaling": None,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "mlp_bias": False,
        "pretraining_tp": 1,
        "initializer_range": c.initializer_range,
        "tie_word_embeddings": c.tie_word_embeddings,
        "bos_token_id": eot_id,
        "eos_token_id": eot_id,
        "torch_dtype": "float32",
        "use_cache": True,
    }


def _write_json(path, value):
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, lambda f: f.write(text.encode("utf-8")))


def export(model, tokenizer, directory):
    """Writes the checkpoint directory (created if needed); returns its path."""
    os.makedirs(directory, exist_ok=True)
    c = model.config
    eot = tokenizer.eot_id
    write_atomically(os.path.join(directory, "model.safetensors"),
                     lambda f: f.write(safetensors_bytes(model.hf_state_dict())))
    _write_json(os.path.join(directory, "config.json"), hf_config(c, eot))
    _write_json(os.path.join(directory, "tokenizer.json"), tokenizer.to_json())
    _write_json(os.path.join(directory, "tokenizer_config.json"), {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<|endoftext|>",
        "eos_token": "<|endoftext|>",
        "model_max_length": c.max_position_embeddings,
        "clean_up_tokenization_spaces": False,
    })
    _write_json(os.path.join(directory, "generation_config.json"), {
        "bos_token_id": eot,
        "eos_token_id": eot,
        "do_sample": False,
    })
    return directory

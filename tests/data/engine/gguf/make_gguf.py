#!/usr/bin/env python3
"""Writes the GGUF test files with llama.cpp's own gguf-py (its GGUFWriter and quants module),
following the conventions of its convert_hf_to_gguf.py, so that the engine's GGUF reader is
checked against an independent writer.

Run from the repository root:
    PYTHONPATH=/path/to/llama.cpp/gguf-py /usr/bin/python3 tests/data/engine/gguf/make_gguf.py

Needs numpy and, for the SentencePiece vocabulary, the sentencepiece module (Debian:
python3-sentencepiece). See README.md for the gguf-py commit the committed files were made with.
"""
import json
import struct
import sys
from pathlib import Path

import numpy as np
import gguf
from gguf import quants

HERE = Path(__file__).resolve().parent
ENGINE = HERE.parent

LLAMA3_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?"
                "[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2_REGEX = LLAMA3_REGEX.replace("\\p{N}{1,3}", "\\p{N}")

# A ChatML template, stored in the Qwen2 files so that tokenizer.chat_template is read back.
CHATML = ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
          "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
          "{{ '<|im_start|>assistant\\n' }}{% endif %}")


def read_safetensors(path):
    """name -> float32 array, by the format's definition (8-byte length, JSON header, data)."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32", entry
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + begin:8 + n + end], dtype=np.float32).reshape(
            entry["shape"]).copy()
    return out


def permute(w, n_head):
    """convert_hf_to_gguf's LlamaModel.permute: each head's rows into the interleaved rotary
    order."""
    return (w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def gguf_name(hf):
    names = {
        "model.embed_tokens.weight": "token_embd.weight",
        "model.norm.weight": "output_norm.weight",
        "lm_head.weight": "output.weight",
    }
    if hf in names:
        return names[hf]
    parts = hf.split(".")  # model.layers.N.<module>.<proj>.<weight|bias>
    block = parts[2]
    tail = ".".join(parts[3:])
    layer = {
        "input_layernorm.weight": "attn_norm.weight",
        "post_attention_layernorm.weight": "ffn_norm.weight",
        "self_attn.q_proj.weight": "attn_q.weight", "self_attn.q_proj.bias": "attn_q.bias",
        "self_attn.k_proj.weight": "attn_k.weight", "self_attn.k_proj.bias": "attn_k.bias",
        "self_attn.v_proj.weight": "attn_v.weight", "self_attn.v_proj.bias": "attn_v.bias",
        "self_attn.o_proj.weight": "attn_output.weight",
        "mlp.gate_proj.weight": "ffn_gate.weight",
        "mlp.up_proj.weight": "ffn_up.weight",
        "mlp.down_proj.weight": "ffn_down.weight",
    }[tail]
    return f"blk.{block}.{layer}"


def add_bpe_vocab(w, tok, config):
    """The byte-level BPE vocabulary as convert_hf_to_gguf's _set_vocab_gpt2 writes it."""
    model = tok["model"]
    regex = tok["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    pre = {LLAMA3_REGEX: "llama-bpe", QWEN2_REGEX: "qwen2"}[regex]
    vocab_size = config["vocab_size"]
    reverse = {i: t for t, i in model["vocab"].items()}
    added = {a["id"]: a for a in tok["added_tokens"]}
    tokens, types = [], []
    for i in range(vocab_size):
        if i in added:
            tokens.append(added[i]["content"])
            types.append(gguf.TokenType.CONTROL if added[i]["special"]
                         else gguf.TokenType.USER_DEFINED)
        elif i in reverse:
            tokens.append(reverse[i])
            types.append(gguf.TokenType.NORMAL)
        else:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in model["merges"]])
    w.add_bos_token_id(config["bos_token_id"])
    w.add_eos_token_id(config["eos_token_id"])
    single = tok["post_processor"]["single"]
    w.add_add_bos_token("SpecialToken" in single[0])


def quantize(data, qtype):
    """(array, ggml type) as the converter stores a tensor of the given output type: 1-D tensors
    stay F32; rows that are not whole quantisation blocks fall back to F16."""
    if data.ndim == 1 or qtype == gguf.GGMLQuantizationType.F32:
        return data.astype(np.float32), gguf.GGMLQuantizationType.F32
    if qtype == gguf.GGMLQuantizationType.F16:
        return data.astype(np.float16), gguf.GGMLQuantizationType.F16
    try:
        return quants.quantize(data, qtype), qtype
    except quants.QuantError:
        return data.astype(np.float16), gguf.GGMLQuantizationType.F16


def write_model(name, qtype, suffix):
    src = ENGINE / name
    config = json.loads((src / "config.json").read_text())
    tok = json.loads((src / "tokenizer.json").read_text())
    arch = config["model_type"]
    tensors = read_safetensors(src / "model.safetensors")
    out = HERE / f"{name}.{suffix}.gguf"
    w = gguf.GGUFWriter(out, arch)
    w.add_name(name)
    w.add_context_length(config["max_position_embeddings"])
    w.add_embedding_length(config["hidden_size"])
    w.add_block_count(config["num_hidden_layers"])
    w.add_feed_forward_length(config["intermediate_size"])
    w.add_head_count(config["num_attention_heads"])
    w.add_head_count_kv(config["num_key_value_heads"])
    w.add_rope_freq_base(config["rope_parameters"]["rope_theta"])
    w.add_layer_norm_rms_eps(config["rms_norm_eps"])
    if "head_dim" in config:
        w.add_key_length(config["head_dim"])
        w.add_value_length(config["head_dim"])
        w.add_rope_dimension_count(config["head_dim"])
    w.add_vocab_size(config["vocab_size"])
    w.add_file_type({"f32": 0, "f16": 1, "q8_0": 7, "q4_0": 2}[suffix])
    add_bpe_vocab(w, tok, config)
    if arch == "qwen2":
        w.add_chat_template(CHATML)
    dequantised = {}
    for hf_name, data in tensors.items():
        if arch == "llama" and hf_name.endswith(("q_proj.weight", "q_proj.bias")):
            data = permute(data, config["num_attention_heads"])
        if arch == "llama" and hf_name.endswith(("k_proj.weight", "k_proj.bias")):
            data = permute(data, config["num_key_value_heads"])
        stored, stored_type = quantize(data, qtype)
        w.add_tensor(gguf_name(hf_name), stored, raw_dtype=stored_type)
        if stored_type in (gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.Q4_0):
            dequantised[gguf_name(hf_name)] = quants.dequantize(stored, stored_type)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    # One dequantised tensor per quantised file, in the file's (rotary) row order: the values gguf-py
    # reads back, against which the engine's dequantisation is checked.
    if dequantised:
        for tensor in ("blk.0.attn_q.weight",):
            dequantised[tensor].astype("<f4").tofile(HERE / f"{name}.{suffix}.{tensor}.f32")
    print(out.name, out.stat().st_size, "bytes")


def write_sentencepiece_vocab():
    """A vocabulary-only file of the SentencePiece fixture, as _set_vocab_sentencepiece writes
    it: pieces, scores and types."""
    from sentencepiece import SentencePieceProcessor
    sp = SentencePieceProcessor()
    sp.LoadFromFile(str(ENGINE / "tok-sentencepiece" / "tokenizer.model"))
    tokens, scores, types = [], [], []
    for i in range(sp.vocab_size()):
        tokens.append(sp.IdToPiece(i))
        scores.append(sp.GetScore(i))
        if sp.IsUnknown(i):
            types.append(gguf.TokenType.UNKNOWN)
        elif sp.IsControl(i):
            types.append(gguf.TokenType.CONTROL)
        elif sp.IsUnused(i):
            types.append(gguf.TokenType.UNUSED)
        elif sp.IsByte(i):
            types.append(gguf.TokenType.BYTE)
        else:
            types.append(gguf.TokenType.NORMAL)
    out = HERE / "tok-sentencepiece.gguf"
    w = gguf.GGUFWriter(out, "llama")
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(sp.bos_id())
    w.add_eos_token_id(sp.eos_id())
    w.add_unk_token_id(sp.unk_id())
    w.add_add_bos_token(True)
    w.add_add_space_prefix(True)  # the model's normalizer_spec.add_dummy_prefix
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(out.name, out.stat().st_size, "bytes")


def write_fuzz_seeds():
    """Small seeds for fuzz/gguf_fuzz.cc (scripts/fuzz.sh lets it take 8 KiB inputs): a one-layer llama
    with Q4_0, Q8_0, F16 and F32 weights, 8-byte alignment (so F32 data need not be 32-aligned)
    and a byte-level vocabulary; a SentencePiece vocabulary alone."""
    seeds = HERE.parents[3] / "fuzz" / "corpus" / "gguf"
    seeds.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(5)
    h, ff, vocab, heads, kv_heads = 32, 8, 8, 2, 1
    w = gguf.GGUFWriter(seeds / "tiny-llama.gguf", "llama")
    w.add_custom_alignment(8)
    w.add_context_length(64)
    w.add_embedding_length(h)
    w.add_block_count(1)
    w.add_feed_forward_length(ff)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("llama-bpe")
    w.add_token_list(["a", "b", "ab", "Ġ", "<s>", "</s>", "c", "Ġa"])
    w.add_token_types([1, 1, 1, 1, 3, 3, 4, 1])
    w.add_token_merges(["a b", "Ġ a"])
    w.add_bos_token_id(4)
    w.add_eos_token_id(5)
    Q4, Q8 = gguf.GGMLQuantizationType.Q4_0, gguf.GGMLQuantizationType.Q8_0
    shapes = {
        "token_embd.weight": ((vocab, h), Q4), "blk.0.attn_norm.weight": ((h,), None),
        "blk.0.attn_q.weight": ((h, h), Q4), "blk.0.attn_k.weight": ((h // 2, h), Q8),
        "blk.0.attn_v.weight": ((h // 2, h), Q4), "blk.0.attn_output.weight": ((h, h), Q4),
        "blk.0.ffn_norm.weight": ((h,), None), "blk.0.ffn_gate.weight": ((ff, h), Q4),
        "blk.0.ffn_up.weight": ((ff, h), Q4), "blk.0.ffn_down.weight": ((h, ff), None),
        "output_norm.weight": ((h,), None),
    }
    for name, (shape, qtype) in shapes.items():
        data = rng.standard_normal(shape).astype(np.float32)
        if qtype is None:  # F16 for the layer's, F32 for the final norm
            w.add_tensor(name, data.astype(np.float16) if name.startswith("blk") else data)
        else:
            w.add_tensor(name, quants.quantize(data, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    w = gguf.GGUFWriter(seeds / "tiny-spm-vocab.gguf", "llama")
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(0x20, 0x30)]
    pieces += ["\u2581", "a", "b", "\u2581a", "ab"]
    w.add_tokenizer_model("llama")
    w.add_token_list(pieces)
    w.add_token_scores([0.0] * 3 + [0.0] * 16 + [-1.0, -2.0, -3.0, -4.0, -5.0])
    w.add_token_types([2, 3, 3] + [6] * 16 + [1] * 5)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    for f in sorted(seeds.iterdir()):
        print(f.name, f.stat().st_size, "bytes")


def main():
    types = {"f32": gguf.GGMLQuantizationType.F32, "f16": gguf.GGMLQuantizationType.F16,
             "q8_0": gguf.GGMLQuantizationType.Q8_0, "q4_0": gguf.GGMLQuantizationType.Q4_0}
    for name in ("llama-gqa", "qwen2-bias"):
        for suffix, qtype in types.items():
            write_model(name, qtype, suffix)
    write_sentencepiece_vocab()
    write_fuzz_seeds()
    return 0


if __name__ == "__main__":
    sys.exit(main())

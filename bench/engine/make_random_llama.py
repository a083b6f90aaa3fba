#!/usr/bin/python3
"""Writes a Llama checkpoint with random weights, for the inference engine benchmark.

    make_random_llama.py --size 125m|1b|tiny --out DIR [--seed N] [--hf-only]

writes, unless they are already there:

  DIR/llama-<size>/            Hugging Face layout: config.json, model.safetensors (F16),
                               tokenizer.json (Metaspace BPE with byte fallback)
  DIR/llama-<size>-f16.gguf    the same weights as GGUF F16, laid out as llama.cpp's converter
                               lays out a Llama checkpoint (q/k rows permuted for its rotary
                               layout, 1-d tensors in F32), with the same vocabulary as a
                               SentencePiece-style ("llama") tokenizer

(--hf-only: the checkpoint alone, with no need of gguf-py.) Both engines therefore run
identical weights. Quantising the GGUF (llama-quantize ... Q8_0) is
left to the caller. Needs numpy, and llama.cpp's gguf-py on PYTHONPATH for the GGUF file.
"""

import argparse
import json
import os
import struct
import sys

import numpy as np

# name: hidden, layers, heads, kv heads, intermediate, vocab, context
SIZES = {
    # ~125M parameters (97M without the embedding and the LM head)
    "125m": dict(hidden=768, layers=12, heads=12, kv_heads=4, ff=2048, vocab=32000, ctx=2048),
    # ~1.1B parameters: Llama 3.2 1B's blocks (2048 wide, 16 layers, 32/8 heads, 8192 MLP)
    "1b": dict(hidden=2048, layers=16, heads=32, kv_heads=8, ff=8192, vocab=32000, ctx=2048),
    # for trying the scripts quickly
    "tiny": dict(hidden=128, layers=2, heads=4, kv_heads=2, ff=384, vocab=1000, ctx=1024),
}

SPECIALS = ["<unk>", "<s>", "</s>"]
BYTE_TOKENS = ["<0x%02X>" % b for b in range(256)]
SPACE = "\u2581"  # SentencePiece's "▁"


def make_vocab(size, rng):
    """Specials, the 256 byte-fallback tokens, printable ASCII and "▁", then tokens made by
    merging two existing ones, each with its merge rule, until there are `size`."""
    base = [SPACE] + [chr(c) for c in range(33, 127)]
    tokens = SPECIALS + BYTE_TOKENS + base
    if size < len(tokens):
        sys.exit(f"vocabulary of {size} is smaller than the {len(tokens)} fixed tokens")
    known = set(tokens)
    merges = []
    pieces = list(base)
    while len(tokens) < size:
        # Favour short pieces so that the vocabulary looks like a real one.
        a = pieces[int(rng.integers(0, min(len(pieces), 400)))]
        b = pieces[int(rng.integers(0, len(pieces)))]
        new = a + b
        if new in known or len(new) > 16:
            continue
        known.add(new)
        tokens.append(new)
        pieces.append(new)
        merges.append((a, b))
    return tokens, merges


def hf_tensors(shape, rng):
    """The Hugging Face state dict in F16: name -> array [out, in]."""
    h, ff, v = shape["hidden"], shape["ff"], shape["vocab"]
    hd = h // shape["heads"]
    kv = shape["kv_heads"] * hd

    def mat(rows, cols):
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)

    def norm():
        return (1.0 + 0.1 * rng.standard_normal(h, dtype=np.float32)).astype(np.float16)

    out = {"model.embed_tokens.weight": mat(v, h)}
    for i in range(shape["layers"]):
        p = f"model.layers.{i}."
        out[p + "input_layernorm.weight"] = norm()
        out[p + "self_attn.q_proj.weight"] = mat(h, h)
        out[p + "self_attn.k_proj.weight"] = mat(kv, h)
        out[p + "self_attn.v_proj.weight"] = mat(kv, h)
        out[p + "self_attn.o_proj.weight"] = mat(h, h)
        out[p + "post_attention_layernorm.weight"] = norm()
        out[p + "mlp.gate_proj.weight"] = mat(ff, h)
        out[p + "mlp.up_proj.weight"] = mat(ff, h)
        out[p + "mlp.down_proj.weight"] = mat(h, ff)
    out["model.norm.weight"] = norm()
    out["lm_head.weight"] = mat(v, h)
    return out


def write_safetensors(path, tensors):
    header, offset = {}, 0
    for name, t in tensors.items():
        header[name] = {"dtype": "F16", "shape": list(t.shape),
                        "data_offsets": [offset, offset + t.nbytes]}
        offset += t.nbytes
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for t in tensors.values():
            f.write(t.tobytes())
    os.replace(path + ".tmp", path)


def write_hf_metadata(d, shape, tokens, merges):
    """config.json and tokenizer.json (cheap: always rewritten)."""
    os.makedirs(d, exist_ok=True)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_act": "silu",
        "hidden_size": shape["hidden"],
        "intermediate_size": shape["ff"],
        "num_hidden_layers": shape["layers"],
        "num_attention_heads": shape["heads"],
        "num_key_value_heads": shape["kv_heads"],
        "max_position_embeddings": shape["ctx"],
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "vocab_size": shape["vocab"],
        "bos_token_id": 1,
        "eos_token_id": 2,
        "torch_dtype": "float16",
    }
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    special = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
                "normalized": False, "special": True} for i, t in enumerate(SPECIALS)]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": special,
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]},
        "pre_tokenizer": None,
        "post_processor": {  # BOS first, as llama.cpp adds it (add_bos_token)
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": {t: i for i, t in enumerate(tokens)},
                  "merges": [[a, b] for a, b in merges]},
    }
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False)


def permute_rows(w, n_head):
    """llama.cpp's converter reorders q/k rows from Hugging Face's "rotate half" layout to
    interleaved pairs: within each head, row i of the first half and of the second half become
    rows 2i and 2i+1."""
    rows = w.shape[0]
    return (w.reshape(n_head, 2, rows // n_head // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def write_gguf(path, name, shape, tensors, tokens, merges):
    import gguf  # llama.cpp's gguf-py

    hd = shape["hidden"] // shape["heads"]
    w = gguf.GGUFWriter(path + ".tmp", "llama")
    w.add_name(name)
    w.add_context_length(shape["ctx"])
    w.add_embedding_length(shape["hidden"])
    w.add_block_count(shape["layers"])
    w.add_feed_forward_length(shape["ff"])
    w.add_rope_dimension_count(hd)
    w.add_head_count(shape["heads"])
    w.add_head_count_kv(shape["kv_heads"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(shape["vocab"])
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)

    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    rank = {a + b: i for i, (a, b) in enumerate(merges)}
    w.add_token_scores([-float(rank.get(t, 0)) for t in tokens])
    types = []
    for i, t in enumerate(tokens):
        if i == 0:
            types.append(gguf.TokenType.UNKNOWN)
        elif i < len(SPECIALS):
            types.append(gguf.TokenType.CONTROL)
        elif i < len(SPECIALS) + 256:
            types.append(gguf.TokenType.BYTE)
        else:
            types.append(gguf.TokenType.NORMAL)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    def f32(t):
        return t.astype(np.float32)

    w.add_tensor("token_embd.weight", tensors["model.embed_tokens.weight"])
    for i in range(shape["layers"]):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", f32(tensors[p + "input_layernorm.weight"]))
        w.add_tensor(b + "attn_q.weight",
                     permute_rows(tensors[p + "self_attn.q_proj.weight"], shape["heads"]))
        w.add_tensor(b + "attn_k.weight",
                     permute_rows(tensors[p + "self_attn.k_proj.weight"], shape["kv_heads"]))
        w.add_tensor(b + "attn_v.weight", tensors[p + "self_attn.v_proj.weight"])
        w.add_tensor(b + "attn_output.weight", tensors[p + "self_attn.o_proj.weight"])
        w.add_tensor(b + "ffn_norm.weight", f32(tensors[p + "post_attention_layernorm.weight"]))
        w.add_tensor(b + "ffn_gate.weight", tensors[p + "mlp.gate_proj.weight"])
        w.add_tensor(b + "ffn_up.weight", tensors[p + "mlp.up_proj.weight"])
        w.add_tensor(b + "ffn_down.weight", tensors[p + "mlp.down_proj.weight"])
    w.add_tensor("output_norm.weight", f32(tensors["model.norm.weight"]))
    w.add_tensor("output.weight", tensors["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=sorted(SIZES), required=True)
    ap.add_argument("--out", required=True, help="directory for the checkpoint and the GGUF")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--hf-only", action="store_true", help="write the checkpoint, not the GGUF")
    args = ap.parse_args()
    shape = SIZES[args.size]
    name = f"llama-{args.size}"
    hf_dir = os.path.join(args.out, name)
    gguf_path = os.path.join(args.out, name + "-f16.gguf")
    weights_path = os.path.join(hf_dir, "model.safetensors")
    rng = np.random.default_rng(args.seed)
    tokens, merges = make_vocab(shape["vocab"], rng)
    write_hf_metadata(hf_dir, shape, tokens, merges)
    if os.path.exists(weights_path) and (args.hf_only or os.path.exists(gguf_path)):
        print(f"{name}: reusing {weights_path}" + ("" if args.hf_only else f" and {gguf_path}"))
        return
    tensors = hf_tensors(shape, rng)
    params = sum(t.size for t in tensors.values())
    print(f"{name}: {params / 1e6:.0f}M parameters, {shape}")
    write_safetensors(weights_path, tensors)
    if args.hf_only:
        print(f"{name}: wrote {hf_dir}")
        return
    write_gguf(gguf_path, name, shape, tensors, tokens, merges)
    print(f"{name}: wrote {hf_dir} and {gguf_path}")


if __name__ == "__main__":
    main()

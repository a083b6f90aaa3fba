#!/usr/bin/python3
"""Writes the engine benchmark's random-weight Llama (make_random_llama.py's sizes, weights and
SentencePiece-style vocabulary) as a GGUF file quantised by llama.cpp itself into a K-quant mix,
so that the engine and llama.cpp run the very same file:

    make_kquant_model.py --size 125m|1b --out DIR --bins BINS [--mix q4_k_m]

writes DIR/llama-<size>-<mix>.gguf (and, while it runs, an F16 GGUF it quantises from). BINS is
a folder with llama.cpp's shared libraries (libllama, libggml): npm's @node-llama-cpp/linux-x64
package has them in bins/linux-x64. Needs numpy.
"""
import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tests" / "data" / "engine" / "kquant"))
import make_random_llama as random_llama  # noqa: E402
from make_kquant_model import GgufWriter, LlamaCppQuantizer  # noqa: E402

# llama.cpp's llama_ftype values.
MIXES = {"q2_k": 10, "q3_k_m": 12, "q4_k_s": 14, "q4_k_m": 15, "q5_k_m": 17, "q6_k": 18,
         "q8_0": 7}


def write_f16(path, name, shape, tensors, tokens, merges):
    w = GgufWriter()
    w.add("general.architecture", w.STRING, "llama")
    w.add("general.name", w.STRING, name)
    w.add("general.file_type", w.UINT32, 1)
    for key, value in (("context_length", shape["ctx"]), ("embedding_length", shape["hidden"]),
                       ("block_count", shape["layers"]), ("feed_forward_length", shape["ff"]),
                       ("rope.dimension_count", shape["hidden"] // shape["heads"]),
                       ("attention.head_count", shape["heads"]),
                       ("attention.head_count_kv", shape["kv_heads"]),
                       ("vocab_size", shape["vocab"])):
        w.add("llama." + key, w.UINT32, value)
    w.add("llama.attention.layer_norm_rms_epsilon", w.FLOAT32, 1e-5)
    w.add("llama.rope.freq_base", w.FLOAT32, 10000.0)
    w.add("tokenizer.ggml.model", w.STRING, "llama")
    w.add("tokenizer.ggml.tokens", w.ARRAY, tokens, w.STRING)
    rank = {a + b: i for i, (a, b) in enumerate(merges)}
    w.add("tokenizer.ggml.scores", w.ARRAY, [-float(rank.get(t, 0)) for t in tokens], w.FLOAT32)
    specials = len(random_llama.SPECIALS)
    types = [2 if i == 0 else 3 if i < specials else 6 if i < specials + 256 else 1
             for i in range(len(tokens))]  # UNKNOWN, CONTROL, BYTE, NORMAL
    w.add("tokenizer.ggml.token_type", w.ARRAY, types, w.INT32)
    w.add("tokenizer.ggml.unknown_token_id", w.UINT32, 0)
    w.add("tokenizer.ggml.bos_token_id", w.UINT32, 1)
    w.add("tokenizer.ggml.eos_token_id", w.UINT32, 2)
    w.add("tokenizer.ggml.add_bos_token", w.BOOL, True)

    def f32(t):
        return t.astype(np.float32)

    w.tensor("token_embd.weight", tensors["model.embed_tokens.weight"])
    for i in range(shape["layers"]):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        w.tensor(b + "attn_norm.weight", f32(tensors[p + "input_layernorm.weight"]))
        w.tensor(b + "attn_q.weight", random_llama.permute_rows(
            tensors[p + "self_attn.q_proj.weight"], shape["heads"]))
        w.tensor(b + "attn_k.weight", random_llama.permute_rows(
            tensors[p + "self_attn.k_proj.weight"], shape["kv_heads"]))
        w.tensor(b + "attn_v.weight", tensors[p + "self_attn.v_proj.weight"])
        w.tensor(b + "attn_output.weight", tensors[p + "self_attn.o_proj.weight"])
        w.tensor(b + "ffn_norm.weight", f32(tensors[p + "post_attention_layernorm.weight"]))
        w.tensor(b + "ffn_gate.weight", tensors[p + "mlp.gate_proj.weight"])
        w.tensor(b + "ffn_up.weight", tensors[p + "mlp.up_proj.weight"])
        w.tensor(b + "ffn_down.weight", tensors[p + "mlp.down_proj.weight"])
    w.tensor("output_norm.weight", f32(tensors["model.norm.weight"]))
    w.tensor("output.weight", tensors["lm_head.weight"])
    w.write(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=["125m", "1b"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bins", required=True, help="folder with libllama and libggml")
    ap.add_argument("--mix", choices=sorted(MIXES), default="q4_k_m")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    name = f"llama-{args.size}"
    out = Path(args.out) / f"{name}-{args.mix}.gguf"
    if out.exists():
        print(f"{out}: already there")
        return
    shape = random_llama.SIZES[args.size]
    rng = np.random.default_rng(args.seed)
    tokens, merges = random_llama.make_vocab(shape["vocab"], rng)
    tensors = random_llama.hf_tensors(shape, rng)
    f16 = Path(args.out) / f"{name}-f16.kquant-source.gguf"
    os.makedirs(args.out, exist_ok=True)
    write_f16(f16, name, shape, tensors, tokens, merges)
    del tensors
    LlamaCppQuantizer(args.bins).quantize(f16, out, MIXES[args.mix], threads=os.cpu_count() or 2)
    f16.unlink()
    print(f"{out}: {out.stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()

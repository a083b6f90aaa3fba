#!/usr/bin/env python3
"""Writes a small random-weight Llama as an F32 GGUF file and has llama.cpp itself quantise it
into the K-quant mixes people download (llama_model_quantize, as its llama-quantize tool does),
so that the engine reads files made by the real quantiser.

The model is wide enough for K-quants (rows of 256 and 512 weights: whole super-blocks): hidden
256, 4 query heads sharing 2 key/value heads (head_dim 64), feed-forward 512, 2 layers, and the
byte-level BPE vocabulary of ../llama-gqa (1024 tokens; llama.cpp needs one to load the model).
Its weights are larger than a default initialisation, so that logits are far from uniform and
greedy tokens far from ties.

    /usr/bin/python3 tests/data/engine/kquant/make_kquant_model.py /path/to/bins/linux-x64

The folder is npm's @node-llama-cpp/linux-x64 package's (prebuilt llama.cpp: libllama and
libggml; README.md gives the version). The F32 file is written to a temporary folder; the
quantised files go here. llama_logits.mjs then records llama.cpp's logits for them.
"""
import ctypes
import json
import os
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ENGINE = HERE.parent
LLAMA3_REGEX = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?"
                "[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")

HIDDEN, HEADS, KV_HEADS, FF, LAYERS, VOCAB = 256, 4, 2, 512, 2, 1024
HEAD_DIM = HIDDEN // HEADS

# llama.cpp's llama_ftype values for the mixes written here (between them every K-quant
# type: Q2_K has Q2_K, Q3_K and Q6_K tensors; Q3_K_M Q3_K, Q4_K, Q5_K and Q6_K), by file name.
MIXES = {"q2_k": 10, "q3_k_m": 12, "q4_k_m": 15}


class GgufWriter:
    """GGUF version 3 by the format's definition: header, key/value pairs, tensor infos, then
    the tensors' data (F32, or F16 for float16 arrays), each aligned to 32 bytes."""
    UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9

    def __init__(self):
        self.kv = []
        self.tensors = []

    @staticmethod
    def _str(s):
        b = s.encode("utf-8")
        return struct.pack("<Q", len(b)) + b

    def add(self, key, vtype, value, elem_type=None):
        self.kv.append((key, vtype, value, elem_type))

    def _value(self, vtype, value, elem_type):
        if vtype == self.STRING:
            return self._str(value)
        if vtype == self.ARRAY:
            out = struct.pack("<IQ", elem_type, len(value))
            return out + b"".join(self._value(elem_type, v, None) for v in value)
        fmt = {self.UINT32: "<I", self.INT32: "<i", self.FLOAT32: "<f", self.BOOL: "<?"}[vtype]
        return struct.pack(fmt, value)

    def tensor(self, name, array):
        dtype = np.float16 if array.dtype == np.float16 else np.float32
        self.tensors.append((name, np.ascontiguousarray(array, dtype=dtype)))

    def write(self, path):
        out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(self.tensors), len(self.kv)))
        for key, vtype, value, elem_type in self.kv:
            out += self._str(key) + struct.pack("<I", vtype) + self._value(vtype, value, elem_type)
        offset = 0
        for name, array in self.tensors:
            out += self._str(name) + struct.pack("<I", array.ndim)
            out += b"".join(struct.pack("<Q", d) for d in reversed(array.shape))  # ne: row first
            out += struct.pack("<IQ", 1 if array.dtype == np.float16 else 0, offset)  # F16, F32
            offset += (array.nbytes + 31) // 32 * 32
        out += b"\0" * (-len(out) % 32)
        with open(path, "wb") as f:
            f.write(out)
            for _, array in self.tensors:
                f.write(array.tobytes())
                f.write(b"\0" * (-array.nbytes % 32))


def add_vocab(w):
    """The byte-level BPE vocabulary as llama.cpp's converter writes it (tokenizer model gpt2)."""
    tok = json.loads((ENGINE / "llama-gqa" / "tokenizer.json").read_text())
    assert tok["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] == LLAMA3_REGEX
    model = tok["model"]
    reverse = {i: t for t, i in model["vocab"].items()}
    added = {a["id"]: a for a in tok["added_tokens"]}
    tokens, types = [], []
    for i in range(VOCAB):
        if i in added:
            tokens.append(added[i]["content"])
            types.append(3 if added[i]["special"] else 4)  # CONTROL, USER_DEFINED
        elif i in reverse:
            tokens.append(reverse[i])
            types.append(1)  # NORMAL
        else:
            tokens.append(f"[PAD{i}]")
            types.append(5)  # UNUSED
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    w.add("tokenizer.ggml.model", w.STRING, "gpt2")
    w.add("tokenizer.ggml.pre", w.STRING, "llama-bpe")
    w.add("tokenizer.ggml.tokens", w.ARRAY, tokens, w.STRING)
    w.add("tokenizer.ggml.token_type", w.ARRAY, types, w.INT32)
    w.add("tokenizer.ggml.merges", w.ARRAY, merges, w.STRING)
    w.add("tokenizer.ggml.bos_token_id", w.UINT32, 0)
    w.add("tokenizer.ggml.eos_token_id", w.UINT32, 1)
    w.add("tokenizer.ggml.add_bos_token", w.BOOL, True)


def write_f32_model(path):
    rng = np.random.default_rng(39)
    w = GgufWriter()
    w.add("general.architecture", w.STRING, "llama")
    w.add("general.name", w.STRING, "kquant-llama")
    w.add("general.file_type", w.UINT32, 0)
    w.add("llama.context_length", w.UINT32, 512)
    w.add("llama.embedding_length", w.UINT32, HIDDEN)
    w.add("llama.block_count", w.UINT32, LAYERS)
    w.add("llama.feed_forward_length", w.UINT32, FF)
    w.add("llama.attention.head_count", w.UINT32, HEADS)
    w.add("llama.attention.head_count_kv", w.UINT32, KV_HEADS)
    w.add("llama.rope.freq_base", w.FLOAT32, 10000.0)
    w.add("llama.rope.dimension_count", w.UINT32, HEAD_DIM)
    w.add("llama.attention.layer_norm_rms_epsilon", w.FLOAT32, 1e-5)
    w.add("llama.vocab_size", w.UINT32, VOCAB)
    add_vocab(w)

    def matrix(rows, cols, gain=1.0):
        return rng.normal(0.0, gain / np.sqrt(cols), size=(rows, cols))

    def norm(n):
        return 1.0 + 0.1 * rng.normal(size=n)

    w.tensor("token_embd.weight", rng.normal(0.0, 1.0, size=(VOCAB, HIDDEN)))
    for i in range(LAYERS):
        b = f"blk.{i}."
        w.tensor(b + "attn_norm.weight", norm(HIDDEN))
        w.tensor(b + "attn_q.weight", matrix(HIDDEN, HIDDEN))
        w.tensor(b + "attn_k.weight", matrix(KV_HEADS * HEAD_DIM, HIDDEN))
        w.tensor(b + "attn_v.weight", matrix(KV_HEADS * HEAD_DIM, HIDDEN))
        w.tensor(b + "attn_output.weight", matrix(HIDDEN, HIDDEN))
        w.tensor(b + "ffn_norm.weight", norm(HIDDEN))
        w.tensor(b + "ffn_gate.weight", matrix(FF, HIDDEN))
        w.tensor(b + "ffn_up.weight", matrix(FF, HIDDEN))
        w.tensor(b + "ffn_down.weight", matrix(HIDDEN, FF))
    w.tensor("output_norm.weight", norm(HIDDEN))
    w.tensor("output.weight", matrix(VOCAB, HIDDEN, 6.0))
    w.write(path)


class LlamaCppQuantizer:
    """llama.cpp's llama_model_quantize (what its llama-quantize tool runs), from the shared
    libraries in `bins`."""

    def __init__(self, bins):
        bins = Path(bins)
        ctypes.CDLL(str(bins / "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
        ctypes.CDLL(str(bins / "libggml.v0.5.0.so"), mode=ctypes.RTLD_GLOBAL)
        self.llama = ctypes.CDLL(str(bins / "libllama.v0.5.0.so"))

        class Params(ctypes.Structure):  # llama_model_quantize_params; the first two fields
            _fields_ = [("nthread", ctypes.c_int32), ("ftype", ctypes.c_int32),  # are set here
                        ("rest", ctypes.c_uint8 * 248)]

        self.llama.llama_model_quantize_default_params.restype = Params
        self.llama.llama_model_quantize.restype = ctypes.c_uint32
        self.llama.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                                    ctypes.POINTER(Params)]
        self.llama.llama_backend_init()

    def quantize(self, src, dst, ftype, threads=2):
        params = self.llama.llama_model_quantize_default_params()
        params.nthread = threads
        params.ftype = ftype
        rc = self.llama.llama_model_quantize(str(src).encode(), str(dst).encode(),
                                             ctypes.byref(params))
        if rc != 0:
            raise RuntimeError(f"llama_model_quantize {src} -> {dst} (ftype {ftype}): {rc}")


def main():
    quantizer = LlamaCppQuantizer(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        f32 = os.path.join(tmp, "kquant-llama.f32.gguf")
        write_f32_model(f32)
        for name, ftype in MIXES.items():
            out = HERE / f"kquant-llama.{name}.gguf"
            quantizer.quantize(f32, out, ftype)
            print(out.name, out.stat().st_size, "bytes")


if __name__ == "__main__":
    main()

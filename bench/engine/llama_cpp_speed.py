#!/usr/bin/python3
"""llama.cpp's prefill and single-stream decode speed on a GGUF file, measured in-process through
its C API (as llama-bench does): a prompt of random token ids decoded in one batch (prefill
tokens/s), then tokens decoded one at a time, each the greedy choice of the step before (decode
tokens/s), as `tensorfleet engine bench` measures the engine.

    llama_cpp_speed.py MODEL.gguf --bins BINS [--threads 2] [--prompt 128] [--gen 64]
                       [--repeat 3]

BINS: llama.cpp's shared libraries (libllama, libggml, its CPU backends libggml-cpu-*.so), as
npm's @node-llama-cpp/linux-x64 package has them in bins/linux-x64. Prints one JSON line.
Needs numpy.
"""
import argparse
import ctypes
import json
import time
from pathlib import Path

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--bins", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    bins = Path(args.bins)
    ctypes.CDLL(str(bins / "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    ggml = ctypes.CDLL(str(bins / "libggml.v0.5.0.so"), mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(str(bins / "libllama.v0.5.0.so"))
    ggml.ggml_backend_load_all_from_path.argtypes = [ctypes.c_char_p]
    ggml.ggml_backend_load_all_from_path(str(bins).encode())  # the CPU backend for this CPU

    # Parameter structs are passed through as llama.cpp returns them (by value; their sizes are
    # bounded here, not known): only fields whose offsets have long been fixed are set.
    class ModelParams(ctypes.Structure):
        _fields_ = [("raw", ctypes.c_uint8 * 512)]

    class ContextParams(ctypes.Structure):  # n_ctx, n_batch, n_ubatch first; the thread
        _fields_ = [("n_ctx", ctypes.c_uint32), ("n_batch", ctypes.c_uint32),  # counts a few
                    ("n_ubatch", ctypes.c_uint32), ("words", ctypes.c_int32 * 125)]  # words on

    class Batch(ctypes.Structure):  # llama_batch
        _fields_ = [("n_tokens", ctypes.c_int32), ("token", ctypes.c_void_p),
                    ("embd", ctypes.c_void_p), ("pos", ctypes.c_void_p),
                    ("n_seq_id", ctypes.c_void_p), ("seq_id", ctypes.c_void_p),
                    ("logits", ctypes.c_void_p)]

    lib.llama_model_default_params.restype = ModelParams
    lib.llama_context_default_params.restype = ContextParams
    lib.llama_model_load_from_file.restype = ctypes.c_void_p
    lib.llama_model_load_from_file.argtypes = [ctypes.c_char_p, ModelParams]
    lib.llama_init_from_model.restype = ctypes.c_void_p
    lib.llama_init_from_model.argtypes = [ctypes.c_void_p, ContextParams]
    lib.llama_batch_get_one.restype = Batch
    lib.llama_batch_get_one.argtypes = [ctypes.POINTER(ctypes.c_int32), ctypes.c_int32]
    lib.llama_decode.restype = ctypes.c_int32
    lib.llama_decode.argtypes = [ctypes.c_void_p, Batch]
    lib.llama_get_logits_ith.restype = ctypes.POINTER(ctypes.c_float)
    lib.llama_get_logits_ith.argtypes = [ctypes.c_void_p, ctypes.c_int32]
    lib.llama_model_get_vocab.restype = ctypes.c_void_p
    lib.llama_model_get_vocab.argtypes = [ctypes.c_void_p]
    lib.llama_vocab_n_tokens.restype = ctypes.c_int32
    lib.llama_vocab_n_tokens.argtypes = [ctypes.c_void_p]
    lib.llama_free.argtypes = [ctypes.c_void_p]
    lib.llama_log_set.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    quiet = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)(
        lambda level, text, data: None)
    lib.llama_log_set(ctypes.cast(quiet, ctypes.c_void_p), None)
    lib.llama_backend_init()

    model = lib.llama_model_load_from_file(args.model.encode(), lib.llama_model_default_params())
    if not model:
        raise SystemExit(f"llama.cpp could not load {args.model}")
    vocab = lib.llama_vocab_n_tokens(lib.llama_model_get_vocab(model))
    rng = np.random.default_rng(1)

    def decode(ctx, tokens):
        ids = (ctypes.c_int32 * len(tokens))(*tokens)
        if lib.llama_decode(ctx, lib.llama_batch_get_one(ids, len(tokens))) != 0:
            raise SystemExit("llama_decode failed")

    prefill, gen = [], []
    for _ in range(args.repeat):
        params = lib.llama_context_default_params()
        params.n_ctx = args.prompt + args.gen + 16
        params.n_batch = params.n_ubatch = max(args.prompt, 1)
        # n_threads and n_threads_batch: the first two words after n_ubatch that hold the
        # default thread count (GGML_DEFAULT_N_THREADS, 4); other fields sit between them and
        # n_ubatch in some versions.
        at = next((i for i in range(8) if params.words[i] == 4 and params.words[i + 1] == 4),
                  None)
        if at is None:
            raise SystemExit("cannot find n_threads in this llama.cpp's llama_context_params")
        params.words[at] = params.words[at + 1] = args.threads
        ctx = lib.llama_init_from_model(model, params)
        prompt = [int(t) for t in rng.integers(300, vocab, size=args.prompt)]
        start = time.perf_counter()
        decode(ctx, prompt)
        prefill.append(args.prompt / (time.perf_counter() - start))
        logits = np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx, -1), shape=(vocab,))
        token = int(np.argmax(logits))
        start = time.perf_counter()
        for _ in range(args.gen):
            decode(ctx, [token])
            token = int(np.argmax(np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx, -1),
                                                        shape=(vocab,))))
        gen.append(args.gen / (time.perf_counter() - start))
        lib.llama_free(ctx)
    print(json.dumps({"model": args.model, "threads": args.threads, "prompt": args.prompt,
                      "gen": args.gen, "prefill_tok_s": [round(v, 1) for v in prefill],
                      "decode_tok_s": [round(v, 1) for v in gen]}))


if __name__ == "__main__":
    main()

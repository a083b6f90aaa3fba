#!/usr/bin/env python3
"""Writes K-quant blocks made and read back by ggml itself, so that the engine's reading of the
Q2_K .. Q6_K layouts is checked against the library that writes them, not against our own
reading of the format.

For each type: ROWS rows of COLS float32 values (normal, with a few rows of wider spread and one
of zeros), quantised by ggml_quantize_chunk (no importance matrix: ggml's reference quantiser),
and the float32 values that ggml's dequantize_row_<type> gives back for them.

    /usr/bin/python3 tests/data/engine/kquant/make_kquant_blocks.py /path/to/libggml-base.so

libggml-base.so comes from npm's @node-llama-cpp/linux-x64 package (prebuilt llama.cpp; see
README.md for the version the committed files were made with). Needs numpy.
"""
import ctypes
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROWS, COLS = 6, 512
TYPES = {"q2_k": 10, "q3_k": 11, "q4_k": 12, "q5_k": 13, "q6_k": 14}


def main():
    lib = ctypes.CDLL(sys.argv[1])
    lib.ggml_quantize_chunk.restype = ctypes.c_size_t
    lib.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                        ctypes.c_void_p]
    lib.ggml_row_size.restype = ctypes.c_size_t
    lib.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    rng = np.random.default_rng(2026)
    x = rng.normal(0.0, 0.02, size=(ROWS, COLS)).astype(np.float32)
    x[1] *= 50.0                                         # a wide row
    x[2] = rng.uniform(-1.0, 3.0, size=COLS)             # skewed: mins matter
    x[3] = 0.0                                           # zeros
    x[4, ::7] = rng.normal(0.0, 1.0, size=x[4, ::7].shape)  # outliers in a narrow row
    for name, type_id in TYPES.items():
        row_bytes = lib.ggml_row_size(type_id, COLS)
        blocks = ctypes.create_string_buffer(row_bytes * ROWS)
        written = lib.ggml_quantize_chunk(type_id, x.ctypes.data, blocks, 0, ROWS, COLS, None)
        assert written == row_bytes * ROWS, (name, written)
        dequantize = getattr(lib, "dequantize_row_" + name[:-1] + "K")
        dequantize.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        back = np.zeros((ROWS, COLS), dtype=np.float32)
        dequantize(blocks, back.ctypes.data, ROWS * COLS)
        (HERE / (name + ".blocks")).write_bytes(blocks.raw)
        (HERE / (name + ".f32")).write_bytes(back.astype("<f4").tobytes())
        err = np.abs(back - x).max(axis=1)
        print(name, row_bytes, "bytes a row; largest error per row:", " ".join("%.3g" % e for e in err))
    (HERE / "source.f32").write_bytes(x.astype("<f4").tobytes())


if __name__ == "__main__":
    main()

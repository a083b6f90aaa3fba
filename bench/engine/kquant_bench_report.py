#!/usr/bin/python3
"""Summarises bench/run_kquant_bench.sh's rounds: per model, each round's prefill and decode
tokens/s for the engine, llama.cpp and (where it ran) ik_llama.cpp, the engine's ratio to the
faster of the others, and each side's decode share of the roofline (tokens/s times the bytes of weights a decode step reads, over membw's read bandwidth
in that round). A decode step reads every weight matrix once; of the token embedding only one
row, so it is not counted.

    kquant_bench_report.py RESULTS_DIR MODELS_DIR MIX
"""
import json
import os
import statistics
import struct
import sys

BLOCK = {0: (1, 4), 1: (1, 2), 8: (32, 34), 10: (256, 84), 11: (256, 110), 12: (256, 144),
         13: (256, 176), 14: (256, 210), 30: (1, 2)}


def decode_bytes(path):
    """Bytes of every tensor but token_embd.weight, from the GGUF header."""
    with open(path, "rb") as f:
        def rd(fmt):
            return struct.unpack(fmt, f.read(struct.calcsize(fmt)))

        def rstr():
            return f.read(rd("<Q")[0])

        def skip(t):
            sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
            if t == 8:
                rstr()
            elif t == 9:
                et, n = rd("<IQ")
                if et in sizes:
                    f.read(sizes[et] * n)
                else:
                    for _ in range(n):
                        skip(et)
            else:
                f.read(sizes[t])
        f.read(8)
        n_tensors, n_kv = rd("<QQ")
        for _ in range(n_kv):
            rstr()
            skip(rd("<I")[0])
        total = 0
        for _ in range(n_tensors):
            name = rstr().decode()
            dims = rd("<I")[0]
            elements = 1
            for d in rd("<%dQ" % dims):
                elements *= d
            t = rd("<I")[0]
            rd("<Q")
            per, size = BLOCK[t]
            if name != "token_embd.weight":
                total += elements // per * size
        return total


def main():
    out, models, mix = sys.argv[1], sys.argv[2], sys.argv[3]
    for size in sorted(os.listdir(out)):
        model = os.path.join(models, f"llama-{size}-{mix}.gguf")
        weights = decode_bytes(model)
        print(f"\nllama-{size} {mix.upper()}: {os.path.getsize(model) / 1e6:.0f} MB, "
              f"a decode step reads {weights / 1e6:.0f} MB of weights")
        sides = ["tensorfleet", "llama.cpp", "ik_llama.cpp"]
        print("round  membw GB/s | prefill tok/s: " + " / ".join(sides) + ", ratio | decode tok/s:"
              " " + " / ".join(sides) + ", ratio | decode roofline: " + " / ".join(sides))
        rows = []
        for rnd in sorted(os.listdir(os.path.join(out, size)), key=int):
            d = os.path.join(out, size, rnd)
            bw = json.load(open(os.path.join(d, "membw.json")))["gb_per_s"]
            speeds = {}
            tf = json.load(open(os.path.join(d, "tensorfleet.json")))
            speeds["tensorfleet"] = (tf["prefill"]["tokens_per_second"],
                                     tf["decode"][0]["tokens_per_second"])
            lc = json.load(open(os.path.join(d, "llama.cpp.json")))
            speeds["llama.cpp"] = (lc["prefill_tok_s"][0], lc["decode_tok_s"][0])
            ik_path = os.path.join(d, "ik_llama.cpp.json")
            if os.path.exists(ik_path):
                tests = json.load(open(ik_path))
                pp = next(t["avg_ts"] for t in tests if t["n_prompt"] > 0 and t["n_gen"] == 0)
                tg = next(t["avg_ts"] for t in tests if t["n_gen"] > 0 and t["n_prompt"] == 0)
                speeds["ik_llama.cpp"] = (pp, tg)
            rows.append((bw, speeds))

            def cells(i):
                vals = [speeds[s][i] for s in sides if s in speeds]
                best_other = max(speeds[s][i] for s in speeds if s != "tensorfleet")
                return " / ".join("%.1f" % v for v in vals) + ", %.2f" % (
                    speeds["tensorfleet"][i] / best_other)

            roof = " / ".join("%.0f%%" % (100 * speeds[s][1] * weights / 1e9 / bw)
                              for s in sides if s in speeds)
            print("%5s %10.1f | %s | %s | %s" % (rnd, bw, cells(0), cells(1), roof))
        for i, what in ((0, "prefill"), (1, "decode")):
            tf = statistics.median(r[1]["tensorfleet"][i] for r in rows)
            others = {s: statistics.median(r[1][s][i] for r in rows if s in r[1])
                      for s in sides[1:] if any(s in r[1] for r in rows)}
            print("median %s: tensorfleet %.1f, " % (what, tf) + ", ".join(
                "%s %.1f" % kv for kv in others.items()) + "; tensorfleet / the faster: %.2f" % (
                tf / max(others.values())))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The inference engine benchmark's table, from the raw results of bench/run_engine_bench.sh.

    engine_bench_report.py --weights FILE.gguf   # JSON: bytes of weights read per decode token
    engine_bench_report.py --results DIR         # the Markdown table of a run

Bytes per token: every tensor of the GGUF except the token embedding, of which a decode step
reads one row. The decode roofline is the measured read bandwidth over those bytes: the speed
at which one stream would decode if reading the weights were all it did.
"""

import argparse
import glob
import json
import os
import sys


def weights_json(path):
    from gguf import GGUFReader  # llama.cpp's gguf-py

    r = GGUFReader(path)
    total = sum(int(t.n_bytes) for t in r.tensors)
    embed = sum(int(t.n_bytes) for t in r.tensors if t.name == "token_embd.weight")
    params = sum(int(t.n_elements) for t in r.tensors)
    return {"file": path, "tensor_bytes": total, "bytes_per_token": total - embed,
            "parameters": params}


def load(path):
    with open(path) as f:
        return json.load(f)


def llama_bench(path):
    """(prefill, decode) tokens/s from llama-bench's JSON."""
    pp = tg = None
    for row in load(path):
        if row["n_prompt"] > 0 and row["n_gen"] == 0:
            pp = row["avg_ts"]
        elif row["n_gen"] > 0 and row["n_prompt"] == 0:
            tg = row["avg_ts"]
    return pp, tg


def batched(path):
    """{sequences: total decode tokens/s} from llama-batched-bench's JSON lines."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                row = json.loads(line)
                out[row["pl"]] = row["speed_tg"]
    return out


def ours(path):
    j = load(path)
    decode = {d["streams"]: d["tokens_per_second"] for d in j["decode"]}
    prefill = j["prefill"]["tokens_per_second"] if j.get("prefill") else None
    return prefill, decode, j


def fmt(v, digits=1):
    return "-" if v is None else f"{v:,.{digits}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def results_table(d):
    run = load(os.path.join(d, "run.json"))
    end_path = os.path.join(d, "run-end.json")
    end = load(end_path) if os.path.exists(end_path) else {}
    bw = load(os.path.join(d, "membw.json"))
    gbps = bw["gb_per_s"]
    print(f"Run of {run['date']}: {run['cpu']}, {run['cpus']} CPUs, {run['threads']} threads for "
          f"both engines; load average {run['load_before']} before, "
          f"{end.get('load_after', '?')} after.")
    print(f"llama.cpp {run['llama_cpp_commit'][:10]}, tensorfleet {run['tensorfleet_commit']}.")
    print(f"Memory read bandwidth: {gbps:.1f} GB/s (best of {bw['passes']} passes over "
          f"{bw['mib']} MiB; all: {', '.join(f'{x:.1f}' for x in bw['all'])}).")
    print()
    print("| model | weights | engine | prefill tok/s | decode tok/s, 1 stream | 4 streams "
          "| 16 streams | 64 streams | 16 / 1 | share of roofline (1 stream) |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    notes = []
    for size in run["sizes"].split():
        for typ in ("f16", "q8_0"):
            tag = f"{size}-{typ}"
            wpath = os.path.join(d, tag + ".weights.json")
            if not os.path.exists(wpath):
                continue
            w = load(wpath)
            roof = gbps * 1e9 / w["bytes_per_token"]
            label = (f"{size} ({w['parameters'] / 1e6:,.0f}M)", typ.upper())
            pp, tg = llama_bench(os.path.join(d, tag + ".llama-bench.json"))
            bb = batched(os.path.join(d, tag + ".batched.jsonl"))
            peer = [pp, tg, bb.get(4), bb.get(16), bb.get(64)]
            print(f"| {label[0]} | {label[1]} | llama.cpp | " +
                  " | ".join(fmt(v) for v in peer) +
                  f" | {fmt(ratio(bb.get(16), tg), 2)}x | {fmt(100 * tg / roof if tg else None, 0)}% "
                  f"of {roof:,.1f} |")
            opath = os.path.join(d, tag + ".tensorfleet.json")
            if not os.path.exists(opath):
                print(f"| | | tensorfleet | not measured | | | | | | |")
                notes.append(f"{tag}: tensorfleet could not run this file: "
                             + last_line(os.path.join(d, tag + ".tensorfleet-gguf.log")))
                continue
            opp, dec, j = ours(opath)
            mine = [opp, dec.get(1), dec.get(4), dec.get(16), dec.get(64)]
            src = j["model"]
            engine = "tensorfleet" if src.endswith(".gguf") else "tensorfleet (safetensors F16)"
            print(f"| | | {engine} | " + " | ".join(fmt(v) for v in mine) +
                  f" | {fmt(ratio(dec.get(16), dec.get(1)), 2)}x | "
                  f"{fmt(100 * dec[1] / roof if dec.get(1) else None, 0)}% |")
            print(f"| | | **ours / llama.cpp** | " +
                  " | ".join(fmt(ratio(a, b), 2) for a, b in zip(mine, peer)) + " | | |")
            notes.append(f"{tag}: tensorfleet ran {src} (weight matrices: "
                         f"{j.get('weights', '?')}; {j['kernels']} kernels, {j['threads']} "
                         f"threads; several streams: {j['streams_mode']})")
            if not src.endswith(".gguf"):
                notes.append(f"{tag}: the GGUF was refused: "
                             + last_line(os.path.join(d, tag + ".tensorfleet-gguf.log")))
    print()
    for n in notes:
        print("- " + n)


def last_line(path):
    try:
        with open(path) as f:
            lines = [l.strip() for l in f if l.strip()]
        return lines[-1] if lines else ""
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--weights", help="a GGUF file")
    g.add_argument("--results", help="a results directory of run_engine_bench.sh")
    args = ap.parse_args()
    if args.weights:
        json.dump(weights_json(args.weights), sys.stdout)
        print()
    else:
        results_table(args.results)


if __name__ == "__main__":
    main()

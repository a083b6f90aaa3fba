#!/usr/bin/python3
"""Every round of bench/engine_decode_ab.sh, and the medians over the rounds.

    decode_ab_report.py --results DIR                  # the Markdown table of a run
    decode_ab_report.py --results DIR --round ROUNDDIR # one line for the progress log

A side's share of the roofline in a round: its tokens/s times the bytes of weights a decode
token reads, over the round's bandwidth: the mean of membw's best pass just before the sides ran
and just after. The ratio of a side
is its tokens/s over the first side's in the same round; the medians are taken over rounds of
those per-round figures (every round counts, none is dropped).
"""

import argparse
import glob
import json
import os
import statistics


def load(path):
    with open(path) as f:
        return json.load(f)


def tokens_per_second(path):
    """Single-stream decode tokens/s from llama-bench's or tensorfleet's JSON; None if absent."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    j = load(path)
    if isinstance(j, list):  # llama-bench
        for row in j:
            if row["n_gen"] > 0 and row["n_prompt"] == 0:
                return row["avg_ts"]
        return None
    for d in j["decode"]:
        if d["streams"] == 1:
            return d["tokens_per_second"]
    return None


def round_figures(rdir, names, bytes_per_token):
    before = load(os.path.join(rdir, "membw.json"))["gb_per_s"]
    after_path = os.path.join(rdir, "membw-after.json")
    after = load(after_path)["gb_per_s"] if os.path.exists(after_path) else None
    gbps = before if after is None else (before + after) / 2
    with open(os.path.join(rdir, "order")) as f:
        order = [names[int(i)] for i in f.read().split()]
    tps = {n: tokens_per_second(os.path.join(rdir, n + ".json")) for n in names}
    share = {}
    for n, v in tps.items():
        known = v is not None and bytes_per_token is not None
        share[n] = v * bytes_per_token / (gbps * 1e9) if known else None
    base = tps[names[0]]
    ratio = {n: None if v is None or not base else v / base for n, v in tps.items()}
    return {"gbps": gbps, "before": before, "after": after, "order": order, "tps": tps,
            "share": share, "ratio": ratio}


def fmt(v, digits=1, suffix=""):
    return "-" if v is None else f"{v:,.{digits}f}{suffix}"


def pct(v):
    return "-" if v is None else f"{100 * v:.0f}%"


def median(values):
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", required=True, help="a results directory of engine_decode_ab.sh")
    ap.add_argument("--round", help="one round's directory: print one line for it")
    args = ap.parse_args()
    run = load(os.path.join(args.results, "run.json"))
    names = [s["name"] for s in run["sides"]]
    wpath = os.path.join(args.results, "weights.json")
    bpt = load(wpath)["bytes_per_token"] if os.path.exists(wpath) else None
    if args.round:
        f = round_figures(args.round, names, bpt)
        parts = [f"membw {f['before']:.1f} / {fmt(f['after'])} GB/s"]
        for n in f["order"]:
            parts.append(f"{n} {fmt(f['tps'][n])} tok/s ({pct(f['share'][n])})")
        print("; ".join(parts))
        return

    rounds = sorted(glob.glob(os.path.join(args.results, "round-*")))
    figs = [round_figures(r, names, bpt) for r in rounds]
    end_path = os.path.join(args.results, "run-end.json")
    end = load(end_path) if os.path.exists(end_path) else {}
    quantize = f", --quantize {run['quantize']}" if run["quantize"] else ""
    print(f"Run of {run['date']}: {run['model']}, {run['threads']} threads, {run['tg']} tokens "
          f"x {run['reps']} runs per side and round{quantize}; "
          f"tensorfleet tree {run['tensorfleet_commit']}; load average {run['load_before']} "
          f"before, {end.get('load_after', '?')} after.")
    if bpt is not None:
        print(f"Bytes of weights per decode token: {bpt / 1e6:,.1f} MB.")
    for s in run["sides"]:
        print(f"- {s['name']}: {s['path']}")
    print()
    others = names[1:]
    head = ["round", "membw before / after", "GB/s (mean)", "order"] + [f"{n} tok/s" for n in names]
    head += [f"{n} roofline" for n in names] + [f"{n} / {names[0]}" for n in others]
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    for i, f in enumerate(figs, 1):
        row = [str(i), f"{f['before']:.1f} / {fmt(f['after'])}", f"{f['gbps']:.1f}",
               " ".join(f["order"])]
        row += [fmt(f["tps"][n]) for n in names] + [pct(f["share"][n]) for n in names]
        row += [fmt(f["ratio"][n], 2) for n in others]
        print("| " + " | ".join(row) + " |")
    row = ["**median**", "", fmt(median(f["gbps"] for f in figs)), ""]
    row += [fmt(median(f["tps"][n] for f in figs)) for n in names]
    row += [f"**{pct(median(f['share'][n] for f in figs))}**" for n in names]
    row += [f"**{fmt(median(f['ratio'][n] for f in figs), 2)}**" for n in others]
    print("| " + " | ".join(row) + " |")
    print()
    for n in others:
        ahead = sum(1 for f in figs if f["ratio"][n] is not None and f["ratio"][n] > 1)
        print(f"- {n} ahead of {names[0]} in {ahead} of {len(figs)} rounds; per-round ratios "
              f"{fmt(min((f['ratio'][n] for f in figs if f['ratio'][n]), default=None), 2)}-"
              f"{fmt(max((f['ratio'][n] for f in figs if f['ratio'][n]), default=None), 2)}.")
    # Sides after the second against each other side after the first (e.g. a change against
    # the build of main, when llama.cpp is the first side).
    for i, a in enumerate(names[2:], 2):
        for b in names[1:i]:
            per = [f["tps"][a] / f["tps"][b] for f in figs if f["tps"][a] and f["tps"][b]]
            if per:
                ahead = sum(1 for r in per if r > 1)
                print(f"- {a} / {b}: median {statistics.median(per):.2f}, per round "
                      f"{', '.join(f'{r:.2f}' for r in per)}; ahead in {ahead} of {len(per)}.")
    missing = [f"round {i} {n}" for i, f in enumerate(figs, 1) for n in names
               if f["tps"][n] is None]
    if missing:
        print(f"- no figure (see the round's .log): {', '.join(missing)}")


if __name__ == "__main__":
    main()

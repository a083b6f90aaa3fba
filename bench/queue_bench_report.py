#!/usr/bin/env python3
"""Summarises the JSON lines of bench/run_queue_bench.sh as a Markdown table.

Throughput rows get their ratio to Redis Streams (appendfsync always and everysec) and, for
tensorfleet, to its target; latency rows show the round-trip percentiles in milliseconds. Each
row also shows the disk's median write+fdatasync time measured just before and just after it
(the "disk" rows run_queue_bench.sh writes around each case), when there is one.

Usage: bench/queue_bench_report.py RESULTS.jsonl
"""
import json
import sys

# messages/s each tensorfleet back end should reach with every batch committed durably.
TARGETS = {"tensorfleet sqlite": 20000, "tensorfleet postgresql": 5000}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def attach_disk(rows):
    """Gives each result row the disk probes around it; returns the result rows."""
    results, before, open_rows = [], None, []
    for r in rows:
        if r["system"].startswith("disk"):
            if r["path"].startswith("before"):
                before, open_rows = r["p50_us"] / 1000, []
            elif r["path"].startswith("after"):
                for o in open_rows:
                    o["disk_after"] = r["p50_us"] / 1000
            continue
        r["disk_before"] = before
        open_rows.append(r)
        results.append(r)
    return results


def disk(r):
    b, a = r.get("disk_before"), r.get("disk_after")
    if b is None and a is None:
        return "-"
    return " / ".join("?" if v is None else f"{v:.2f}" for v in (b, a))


def cpu(r):
    """The benchmark process's CPU per 1,000 messages: server and clients for tensorfleet over
    HTTP (one process), the clients alone where the server is another process."""
    v = r.get("process_cpu_ms_per_1k")
    return f"{v:.1f}" if v else "-"


def redis_rate(rows, fsync):
    for r in rows:
        if r["system"] == "redis streams" and r["kind"] == "throughput" and fsync in r["path"]:
            return r["messages_per_s"]
    return None


def ratio(value, base):
    return f"{value / base:.2f}x" if base else "-"


def main():
    rows = attach_disk(load(sys.argv[1]))
    always, everysec = redis_rate(rows, "always"), redis_rate(rows, "everysec")
    print("| system | path | messages/s | vs Redis (fsync always) | vs Redis (everysec) "
          "| vs target | errors | process CPU ms per 1k messages | disk fdatasync ms before / after |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["kind"] != "throughput":
            continue
        target = TARGETS.get(r["system"])
        versus_target = f"{ratio(r['messages_per_s'], target)} of {target:,}" if target else "-"
        print(f"| {r['system']} | {r['path']} | {r['messages_per_s']:,.0f} "
              f"| {ratio(r['messages_per_s'], always)} | {ratio(r['messages_per_s'], everysec)} "
              f"| {versus_target} | {r['errors']} | {cpu(r)} | {disk(r)} |")
    print()
    print("| system | path | round trips | p50 ms | p90 ms | p99 ms | errors "
          "| disk fdatasync ms before / after |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if r["kind"] != "latency":
            continue
        print(f"| {r['system']} | {r['path']} | {r['messages']:,} | {r['p50_us'] / 1000:.3f} "
              f"| {r['p90_us'] / 1000:.3f} | {r['p99_us'] / 1000:.3f} | {r['errors']} "
              f"| {disk(r)} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Managed jobs on a real server and real workers (bench/run_jobs_bench.sh runs this).

latency:  trivial jobs (`command: "true"`) submitted one after another, each once the previous
          one has ended, then a batch submitted back to back. For each job, from the server's
          own timestamps: submitted (created_at) -> placed (the attempt's created_at) -> running
          (the rank's started_at, which the worker reports once the process has been started).
spawn:    the bare cost of starting a process here: posix_spawn + wait of /bin/true and of
          /bin/sh -c true (what `command: "true"` runs).
recovery: a job that counts steps (one per --step-s), writes its checkpoint every --every steps
          and has its checkpoint directory synced every SYNC; its worker is killed with SIGKILL
          (and the job's processes with it, as if the machine died) half-way between two syncs,
          with a second worker up. Measured: kill -> attempt 1 lost (the heartbeat timeout) ->
          attempt 2 running on the other worker, and the steps done again.

Only the standard library; prints a table and writes one JSON line per case to --json.
"""
import argparse
import datetime
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse


def parse_time_ms(text):
    if not text:
        return None
    t = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    return int(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 + 0.5)


def percentile(values, p):
    """The p-th percentile by nearest rank."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-p * len(ordered) // 100))))
    return ordered[rank - 1]


def wait_for(pred, timeout_s, what, interval_s=0.01):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(interval_s)
    raise TimeoutError(f"timed out after {timeout_s} s waiting for {what}")


class Api:
    """The JSON API over one keep-alive connection."""

    def __init__(self, url, token):
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.token = token
        self.conn = None

    def call(self, method, path, body=None):
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                headers = {"Authorization": "Bearer " + self.token}
                data = None
                if body is not None:
                    data = json.dumps(body).encode()
                    headers["Content-Type"] = "application/json"
                self.conn.request(method, path, body=data, headers=headers)
                reply = self.conn.getresponse()
                text = reply.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
                continue
            if reply.status >= 300:
                raise RuntimeError(f"{method} {path}: HTTP {reply.status}: {text[:300]!r}")
            return json.loads(text) if text else None

    def submit(self, spec):
        return self.call("POST", "/v1/jobs", {"spec": spec, "source": "bench.yaml", "code_key": ""})

    def job(self, job_id):
        return self.call("GET", "/v1/jobs/" + job_id)


class Processes:
    """The server and workers this run started, each in a session of its own; stopped at exit."""

    def __init__(self, binary, root):
        self.binary, self.root = binary, root
        self.started = []

    def _spawn(self, argv, log_path):
        log = open(log_path, "ab")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.started.append(p)
        return p

    def server(self, name, heartbeat_timeout):
        data = os.path.join(self.root, name)
        os.makedirs(data)
        p = self._spawn([self.binary, "--data-dir", data, "server", "--port", "0",
                         "--heartbeat-timeout", heartbeat_timeout], os.path.join(data, "server.log"))
        url_file = os.path.join(data, "url")
        wait_for(lambda: os.path.exists(url_file) and open(url_file).read().strip(), 60,
                 "the server's url file")
        url = open(url_file).read().strip()
        token = open(os.path.join(data, "admin-token")).read().strip()
        return p, url, token

    def worker(self, name, url, token, gpus, cpus, heartbeat):
        d = os.path.join(self.root, name)
        os.makedirs(d)
        log_path = os.path.join(d, "worker.log")
        p = self._spawn([self.binary, "--server", url, "--token", token, "worker", "--gpus",
                         str(gpus), "--cpus", str(cpus), "--worker-dir", d, "--address",
                         "127.0.0.1", "--heartbeat", heartbeat, "--grace", "5s"], log_path)
        wait_for(lambda: b"is serving" in open(log_path, "rb").read(), 60, name + " to register",
                 interval_s=0.05)
        node = open(os.path.join(d, "node-id")).read().strip()
        return p, node

    def stop(self, p):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop_all(self):
        for p in reversed(self.started):
            self.stop(p)


def trivial_spec(name):
    return f'name: {name}\ncommand: "true"\nresources: {{cpus: 1}}\n'


def timings(job):
    """(submitted, placed, running) in server ms, from a job's JSON."""
    attempt = job["attempts"][0]
    return (parse_time_ms(job["created_at"]), parse_time_ms(attempt["created_at"]),
            parse_time_ms(attempt["ranks"][0]["started_at"]))


def ended(job):
    return job["state"] in ("succeeded", "failed", "cancelled")


def poll_job(api, job_id, pred, timeout_s, what, interval_s=0.01):
    """The job, once pred(job) holds."""
    def check():
        job = api.job(job_id)
        return job if pred(job) else None
    return wait_for(check, timeout_s, f"{what} ({job_id})", interval_s)


def attempt_running(n):
    """Whether attempt n (1, 2, ...) of a job has its rank running (or past it)."""
    return lambda j: len(j["attempts"]) >= n and bool(j["attempts"][n - 1]["ranks"][0]["started_at"])


def summarize(name, rows, extra=None):
    place = [p - s for s, p, _ in rows]
    start = [r - p for _, p, r in rows]
    total = [r - s for s, _, r in rows]
    out = {"case": name, "jobs": len(rows)}
    for label, values in (("submit_to_running", total), ("submit_to_placed", place),
                          ("placed_to_running", start)):
        out[label + "_p50_ms"] = percentile(values, 50)
        out[label + "_p99_ms"] = percentile(values, 99)
        out[label + "_max_ms"] = max(values)
    out.update(extra or {})
    return out


def run_latency(procs, args):
    _, url, token = procs.server("latency-server", "10s")
    api = Api(url, token)
    procs.worker("latency-worker", url, token, gpus=0, cpus=args.batch, heartbeat="2s")
    results = []

    rows = []
    for i in range(args.warmup + args.jobs):
        job = api.submit(trivial_spec(f"seq-{i}"))
        done = poll_job(api, job["id"], ended, 60, "a trivial job to end")
        if done["state"] != "succeeded":
            raise RuntimeError(f"job {job['id']} {done['state']}: {json.dumps(done)[:500]}")
        if i >= args.warmup:
            rows.append(timings(done))
    results.append(summarize("sequential", rows))

    ids = []
    for i in range(args.batch):
        ids.append(api.submit(trivial_spec(f"batch-{i}"))["id"])
    done = []
    for job_id in ids:
        done.append(poll_job(api, job_id, ended, 120, "a batch job to end", interval_s=0.05))
    rows = [timings(j) for j in done]
    span_s = (max(r for _, _, r in rows) - min(s for s, _, _ in rows)) / 1000
    results.append(summarize("batch", rows, {"starts_per_s": round(len(rows) / span_s, 1),
                                             "span_s": round(span_s, 2)}))
    return results


def run_spawn(n):
    out = {"case": "spawn", "runs": n}
    for label, argv in (("true", ["/bin/true"]), ("sh_c_true", ["/bin/sh", "-c", "true"])):
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            pid = os.posix_spawn(argv[0], argv, os.environ)
            os.waitpid(pid, 0)
            samples.append((time.perf_counter() - t0) * 1000)
        out[label + "_p50_ms"] = round(statistics.median(samples), 3)
        out[label + "_p99_ms"] = round(percentile(samples, 99), 3)
    return out


COUNTER = """name: {name}
command: |
  d="$TENSORFLEET_CHECKPOINT_DIR"
  step=0
  [ -f "$d/step" ] && step=$(cat "$d/step")
  echo "$step" > {marks}/start-$TENSORFLEET_ATTEMPT
  echo "$$" > {marks}/pid-$TENSORFLEET_ATTEMPT
  while true; do
    step=$((step+1))
    echo "$step" >> {marks}/progress-$TENSORFLEET_ATTEMPT
    if [ $((step % {every})) -eq 0 ]; then
      echo "$step" > "$d/step.tmp" && mv "$d/step.tmp" "$d/step"
    fi
    sleep {step_s}
  done
resources: {{gpus: 1, cpus: 1}}
checkpoint: {{sync_interval: {sync}s}}
"""


def read_int(path):
    """The last number in a file the job appends to (a kill may cut the last line short)."""
    with open(path) as f:
        lines = [line for line in f.read().split("\n") if line.strip()]
    return int(lines[-1]) if lines else None


def run_recovery(procs, args, heartbeat_timeout_s, sync_intervals):
    tag = f"hb{heartbeat_timeout_s}"
    _, url, token = procs.server(tag + "-server", f"{heartbeat_timeout_s}s")
    api = Api(url, token)
    workers = {}  # node id -> process
    serial = [0]

    def add_worker():
        serial[0] += 1
        p, node = procs.worker(f"{tag}-worker-{serial[0]}", url, token, gpus=1, cpus=2,
                               heartbeat=args.heartbeat)
        workers[node] = p

    add_worker()
    add_worker()
    results = []
    for sync_s in sync_intervals:
        marks = os.path.join(procs.root, f"{tag}-sync{sync_s}")
        os.makedirs(marks)
        spec = COUNTER.format(name=f"recover-{tag}-s{sync_s}", marks=marks, every=args.every,
                              step_s=args.step_s, sync=sync_s)
        job_id = api.submit(spec)["id"]
        first = poll_job(api, job_id, attempt_running(1), 60, "the first attempt to run")
        node = first["attempts"][0]["ranks"][0]["node"]
        started_ms = parse_time_ms(first["attempts"][0]["ranks"][0]["started_at"])
        # Half-way between the first sync and the second.
        kill_at = started_ms / 1000 + 1.5 * sync_s
        time.sleep(max(0.0, kill_at - time.time()))

        pid = read_int(os.path.join(marks, "pid-1"))
        killed_ms = int(time.time() * 1000)
        workers.pop(node).kill()
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)  # the machine is gone with its worker
        except ProcessLookupError:
            pass
        time.sleep(0.05)
        last_step = read_int(os.path.join(marks, "progress-1"))
        step_rate = last_step / ((killed_ms - started_ms) / 1000)

        second = poll_job(api, job_id, attempt_running(2), 120, "the second attempt to run")
        lost_ms = parse_time_ms(second["attempts"][0]["ended_at"])
        placed_ms = parse_time_ms(second["attempts"][1]["created_at"])
        running_ms = parse_time_ms(second["attempts"][1]["ranks"][0]["started_at"])
        start_2 = os.path.join(marks, "start-2")  # written as the second attempt begins
        wait_for(lambda: os.path.exists(start_2) and read_int(start_2) is not None, 30,
                 "the second attempt's start mark")
        resumed_step = read_int(start_2)
        results.append({
            "case": "recovery", "heartbeat_timeout_s": heartbeat_timeout_s,
            "heartbeat_interval": args.heartbeat, "sync_interval_s": sync_s,
            "killed_after_s": round((killed_ms - started_ms) / 1000, 2),
            "kill_to_lost_ms": lost_ms - killed_ms, "lost_to_placed_ms": placed_ms - lost_ms,
            "placed_to_running_ms": running_ms - placed_ms,
            "kill_to_running_ms": running_ms - killed_ms,
            "steps_at_kill": last_step, "resumed_at_step": resumed_step,
            "steps_redone": last_step - resumed_step,
            "work_lost_s": round((last_step - resumed_step) / step_rate, 2),
            "attempt1_state": second["attempts"][0]["state"],
            "moved": second["attempts"][1]["ranks"][0]["node"] != node,
        })
        api.call("POST", f"/v1/jobs/{job_id}/cancel")
        poll_job(api, job_id, ended, 60, "the cancel to end the job", interval_s=0.05)
        add_worker()  # two workers again for the next case
    return results


def print_table(results):
    for r in results:
        if r["case"] in ("sequential", "batch"):
            line = (f"{r['case']:<10} {r['jobs']:>4} jobs  submit->running p50 "
                    f"{r['submit_to_running_p50_ms']} ms p99 {r['submit_to_running_p99_ms']} ms "
                    f"(submit->placed p50 {r['submit_to_placed_p50_ms']}, placed->running p50 "
                    f"{r['placed_to_running_p50_ms']})")
            if "starts_per_s" in r:
                line += f"  {r['starts_per_s']} starts/s"
            print(line)
        elif r["case"] == "spawn":
            print(f"spawn      posix_spawn+wait /bin/true p50 {r['true_p50_ms']} ms, "
                  f"/bin/sh -c true p50 {r['sh_c_true_p50_ms']} ms")
        else:
            print(f"recovery   heartbeat timeout {r['heartbeat_timeout_s']} s, sync every "
                  f"{r['sync_interval_s']} s: kill->lost {r['kill_to_lost_ms']} ms, lost->placed "
                  f"{r['lost_to_placed_ms']} ms, placed->running {r['placed_to_running_ms']} ms, "
                  f"kill->running {r['kill_to_running_ms']} ms; steps {r['steps_at_kill']} -> "
                  f"resumed at {r['resumed_at_step']}: {r['steps_redone']} redone "
                  f"({r['work_lost_s']} s of work)")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True)
    ap.add_argument("--dir", required=True, help="an empty directory for data and logs")
    ap.add_argument("--jobs", type=int, default=40, help="sequential trivial jobs")
    ap.add_argument("--warmup", type=int, default=3, help="sequential jobs not counted")
    ap.add_argument("--batch", type=int, default=40, help="trivial jobs submitted back to back")
    ap.add_argument("--spawn-runs", type=int, default=200)
    ap.add_argument("--heartbeat-timeouts", default="3,8", help="seconds, comma-separated")
    ap.add_argument("--sync-intervals", default="10,20", help="seconds (10 at least)")
    ap.add_argument("--heartbeat", default="2s", help="the workers' heartbeat interval")
    ap.add_argument("--step-s", default="0.1", help="seconds per step of the recovery job")
    ap.add_argument("--every", type=int, default=5, help="steps between its checkpoints")
    ap.add_argument("--skip", default="", help="comma-separated: latency, spawn, recovery")
    ap.add_argument("--json", help="append one JSON line per case here")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    procs = Processes(os.path.abspath(args.binary), os.path.abspath(args.dir))
    results = []
    try:
        if "latency" not in skip:
            results += run_latency(procs, args)
            print_table(results[-2:])
            procs.stop_all()
            procs.started.clear()
        if "spawn" not in skip:
            results.append(run_spawn(args.spawn_runs))
            print_table(results[-1:])
        if "recovery" not in skip:
            syncs = [int(s) for s in args.sync_intervals.split(",")]
            for hb in (int(h) for h in args.heartbeat_timeouts.split(",")):
                got = run_recovery(procs, args, hb, syncs)
                print_table(got)
                results += got
                procs.stop_all()
                procs.started.clear()
    finally:
        procs.stop_all()
    if args.json:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        with open(args.json, "a") as f:
            for r in results:
                f.write(json.dumps(dict(r, at=stamp)) + "\n")


if __name__ == "__main__":
    main()

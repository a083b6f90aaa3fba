#!/usr/bin/env python3
"""The sweeps' search strategies beside Optuna's samplers (docs/benchmarks/sweeps.md).

    regret_bench.py TENSORFLEET [--seeds 20] [--trials 100] [--functions branin,...]

For each test function and seed, each sampler gets --trials evaluations, one at a time, and the
regret (best value found minus the function's known minimum) is recorded after 25, 50 and 100
trials. tensorfleet's strategies run through `tensorfleet sweep suggest` (ask and tell over JSON
lines: the process is started for every trial, with the trials so far on its stdin); Optuna's
(Debian's python3-optuna) in this process. Prints one JSON line per (function, sampler) with
the median and quartiles of the regret at each checkpoint, then a table.

Functions (minimised): branin (2-d), hartmann6 (6-d), styblinski10 (10-d Styblinski-Tang),
noisy_branin (Branin observed with Gaussian noise of sd 1; its regret is the true value, without
noise, of the point whose observed value was best).
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile

import optuna

optuna.logging.set_verbosity(optuna.logging.WARNING)


def branin(x):
    x1, x2 = x["x1"], x["x2"]
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


HARTMANN_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
              [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
HARTMANN_P = [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
              [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]
HARTMANN_ALPHA = [1.0, 1.2, 3.0, 3.2]


def hartmann6(x):
    v = [x["x%d" % i] for i in range(1, 7)]
    total = 0.0
    for i in range(4):
        inner = sum(HARTMANN_A[i][j] * (v[j] - HARTMANN_P[i][j] * 1e-4) ** 2 for j in range(6))
        total += HARTMANN_ALPHA[i] * math.exp(-inner)
    return -total


def styblinski10(x):
    return sum((v ** 4 - 16 * v * v + 5 * v) / 2 for v in (x["x%d" % i] for i in range(1, 11)))


FUNCTIONS = {
    # name: (function, {param: (low, high)}, minimum, noise sd)
    "branin": (branin, {"x1": (-5, 10), "x2": (0, 15)}, 0.397887, 0),
    "hartmann6": (hartmann6, {"x%d" % i: (0, 1) for i in range(1, 7)}, -3.32237, 0),
    "styblinski10": (styblinski10, {"x%d" % i: (-5, 5) for i in range(1, 11)},
                     -39.16617 * 10, 0),
    "noisy_branin": (branin, {"x1": (-5, 10), "x2": (0, 15)}, 0.397887, 1.0),
}
CHECKPOINTS = (25, 50, 100)


class Tensorfleet:
    def __init__(self, binary, strategy, space_path):
        self.binary, self.strategy, self.space_path = binary, strategy, space_path

    def run(self, f, bounds, n, seed, noise, rng):
        trials, history = [], []
        for _ in range(n):
            lines = "".join(json.dumps(t) + "\n" for t in trials)
            out = subprocess.run(
                [self.binary, "sweep", "suggest", "--space", self.space_path,
                 "--strategy", self.strategy, "--seed", str(seed)],
                input=lines, capture_output=True, text=True, check=True).stdout
            params = json.loads(out)["params"]
            true = f(params)
            observed = true + (rng.gauss(0, noise) if noise else 0)
            trials.append({"params": params, "value": observed})
            history.append((observed, true))
        return history


class Optuna:
    def __init__(self, make):
        self.make = make

    def run(self, f, bounds, n, seed, noise, rng):
        study = optuna.create_study(sampler=self.make(seed))
        history = []
        for _ in range(n):
            trial = study.ask()
            params = {k: trial.suggest_float(k, lo, hi) for k, (lo, hi) in bounds.items()}
            true = f(params)
            observed = true + (rng.gauss(0, noise) if noise else 0)
            study.tell(trial, observed)
            history.append((observed, true))
        return history


def regrets(history, minimum):
    """Regret after each checkpoint: the true value at the best observed point, minus the min."""
    out, best = {}, None
    for i, (observed, true) in enumerate(history, 1):
        if best is None or observed < best[0]:
            best = (observed, true)
        if i in CHECKPOINTS:
            out[i] = best[1] - minimum
    return out


def quartiles(values):
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tensorfleet")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--functions", default=",".join(FUNCTIONS))
    parser.add_argument("--samplers", default="",
                        help="comma-separated names (e.g. 'tensorfleet bayesian'); default all")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="sweep-bench-")
    rows = []
    for name in args.functions.split(","):
        f, bounds, minimum, noise = FUNCTIONS[name]
        space = os.path.join(work, name + ".yaml")
        with open(space, "w") as out:
            out.write("parameters:\n")
            for k, (lo, hi) in bounds.items():
                out.write("  %s: {type: uniform, low: %s, high: %s}\n" % (k, lo, hi))
        samplers = {
            "tensorfleet random": Tensorfleet(args.tensorfleet, "random", space),
            "tensorfleet bayesian": Tensorfleet(args.tensorfleet, "bayesian", space),
            "optuna random": Optuna(lambda s: optuna.samplers.RandomSampler(seed=s)),
            "optuna tpe": Optuna(lambda s: optuna.samplers.TPESampler(seed=s)),
            "optuna tpe multivariate": Optuna(
                lambda s: optuna.samplers.TPESampler(seed=s, multivariate=True)),
        }
        chosen = [n for n in args.samplers.split(",") if n]
        for sampler_name, sampler in samplers.items():
            if chosen and sampler_name not in chosen:
                continue
            per_checkpoint = {c: [] for c in CHECKPOINTS if c <= args.trials}
            for seed in range(args.seeds):
                rng = random.Random(1000 + seed)  # the same noise for every sampler
                history = sampler.run(f, bounds, args.trials, seed, noise, rng)
                for c, r in regrets(history, minimum).items():
                    per_checkpoint[c].append(r)
            row = {"function": name, "sampler": sampler_name, "seeds": args.seeds,
                   "regret": {str(c): quartiles(v) for c, v in per_checkpoint.items()}}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print("%-13s %-24s %s" % ("function", "sampler", "  ".join(
        "regret@%-3d median [q1, q3]  " % c for c in CHECKPOINTS if c <= args.trials)))
    for row in rows:
        cells = []
        for c, (q1, med, q3) in row["regret"].items():
            cells.append("%9.4g [%.3g, %.3g]" % (med, q1, q3))
        print("%-13s %-24s %s" % (row["function"], row["sampler"], "   ".join(cells)))


if __name__ == "__main__":
    sys.exit(main())

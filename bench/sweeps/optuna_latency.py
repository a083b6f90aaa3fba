#!/usr/bin/env python3
"""Optuna's time per suggestion, the peer of bench/sweep_suggest_bench.cc.

    optuna_latency.py [--trials 100,1000] [--dims 6] [--reps 20]

For each history size n: a study with n completed trials of a `dims`-dimensional uniform space
(the same smooth function as the C++ benchmark), then `reps` suggestions, each timed from ask()
through every suggest_float (where Optuna's samplers do their work); one JSON line per sampler
and size, with the median and the 90th percentile in milliseconds.
"""

import argparse
import json
import math
import random
import statistics
import time

import optuna
from optuna.distributions import FloatDistribution
from optuna.trial import create_trial

optuna.logging.set_verbosity(optuna.logging.WARNING)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", default="100,1000")
    parser.add_argument("--dims", type=int, default=6)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    names = ["x%d" % d for d in range(args.dims)]
    dists = {n: FloatDistribution(0, 1) for n in names}
    samplers = {
        "optuna tpe": lambda: optuna.samplers.TPESampler(seed=1),
        "optuna tpe multivariate": lambda: optuna.samplers.TPESampler(seed=1, multivariate=True),
    }
    for n in (int(t) for t in args.trials.split(",")):
        rng = random.Random(99)
        history = []
        for _ in range(n):
            x = {k: rng.random() for k in names}
            value = sum((v - 0.3) ** 2 + 0.1 * math.sin(7 * (v - 0.3)) for v in x.values())
            history.append(create_trial(params=x, distributions=dists, value=value))
        for label, make in samplers.items():
            study = optuna.create_study(sampler=make())
            study.add_trials(history)
            times = []
            for _ in range(args.reps):
                start = time.perf_counter()
                trial = study.ask()
                for k in names:
                    trial.suggest_float(k, 0, 1)
                times.append((time.perf_counter() - start) * 1000)
                study.tell(trial, state=optuna.trial.TrialState.FAIL)  # not learnt from
            times.sort()
            print(json.dumps({"strategy": label, "dims": args.dims, "completed_trials": n,
                              "median_ms": statistics.median(times),
                              "p90_ms": times[min(len(times) - 1, len(times) * 9 // 10)]}),
                  flush=True)


if __name__ == "__main__":
    main()

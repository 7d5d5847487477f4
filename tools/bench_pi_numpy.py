#!/usr/bin/env python3
"""The seeds' π in NumPy: the baseline `scalebench montecarlo --problem pi --backend cpu` is compared
with (docs/benchmarks.md, "Monte Carlo"). It is written the way a newcomer writes it: NumPy's
default generator, two arrays of doubles per batch, a vectorised hit test, one core.

    python3 tools/bench_pi_numpy.py --samples 1e8 [--batch 1e7] [--seed 42] [--reps 3]

Prints the estimate, its standard error and the median points per second over the repeats.
Exit code 4 if the estimate is more than 4 standard errors from π (as scalebench does).
"""
import argparse
import json
import math
import sys
import time

try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit("bench_pi_numpy.py needs NumPy (Debian: apt-get install python3-numpy; run it with /usr/bin/python3)")


def count(text):
    value = float(text)
    if value < 1 or value != math.floor(value):
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1 (got {text!r})")
    return int(value)


def estimate_pi(samples, batch, seed):
    rng = np.random.default_rng(seed)
    hits = 0
    done = 0
    while done < samples:
        n = min(batch, samples - done)
        x = rng.random(n)
        y = rng.random(n)
        hits += int(np.count_nonzero(x * x + y * y < 1.0))
        done += n
    return hits


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=count, default=count("1e8"), help="points (default 1e8)")
    ap.add_argument("--batch", type=count, default=count("1e7"), help="points per NumPy batch (default 1e7)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--reps", type=count, default=3, help="timed repeats; the median is reported (default 3)")
    ap.add_argument("--json", help="also write the result as JSON to this file")
    args = ap.parse_args()

    times = []
    hits = 0
    for _ in range(args.reps):
        t0 = time.perf_counter()
        hits = estimate_pi(args.samples, args.batch, args.seed)
        times.append(time.perf_counter() - t0)
    median = sorted(times)[len(times) // 2]
    p = hits / args.samples
    est = 4 * p
    se = 4 * math.sqrt(p * (1 - p) / args.samples)
    z = (est - math.pi) / se if se > 0 else float("inf")
    rate = args.samples / median
    print(f"numpy pi: samples {args.samples}  estimate {est:.10f} +- {se:.3g}  z = {z:.2f}  "
          f"median {median:.4f} s  {rate:.4g} samples/s (numpy {np.__version__}, one core)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"samples": args.samples, "estimate": est, "std_error": se, "z": z, "median_s": median,
                       "samples_per_s": rate, "numpy": np.__version__, "times_s": times}, f, indent=2)
    return 0 if abs(z) <= 4 else 4


if __name__ == "__main__":
    sys.exit(main())

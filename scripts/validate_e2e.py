#!/usr/bin/env python3
"""End-to-end check of kcast synth + predict against NeuSight's measured model latencies.

For every run in data/measured/neusight_e2e.csv, one command: `kcast synth <synth_args> --gpu GPU
--context neusight --format json` (its step_us): the synthesized step predicted on the run's GPU as
NeuSight timed it, each op's framework floor added (their per-node CUDA-event timing puts one in every
node; the floors were fitted on NeuSight's per-op corpus, not on these labels; --no-context: without).
Prints per-run and per-GPU errors. Absolute mode: the model never saw these end-to-end numbers.

usage: scripts/validate_e2e.py [--kcast build/kcast] [--model MODEL.json] [--no-context]
"""
import argparse
import csv
import json
import os
import re
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kcast", default=os.path.join(ROOT, "build", "kcast"))
    ap.add_argument("--model", default="")
    ap.add_argument("--no-context", action="store_true", help="predict GPU time only (no framework floor)")
    ap.add_argument("--labels", default=os.path.join(ROOT, "data", "measured", "neusight_e2e.csv"))
    a = ap.parse_args()
    per_gpu = {}
    with open(a.labels) as f:
        runs = list(csv.DictReader(f))
    # A multi-GPU run (neusight_e2e_parallel.csv) names its parallelism after the model.
    names = [r["model"] + "".join(f" {p}{n}" for p, n in re.findall(r"--(tp|pp|dp) (\d+)", r["synth_args"]))
             for r in runs]
    width = max([11] + [len(n) + 1 for n in names])
    print(f"{'model':<{width}} {'mode':<5} {'seq':>4} {'b':>3} {'gpu':<24} {'measured ms':>11} {'predicted':>10} "
          f"{'err%':>6}")
    for r, name in zip(runs, names):
        # One command per run, as a user would type it.
        cmd = [a.kcast, "synth"] + shlex.split(r["synth_args"]) + ["--gpu", r["gpu"], "--format", "json", "-o", os.devnull]
        if not a.no_context:
            cmd += ["--context", "neusight"]
        if a.model:
            cmd += ["--cost-model", a.model]
        out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        pred_ms = out[0]["step_us"] / 1000.0
        meas = float(r["e2e_ms"])
        err = (pred_ms - meas) / meas
        per_gpu.setdefault(r["gpu"], []).append(abs(err))
        print(f"{name:<{width}} {r['mode']:<5} {r['seq']:>4} {r['batch']:>3} {r['gpu']:<24} {meas:>11.1f} {pred_ms:>10.1f} {100*err:>6.1f}")
    print()
    print(f"{'gpu':<24} {'runs':>4} {'median |err|%':>14} {'mean |err|%':>12}")
    for g, e in sorted(per_gpu.items()):
        print(f"{g:<24} {len(e):>4} {100*statistics.median(e):>14.1f} {100*statistics.mean(e):>12.1f}")


if __name__ == "__main__":
    sys.exit(main())

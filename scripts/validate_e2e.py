#!/usr/bin/env python3
"""End-to-end check of kcast synth + predict against NeuSight's measured model latencies.

For every run in data/measured/neusight_e2e.csv: `kcast synth <synth_args>` writes the kernel list,
each row gets the NeuSight measurement context of its op family (their per-node CUDA-event timing
puts a framework floor in every node: that floor was fitted on the per-op corpus, not on these
labels), and `kcast predict --mode absolute --with-context` predicts it on the run's GPU.
Prints per-run and per-GPU errors. Absolute mode: the model never saw these end-to-end numbers.

usage: scripts/validate_e2e.py [--kcast build/kcast] [--model MODEL.json] [--no-context]
"""
import argparse
import csv
import io
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Which NeuSight per-op corpus measured the op family a kernel class belongs to.
CONTEXT_OF_CLASS = {"gemm": "neusight:linear", "elementwise": "neusight:add", "softmax": "neusight:softmax",
                    "normalization": "neusight:ln", "reduction": "neusight:add", "embedding": "neusight:add",
                    "attention": "neusight:bmm", "conv": "neusight:conv"}


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
    with tempfile.TemporaryDirectory() as tmp:
        for r, name in zip(runs, names):
            kl = os.path.join(tmp, "k.csv")
            subprocess.run([a.kcast, "synth"] + shlex.split(r["synth_args"]) + ["-o", kl], check=True)
            with open(kl) as f:
                rows = list(csv.DictReader(f))
            if not a.no_context:
                for row in rows:
                    batched = row["class"] == "gemm" and row.get("batch") not in ("", "1")
                    row["context"] = "neusight:bmm" if batched else CONTEXT_OF_CLASS.get(row["class"], "neusight:add")
            with open(kl, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
                w.writeheader()
                w.writerows(rows)
            cmd = [a.kcast, "predict", "--kernels", kl, "--gpu", r["gpu"], "--mode", "absolute", "--format", "json"]
            if not a.no_context:
                cmd.append("--with-context")
            if a.model:
                cmd += ["--model", a.model]
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            pred_ms = out["predictions"][0]["total_us"] / 1000.0
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

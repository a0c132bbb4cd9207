#!/usr/bin/env python3
"""Builds mixed_ops.csv, the predict/whatif test fixture: a deterministic sample of real measured
kernels from data/measured/ (NeuSight ops on five GPUs, FP32; aiconfigurator GEMMs on A100/H100,
BF16/FP8), up to PER rows per (gpu, class, context-op), every k-th row so shapes spread out.

Regenerate from the repository root:  python3 tests/data/predict/make_mixed_ops.py
"""
import csv
import os

ROOT = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(ROOT, "..", "..", ".."))
PER = 6
SOURCES = ["neusight_ops.csv", "aiconfigurator_a100_bf16.csv", "aiconfigurator_h100_fp8.csv"]
COLUMNS = ["name", "class", "dtype", "batch", "m", "n", "k", "flops", "bytes", "count", "duration_us",
           "gpu", "context"]

out = []
for src in SOURCES:
    with open(os.path.join(REPO, "data", "measured", src), newline="") as f:
        rows = list(csv.DictReader(f))
    groups = {}
    for r in rows:
        groups.setdefault((r["gpu"], r["class"], r.get("context", "")), []).append(r)
    for key in sorted(groups):
        g = groups[key]
        step = max(1, len(g) // PER)
        out.extend(g[::step][:PER])

with open(os.path.join(ROOT, "mixed_ops.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(out)
print(len(out), "rows")

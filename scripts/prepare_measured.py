#!/usr/bin/env python3
"""Convert the public measurements in ../shared/data into kcast kernel lists (data/measured/).

Reproducible: `python3 scripts/prepare_measured.py [SHARED_DATA_DIR]`. Subsamples with a fixed seed.
Each output row carries `context`, the measurement setup, so calibration can fit that setup's
framework/host floor separately from the GPU's own kernel floor (MODEL-NOTES.md finding 5).
"""
import csv
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data")
OUT = os.path.join(ROOT, "data", "measured")
COLS = ["name", "class", "dtype", "batch", "m", "n", "k", "flops", "bytes", "grid_x", "grid_y",
        "grid_z", "block_x", "block_y", "block_z", "count", "duration_us", "gpu", "context"]
AICONF_PER_FILE = 6000


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    print(f"wrote {path}: {len(rows)} rows")


def aiconfigurator():
    for fname, dt in [("a100_sxm-bf16.csv", "bf16"), ("h100_sxm-bf16.csv", "bf16"), ("h100_sxm-fp8.csv", "fp8")]:
        with open(os.path.join(SHARED, "aiconfigurator-gemm", fname)) as f:
            src = list(csv.DictReader(f))
        rng = random.Random(20261129)
        rows = rng.sample(src, min(AICONF_PER_FILE, len(src)))
        out = []
        for r in rows:
            out.append({"name": "cublas_gemm", "class": "gemm", "dtype": dt, "batch": 1,
                        "m": r["m"], "n": r["n"], "k": r["k"], "count": 1,
                        "duration_us": f"{float(r['latency_ms']) * 1000:.4f}", "gpu": r["device"],
                        # BF16 rows are plain kernel times (no framework floor); the FP8 path times input
                        # quantization with the GEMM, so it gets a floor of its own.
                        "context": "" if dt == "bf16" else "aiconfigurator:fp8"})
        write(os.path.join(OUT, "aiconfigurator_" + fname.replace("_sxm", "").replace("-", "_")), out)


def short_name(name):
    """Keep the kernel's identity but drop long template argument lists (file size)."""
    return name if len(name) <= 120 else name[:117] + "..."


BINARY = {"add", "mul", "div", "pow"}          # tensor (+) tensor: 2 reads + 1 write
UNARY = {"addu", "mulu", "divu", "powu", "relu", "gelu", "tanh"}  # 1 read + 1 write


def neusight_row(op, r):
    """One NeuSight measurement (a dict with its CSV's column names) as a kernel-list row, or None."""
    row = {"name": short_name(r["Kernel Name"]), "dtype": "fp32", "count": 1,
           "duration_us": f"{float(r['Latency']) * 1000:.4f}", "gpu": r["Device"],
           "context": "neusight:" + op,
           "grid_x": r["Grid x"], "grid_y": r["Grid y"], "grid_z": r["Grid z"],
           "block_x": r["Block x"], "block_y": r["Block y"], "block_z": r["Block z"]}
    if op in ("bmm", "linear"):
        B, M, N, K = (int(r[c]) for c in "BMNK")
        # NeuSight names the operands (M x N) . (N x K): N is the reduction, the output
        # is M x K. The recorded grids confirm it (for every 128x128 cuBLAS kernel,
        # grid = ceil(K/128) x ceil(M/128)), so kcast's n = K and k = N.
        # linear applies one weight to every batch row: a single GEMM with m = B*M.
        row.update({"class": "gemm", "batch": B if op == "bmm" else 1,
                    "m": M if op == "bmm" else B * M, "n": K, "k": N})
    elif op == "conv":
        B, ci, co, ks, hw, st, pad = (int(r[c]) for c in ["B", "Input_Channel", "Output_Channel",
                                      "Kernel_Szie", "Input_Size", "Stride", "Padding"])
        ho = (hw + 2 * pad - ks) // st + 1
        if ho <= 0:
            return None
        # Implicit GEMM: m = N*Ho*Wo, n = Cout, k = Cin*kh*kw; DRAM traffic is the real
        # tensors (input, filter, output), not the im2col matrix.
        row.update({"class": "conv", "batch": 1, "m": B * ho * ho, "n": co, "k": ci * ks * ks,
                    "bytes": 4 * (B * ci * hw * hw + co * ci * ks * ks + B * co * ho * ho)})
    else:
        B, H = int(r["B"]), int(r["H"])
        elems = B * H
        cls = {"softmax": "softmax", "ln": "normalization"}.get(op, "elementwise")
        nbytes = 4 * elems * (3 if op in BINARY else 2)
        row.update({"class": cls, "bytes": nbytes})
        if op == "softmax":
            # Rows and the reduced length (docs/CLI-EXTENSIONS.md): which softmax
            # kernel PyTorch launches depends on the row length.
            row.update({"m": B, "n": H})
    return row


def neusight():
    out = []
    d = os.path.join(SHARED, "neusight-ops")
    for fname in sorted(os.listdir(d)):
        op = fname[:-4]
        with open(os.path.join(d, fname)) as f:
            out.extend(row for row in (neusight_row(op, r) for r in csv.DictReader(f)) if row)
    write(os.path.join(OUT, "neusight_ops.csv"), out)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    aiconfigurator()
    neusight()

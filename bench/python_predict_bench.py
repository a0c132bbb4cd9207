#!/usr/bin/env python3
"""`kcast.predict` from Python against the `kcast predict` binary on the same 1M-row kernel list
(docs/speed.md; goal: Python within 1.1x of the CLI; each the best of 5 runs, interleaved). Both run
the same code and the Python call passes the list's path: the difference is the process start-up,
the JSON parse and the interpreter's malloc (the binary links jemalloc).

usage: PYTHONPATH=build/python bench/python_predict_bench.py [ROWS] [--kcast build/kcast]
"""
import argparse
import csv
import os
import random
import subprocess
import tempfile
import time

import kcast

GPUS = ["A100-SXM4-80GB", "H100-SXM", "H200", "B200", "V100-SXM2-32GB", "T4", "L4", "L40S", "A10", "MI300X"]


def write_list(path, rows):
    rnd = random.Random(7)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["name", "class", "dtype", "m", "n", "k", "flops", "bytes", "count", "duration_us", "gpu"])
        for i in range(rows):
            if i % 3 == 0:
                m, n, k = rnd.choice([512, 1024, 4096, 8192]), rnd.choice([1024, 4096, 14336]), 4096
                w.writerow(["ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", "gemm", "bf16", m, n, k,
                            2 * m * n * k, 2 * (m * k + k * n + m * n), 1, "", ""])
            else:
                e = rnd.choice([1 << 20, 1 << 22, 1 << 24])
                w.writerow(["vectorized_elementwise_kernel", "elementwise", "bf16", "", "", "", e, 6 * e, 1, "", ""])


def best_of(fns, n=5):
    """The best time of each function over n rounds, the functions interleaved in each round (a shared
    VM's neighbours and page-cache state then weigh on both alike)."""
    t = [[] for _ in fns]
    for _ in range(n):
        for i, fn in enumerate(fns):
            s = time.perf_counter()
            fn()
            t[i].append(time.perf_counter() - s)
    return [min(x) for x in t]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rows", nargs="?", type=int, default=1_000_000)
    ap.add_argument("--kcast", default=os.path.join(os.path.dirname(__file__), "..", "build", "kcast"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "list.csv")
        write_list(path, a.rows)
        cli, py = best_of([
            lambda: subprocess.run([a.kcast, "predict", "--kernels", path, "--gpu", ",".join(GPUS), "--mode", "absolute",
                                    "--format", "json"], check=True, capture_output=True),
            lambda: kcast.predict(path, gpus=GPUS, mode="absolute")])
    print(f"{a.rows} rows on {len(GPUS)} GPUs: CLI {cli:.2f} s, kcast.predict {py:.2f} s ({py / cli:.2f}x)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Transfer accuracy when the source trace names no work, as an Nsight Systems trace does.

Each measured corpus is split by GPU. Every GPU's rows are written twice: as they are (shape, flops,
bytes), and with the work erased (a name, a class, a dtype and a duration, as `kcast import` writes
an Nsight Systems kernel). `kcast predict --mode transfer --with-context` moves both to every other
GPU that measured the same op, and each prediction is scored against that GPU's own measurement.
The work-less rows get the work their source measurement implies (model/inferred_work.h).

usage: scripts/validate_workless.py [KCAST_BINARY] > results.txt
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# corpus -> the columns that name one op (the same op on every GPU)
CORPORA = {
    "torch_mm_square.csv": ("name",),
    "liger_memory_ops.csv": ("op", "context"),
}
WORK = ("batch", "m", "n", "k", "flops", "bytes")


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def transfer(kcast, rows, header, targets, tmp, tag):
    src = os.path.join(tmp, tag + ".csv")
    out = os.path.join(tmp, tag + ".per-kernel.csv")
    with open(src, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    subprocess.run([kcast, "predict", "--kernels", src, "--gpu", ",".join(targets), "--mode", "transfer",
                    "--with-context", "--per-kernel", out, "--format", "csv"],
                   check=True, stdout=subprocess.DEVNULL)
    return rows_of(out)


def canonical(kcast, name):
    out = subprocess.run([kcast, "gpus", name, "--format", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["name"]


def main():
    kcast = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "kcast")
    print("### transfer mode, every measured op moved to every other GPU that measured it; median |error| %")
    print("### of each source->target pair, then the median over pairs (the rows as measured, and the same")
    print("### rows with shape, flops and bytes erased as in an Nsight Systems trace)")
    print("### (unchanged: the source's measurement taken as the target's, for scale: what a row without work")
    print("### got before its work was inferred, the ratio of two launch floors being close to 1)")
    print("%-22s %6s %6s %11s %14s %11s" % ("corpus", "pairs", "ops", "with work", "without work", "unchanged"))
    with tempfile.TemporaryDirectory() as tmp:
        for corpus, key_cols in CORPORA.items():
            path = os.path.join(ROOT, "data", "measured", corpus)
            rows = rows_of(path)
            header = [c for c in rows[0].keys() if c in ("name", "class", "dtype", "duration_us", "gpu", "context", "l2") or c in WORK]
            gpus = sorted({r["gpu"] for r in rows})
            # per-kernel output names GPUs canonically; the corpus as its source wrote them
            corpus_name = {canonical(kcast, g): g for g in gpus}
            measured = {(tuple(r[c] for c in key_cols), r["gpu"]): float(r["duration_us"]) for r in rows}
            errs = {"with": {}, "without": {}, "unchanged": {}}
            n_ops = 0
            for s in gpus:
                mine = [r for r in rows if r["gpu"] == s]
                bare = [{**r, **{c: "" for c in WORK if c in r}} for r in mine]
                targets = [g for g in gpus if g != s]
                for label, data in (("with", mine), ("without", bare)):
                    tag = "%s_%d_%s" % (corpus, gpus.index(s), label)
                    for p in transfer(kcast, data, header, targets, tmp, tag):
                        key = tuple(mine[int(p["row"])][c] for c in key_cols)
                        g = corpus_name[p["target_gpu"]]
                        if (key, g) not in measured:
                            continue
                        m = measured[(key, g)]
                        errs[label].setdefault((s, g), []).append(abs(float(p["predicted_us"]) - m) / m * 100)
                        if label == "with":
                            n_ops += 1
                            d = float(mine[int(p["row"])]["duration_us"])
                            errs["unchanged"].setdefault((s, g), []).append(abs(d - m) / m * 100)
            pair_w = [statistics.median(v) for v in errs["with"].values()]
            pair_wo = [statistics.median(v) for v in errs["without"].values()]
            pair_u = [statistics.median(v) for v in errs["unchanged"].values()]
            print("%-22s %6d %6d %10.1f%% %13.1f%% %10.1f%%" % (corpus, len(pair_w), n_ops, statistics.median(pair_w),
                                                                statistics.median(pair_wo), statistics.median(pair_u)))


if __name__ == "__main__":
    main()

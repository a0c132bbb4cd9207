#!/usr/bin/env bash
# Scores the shipped model, absolute mode, on Liger-Kernel's published forward timings of
# single-kernel memory-bound ops (norms, RoPE, ReLU^2, embedding; data/measured/liger_memory_ops.csv,
# see data/measured/README.md) on A100-SXM4-80GB, A100-PCIe-80GB, H100-SXM, H100-NVL and B200. Nothing
# is fitted on these rows, and none of these boards has a fitted memory-bound row (the NeuSight
# element-wise and norm corpus is FP32 on P100, P4, T4, V100 and A100-PCIe-40GB). Transfer mode moves
# each measurement to every other GPU that timed the same op (same kernel provider, shape and dtype:
# the row's context names the op and the provider) by the model's ratio, across generations.
# usage: scripts/validate_liger.sh [KCAST_BINARY] > results.txt
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-build/kcast}
ROWS=$(mktemp --suffix=.csv)
trap 'rm -f "$ROWS" "$ROWS.lines"' EXIT
echo "### Liger-Kernel benchmark data: single-kernel memory-bound ops (cold L2), shipped model, absolute and transfer"
"$K" validate --measurements data/measured/liger_memory_ops.csv --per-row "$ROWS" | tee "$ROWS.lines"
python3 scripts/transfer_pairs.py "$ROWS.lines"
python3 - data/measured/liger_memory_ops.csv "$ROWS" <<'PY'
import csv, statistics, sys
src = list(csv.DictReader(open(sys.argv[1])))
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(src) == len(rows), "per-row output does not line up with the input rows"
groups = {}
for s, r in zip(src, rows):
    err = abs(float(r["rel_err"])) * 100
    big = "ge32MB" if float(s["bytes"]) >= 32e6 else "lt32MB"
    for key in (("all", "all"), ("class", r["class"]), ("provider", s["provider"]), ("size", big)):
        groups.setdefault(key, []).append(err)
print("### pooled |error| % by class, by who launched the kernel, and by size (bytes moved)")
print("%-9s %-26s %5s %8s %8s" % ("group", "value", "rows", "median%", "mean%"))
for (g, v), e in sorted(groups.items()):
    print("%-9s %-26s %5d %8.1f %8.1f" % (g, v, len(e), statistics.median(e), statistics.fmean(e)))
PY

#!/usr/bin/env bash
# Scores the shipped model, absolute mode, on square torch.mm GEMMs measured by other people on other
# machines (data/measured/torch_mm_square.csv, from zzc0721/torch-performance-test-data; see
# data/measured/README.md). Nothing is fitted on these rows. Unseen GPUs (no row of theirs in any
# fitted corpus): L4, A40, H100-PCIe, P100-SXM2, V100-SXM2-16GB, L20 (its FP32 rows are left out of
# the unseen summary: they are among the boards that set the Ada SGEMM factor in data/archs.csv).
# The others were fitted on other data (A100-PCIe-40GB, P100-PCIe-16GB, P4: NeuSight FP32 ops;
# H100-SXM: aiconfigurator BF16 GEMMs).
# usage: scripts/validate_torch_mm.sh [KCAST_BINARY] > results.txt
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-build/kcast}
# No fitted corpus has a row of these (the L20's FP32 rows set the Ada SGEMM factor: left out below).
UNSEEN="L4,A40,H100-PCIe,P100-SXM2,V100-SXM2-16GB,L20"
ROWS=$(mktemp --suffix=.csv)
trap 'rm -f "$ROWS" "$ROWS.lines"' EXIT
echo "### torch.mm square GEMMs (1024-10240; FP32 on CUDA cores, TF32/FP16/BF16 on tensor cores), shipped model,"
echo "### absolute mode, and transfer mode: each GEMM measured on one GPU moved to every other GPU that timed"
echo "### the same GEMM (same dtype and n) by the model's ratio"
"$K" validate --measurements data/measured/torch_mm_square.csv --per-row "$ROWS" | tee "$ROWS.lines"
python3 - "$ROWS" "$UNSEEN" <<'PY'
import csv, statistics, sys
unseen = set(sys.argv[2].split(","))
groups = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["gpu"] == "L20" and r["dtype"] == "fp32":
        continue  # set the Ada SGEMM factor
    err = abs(float(r["rel_err"])) * 100
    side = "unseen" if r["gpu"] in unseen else "fitted elsewhere"
    for key in ((side, "all"), (side, r["dtype"])):
        groups.setdefault(key, []).append(err)
print("### pooled |error| %, absolute mode: GPUs without a fitted row vs GPUs fitted on other data")
print("%-17s %-6s %5s %8s %8s" % ("boards", "dtype", "rows", "median%", "mean%"))
for (side, dt), v in sorted(groups.items()):
    print("%-17s %-6s %5d %8.1f %8.1f" % (side, dt, len(v), statistics.median(v), statistics.fmean(v)))
PY
python3 scripts/transfer_pairs.py "$ROWS.lines" --onto "$UNSEEN"

#!/usr/bin/env bash
# Scores the shipped model, absolute mode, on a sample of NeuSight's own test set
# (data/measured/neusight_ood.csv, from data/sources/neusight-test/; see data/measured/README.md):
# FP32 bmm, linear, element-wise, softmax and layer-norm ops on shapes outside the training set,
# including the GPUs of NeuSight's out-of-distribution evaluation (NVIDIA L4, H100 80GB HBM3,
# A100 80GB PCIe). Nothing is fitted on these rows; of those three GPUs only the A100 80GB PCIe has
# fitted rows (its convolutions). Grouped per GPU and NeuSight op, to set beside NeuSight's published
# out-of-distribution mean errors (BMM 13.8%, linear 13.9%, element-wise 19.3%, softmax 13.9%,
# layer norm 56.7%). Transfer mode moves each measurement to every other GPU that timed the same op
# and shape by the model's ratio (its pair lines close the output), across generations.
# usage: scripts/validate_ood.sh [KCAST_BINARY] > results.txt
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-build/kcast}
UNSEEN=L4,H100-SXM,A100-PCIe-80GB  # the GPUs of NeuSight's out-of-distribution evaluation
ROWS=$(mktemp --suffix=.csv)
trap 'rm -f "$ROWS" "$ROWS.lines"' EXIT
"$K" validate --measurements data/measured/neusight_ood.csv --per-row "$ROWS" > "$ROWS.lines"
python3 - "$ROWS" "$UNSEEN" <<'PY'
import csv, statistics, sys
OOD = set(sys.argv[2].split(","))
OPS = {"bmm": "bmm", "linear": "linear", "softmax": "softmax", "ln": "layer norm"}
groups = {}
for r in csv.DictReader(open(sys.argv[1])):
    op = r["context"].split(":", 1)[1]
    key = ("unseen GPU" if r["gpu"] in OOD else "fitted GPU", r["gpu"], OPS.get(op, "element-wise"))
    groups.setdefault(key, []).append(abs(float(r["rel_err"])) * 100)
print("### NeuSight test set (sample), shipped model, absolute mode: |error| % per GPU and op")
print("%-11s %-16s %-13s %5s %8s %8s" % ("gpu kind", "gpu", "op", "rows", "median%", "mean%"))
for key in sorted(groups, key=lambda k: (k[0] != "unseen GPU", k[1], k[2])):
    e = groups[key]
    print("%-11s %-16s %-13s %5d %8.1f %8.1f" % (key + (len(e), statistics.median(e), statistics.fmean(e))))
pooled = {}
for (kind, _, op), e in groups.items():
    if kind == "unseen GPU":
        pooled.setdefault(op, []).extend(e)
print("### pooled over the unseen GPUs (NeuSight's out-of-distribution means for comparison)")
PUB = {"bmm": 13.8, "linear": 13.9, "element-wise": 19.3, "softmax": 13.9, "layer norm": 56.7}
for op in ["bmm", "linear", "element-wise", "softmax", "layer norm"]:
    if op in pooled:
        e = pooled[op]
        print("%-13s %5d %8.1f %8.1f   NeuSight %.1f" % (op, len(e), statistics.median(e), statistics.fmean(e), PUB[op]))
PY
echo "### transfer mode, per source -> target pair (all ops)"
grep '^mode' "$ROWS.lines"
awk '$1 == "transfer" && $4 == "all"' "$ROWS.lines"
python3 scripts/transfer_pairs.py "$ROWS.lines" --onto "$UNSEEN"

#!/usr/bin/env bash
# The accuracy tables of docs/accuracy.md (summarized in the README): every number scores GPUs the model was NOT fitted on.
#  BF16 GEMMs: refit the GEMM terms without H100 (then without A100) and score the held-out GPU.
#  FP32 ops:   refit the FP32 terms without each NeuSight GPU in turn and score it, with its kernel names
#              (the tile and cuDNN algorithm its library chose) and again without them.
#              Like the shipped fit, each refit first fits the streaming efficiency on the element-wise
#              ops (without the held-out GPU too), then the rest.
# Both start from the same priors and microbenchmark figures as scripts/fit_default_model.sh.
# usage: scripts/validate_holdout.sh [KCAST_BINARY] > results.txt
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-build/kcast}
M=data/measured
# The frozen parameters of each stage are the shipped fit's (scripts/fit_default_model.sh).
# shellcheck source=scripts/fit_stages.sh
. scripts/fit_stages.sh
BASE=$(mktemp --suffix=.json)
STAGE1=$(mktemp --suffix=.json)
STREAM=$(mktemp --suffix=.json)
trap 'rm -f "$BASE" "$STAGE1" "$STREAM"' EXIT
"$K" calibrate --base data/models/initial.json --microbench data/microbench/*.csv -o "$BASE" 2>/dev/null
echo "### BF16 GEMMs (aiconfigurator), absolute mode, held-out GPU"
for h in H100-SXM A100-SXM4-80GB; do
  # shellcheck disable=SC2086
  "$K" validate --model "$BASE" --measurements $M/aiconfigurator_a100_bf16.csv $M/aiconfigurator_h100_bf16.csv \
    --holdout-gpu "$h" $GEMM_FROZEN --no-transfer --summary | tail -n 1
done
echo "### FP8 GEMMs (aiconfigurator, H100; not fitted here: narrow_power_factor at its prior 1.0 (the shipped model fits it on these rows, scripts/fit_narrow_power.py); each op = per-token activation quantize + FP8 GEMM, context_a_pass_bytes)"
# shellcheck disable=SC2086
"$K" calibrate --base "$BASE" --measurements $M/aiconfigurator_a100_bf16.csv $M/aiconfigurator_h100_bf16.csv \
  $GEMM_FROZEN -o "$STAGE1" >/dev/null 2>&1
"$K" validate --model "$STAGE1" --measurements $M/aiconfigurator_h100_fp8.csv --no-transfer --summary | tail -n 1
# The shipped fit's first FP32 step (streaming efficiency from the element-wise ops), without the
# held-out GPUs ($1: their --holdout-gpu arguments).
stream_first() {
  # shellcheck disable=SC2086
  "$K" calibrate --base "$STAGE1" --measurements $M/neusight_ops.csv ${1:+--exclude-gpu ${1//--holdout-gpu/--exclude-gpu}} \
    $STREAM_FIRST $FP32_FROZEN -o "$STREAM" >/dev/null 2>&1
}
echo "### FP32 ops (NeuSight), held-out GPU (A100: both A100 boards held out together); absolute mode,"
echo "### and transfer mode: the same op measured on another GPU, scaled by the refitted model"
for h in "P100-PCIe-16GB" "P4" "T4" "V100-PCIe-32GB" "A100-PCIe-40GB --holdout-gpu A100-PCIe-80GB"; do
  # shellcheck disable=SC2086
  stream_first "$h"
  # shellcheck disable=SC2086
  "$K" validate --model "$STREAM" --measurements $M/neusight_ops.csv --holdout-gpu $h \
    $FP32_FROZEN $STREAM_FROZEN
done
echo "### FP32 ops (NeuSight), held-out GPU scored without its own kernel names (--without-names: no SGEMM"
echo "### tile or cuDNN algorithm read from them, as for a GPU with no trace of its own); absolute mode"
for h in "P100-PCIe-16GB" "P4" "T4" "V100-PCIe-32GB" "A100-PCIe-40GB --holdout-gpu A100-PCIe-80GB"; do
  # shellcheck disable=SC2086
  stream_first "$h"
  # shellcheck disable=SC2086
  "$K" validate --model "$STREAM" --measurements $M/neusight_ops.csv --holdout-gpu $h --without-names --no-transfer \
    $FP32_FROZEN $STREAM_FROZEN
done

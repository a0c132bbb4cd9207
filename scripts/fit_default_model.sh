#!/usr/bin/env bash
# Reproduces data/models/default.json in two stages (MODEL-NOTES finding 6: anchor each term where it
# is identifiable):
#  1. published microbenchmark figures (data/microbench) become the GPUs' measured capabilities (and
#     mem_eff, the DRAM efficiency of GPUs without a measurement, their median), and
#     the tensor-core GEMM terms (pipeline fill, tile efficiency, split-K, operand bandwidth, floor
#     blend) are fitted on the BF16 GEMM corpora of A100 and H100;
#  2. with those frozen, the FP32 per-op corpus (NeuSight: SIMT GEMMs, convolutions, elementwise,
#     softmax, layer norm on five GPUs) fits the SIMT, streaming (stream_mem_eff, not mem_eff: the
#     framework's kernels, not the memory system; fitted first on the element-wise ops alone, then
#     held; l2_bytes_per_clk stays at its prior, which the op latencies do not identify: freed it
#     runs to its 128 B/clock bound; the norms' and softmaxes' extra reads are PyTorch's, fixed,
#     see scripts/fit_stages.sh) and power terms, the per-op framework floors of
#     that measurement setup, and each measured board's SGEMM scale (model.json gpus.*.sgemm_scale:
#     its SIMT GEMM efficiency relative to eff_simt, which settles near the median board). tile_exp_simt (the small SGEMM
#     tiles' throughput) is fitted too: the corpus's cuBLAS kernel names record the tile each SGEMM ran
#     (model/sgemm_name.h), so it is identifiable (0.16); and simt_choice_eff, the rate of the library's
#     own tile choice relative to the menu's best for SGEMMs without a name (synthesized ones), is
#     measured from those named kernels rather than fitted.
#  3. last, narrow_power_factor (the SM power of dense FP8 / FP4 math relative to BF16's, which decides
#     whether a board holds its clock under it) by a one-dimensional search on the FP8 GEMM corpus
#     (aiconfigurator, H100; scripts/fit_narrow_power.py); nothing else is fitted to FP8 rows. Their
#     timings include the activation's quantize kernel (context_a_pass_bytes, docs/accuracy.md#bf16-and-fp8-gemms).
# usage: scripts/fit_default_model.sh [KCAST_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-build/kcast}
M=data/measured
# shellcheck source=scripts/fit_stages.sh
. scripts/fit_stages.sh
# The stages are build artifacts under build/, named so in each model's provenance (`base`): the
# shipped model names no temporary path, and this script recreates what it names.
mkdir -p build/fit-default-model
STAGE1=build/fit-default-model/stage1-gemm.json
STREAM=build/fit-default-model/stage2-stream.json
# shellcheck disable=SC2086
"$K" calibrate --base data/models/initial.json --microbench data/microbench/*.csv \
  --measurements $M/aiconfigurator_a100_bf16.csv $M/aiconfigurator_h100_bf16.csv \
  $GEMM_FROZEN -o "$STAGE1"
# shellcheck disable=SC2086
"$K" calibrate --base "$STAGE1" --measurements $M/neusight_ops.csv $STREAM_FIRST $FP32_FROZEN -o "$STREAM"
# shellcheck disable=SC2086
"$K" calibrate --base "$STREAM" --measurements $M/neusight_ops.csv $FP32_FROZEN $STREAM_FROZEN \
  -o data/models/default.json
python3 scripts/fit_narrow_power.py data/models/default.json --kcast "$K" | tail -1

#!/usr/bin/env bash
# README command (1): set up, build, and run the main job on a built-in example: synthesize a
# BERT-large FP16 mixed-precision training step (fp32 master weights), predict it on five GPUs, and
# run the "walls" what-if study on an H100.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
K=build/kcast
mkdir -p out
$K synth bert-large --batch 32 --seq 512 --mode train --dtype fp16 --master-weights -o out/bert-large-train.csv
echo "== kcast predict: BERT-large FP16 mixed-precision training step (batch 32, seq 512) =="
$K predict --kernels out/bert-large-train.csv --gpu V100-SXM2-32GB,A100-SXM4-80GB,H100-SXM,H200,B200 --html out/bert-large.html
echo
echo "== kcast whatif --walls on H100-SXM =="
$K whatif --kernels out/bert-large-train.csv --gpu H100-SXM --walls
echo
echo "wrote out/bert-large-train.csv and out/bert-large.html"

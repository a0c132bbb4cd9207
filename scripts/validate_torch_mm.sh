#!/usr/bin/env bash
# Scores the shipped model, absolute mode, on square torch.mm GEMMs measured by other people on other
# machines (data/measured/torch_mm_square.csv, from zzc0721/torch-performance-test-data; see
# data/measured/README.md). Nothing here is fitted on these rows. Unseen GPUs (no row of theirs in
# any fitted corpus): L4, A40, H100-PCIe, P100-SXM2, V100-SXM2-16GB. The others were fitted on other
# data (A100-PCIe-40GB, P100-PCIe-16GB, P4: NeuSight FP32 ops; H100-SXM: aiconfigurator BF16 GEMMs).
# usage: scripts/validate_torch_mm.sh [KCAST_BINARY] > results.txt
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-build/kcast}
echo "### torch.mm square GEMMs (1024-10240; FP32 on CUDA cores, FP16/BF16 on tensor cores), shipped model, absolute"
"$K" validate --measurements data/measured/torch_mm_square.csv --no-transfer

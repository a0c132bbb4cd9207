# The parameters each stage of the shipped model's fit holds fixed; sourced by
# scripts/fit_default_model.sh and scripts/validate_holdout.sh so that the held-out refits hold
# exactly what the shipped fit holds.
# Stage 1 (BF16 GEMMs): the launch floor and the DRAM efficiency come from the microbenchmarks.
# shellcheck disable=SC2034
GEMM_FROZEN="--freeze floor_us --freeze mem_eff"
# Stage 2 (FP32 per-op corpus): the GEMM terms stage 1 fitted, and l2_bytes_per_clk, which the op
# latencies do not identify (freed it runs to its 128 B/clock bound).
# shellcheck disable=SC2034
FP32_FROZEN="--freeze floor_us --freeze k_fill --freeze tile_exp --freeze gemm_mem_eff --freeze floor_blend
  --freeze mem_latency_cycles --freeze splitk_us --freeze eff_tensor --freeze mem_eff --freeze l2_bytes_per_clk"

#include "model/model_params.h"

namespace kcast {

// Initial values are physical priors: cuBLAS reaches ~80-87% of tensor peak on large GEMMs
// (microbench-reference.csv), streaming kernels ~85% of DRAM peak (MODEL-NOTES.md finding 7).
const std::array<ParamInfo, kNumParams> kParamInfo = {{
    {"floor_us", 2.5, 1.0, 5.0, "kernel floor without a measured launch interval"},
    {"eff_tensor", 0.8, 0.3, 1.0, "tensor GEMM efficiency when not measured"},
    {"eff_of_best", 1.0, 0.5, 1.1, "typical large GEMM rate / microbenchmark best-shape rate"},
    {"eff_simt", 0.75, 0.2, 1.0, "SIMT FP32 GEMM efficiency"},
    {"k_fill", 128.0, 0.0, 2048.0, "tensor GEMM pipeline fill (k elements per tile)"},
    {"k_fill_simt", 64.0, 0.0, 2048.0, "SIMT GEMM pipeline fill (k elements per tile)"},
    {"tile_exp", 0.3, 0.0, 1.0, "small-tile throughput exponent"},
    {"mem_eff", 0.85, 0.4, 1.0, "DRAM efficiency when not measured"},
    {"mem_latency_cycles", 1500.0, 0.0, 20000.0, "DRAM latency paid once by a memory-bound kernel (cycles)"},
    {"l2_bytes_per_clk", 40.0, 8.0, 128.0, "L2 bytes/clock/SM when not measured"},
    {"conv_eff", 0.7, 0.1, 1.5, "implicit-GEMM conv throughput relative to GEMM"},
    {"attn_eff", 0.6, 0.1, 1.0, "fused attention throughput relative to GEMM peak"},
    {"softmax_passes", 2.0, 0.0, 6.0, "extra reads of the input in long-row softmax (PyTorch: 2)"},
    {"norm_passes", 1.0, 0.0, 6.0, "extra reads of the input in normalization (PyTorch: 1)"},
    {"ew_flops_per_byte", 0.5, 0.0, 20.0, "SIMT flops per byte in elementwise ops"},
    {"splitk_us", 1.5, 0.0, 20.0, "split-K reduction overhead (µs)"},
    {"watts_per_sm_ghz", 1.5, 0.3, 4.0, "board watts per SM per GHz at full math load"},
    {"gemm_mem_eff", 0.8, 0.3, 1.2, "GEMM operand traffic: fraction of sustained DRAM bandwidth"},
    {"floor_blend", 2.0, 1.0, 8.0, "exponent combining floor and work (1 = sum)"},
    {"stream_mem_eff", 1.0, 0.5, 1.2, "streaming kernels: fraction of sustained DRAM bandwidth"},
    {"tile_exp_simt", 0.3, 0.0, 1.0, "small-tile throughput exponent, SIMT SGEMM tiles"},
    {"power_tau_us", 100.0, 1.0, 1e6, "dense math at boost before the power limit bites (µs)"},
    {"conv_gemm_gain", 1.0, 0.2, 4.0, "cuBLAS-SGEMM conv (1x1, im2col, Winograd-nonfused) throughput / implicit GEMM"},
    {"conv_winograd_gain", 1.0, 0.2, 4.0, "cuDNN Winograd CTA (128x128 tile over input channels) throughput / an SGEMM tile's"},
    {"conv_fft_gain", 1.0, 0.2, 4.0, "FFT conv throughput / implicit GEMM"},
    {"conv_legacy_gain", 1.0, 0.2, 4.0, "implicit/explicit_convolve_sgemm throughput / implicit GEMM"},
    {"simt_choice_eff", 1.0, 0.3, 1.0, "SGEMM without a named tile: library choice / best tile throughput (measured, not fitted)"},
    {"conv_choice_gain", 1.0, 0.2, 4.0, "SIMT conv without a known cuDNN algorithm: median family gain (measured, not fitted)"},
    {"simt_long_k_exp", 0.0, 0.0, 1.0, "SGEMM slowdown exponent for K ranges per CTA beyond 4096 (architectures with simt_long_k)"},
    {"gemm_bias_persistence", 1.0, 0.0, 1.0, "share of a measured GEMM's deviation from the model kept on another compute capability (measured, not fitted)"},
    {"conv_bias_persistence", 1.0, 0.0, 1.0, "share of a measured convolution's deviation from the model kept on another compute capability (measured, not fitted)"},
    {"narrow_power_factor", 1.0, 0.5, 4.0, "SM power under dense FP8 / FP4 tensor math relative to watts_per_sm_ghz"},
}};

ModelParams::ModelParams() {
  for (int i = 0; i < kNumParams; ++i) p[i] = kParamInfo[i].initial;
}

}  // namespace kcast

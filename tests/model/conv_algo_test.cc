#include "model/conv_algo.h"

#include <gtest/gtest.h>

#include <utility>

#include "model/cost_model.h"
#include "calibrate/model_file.h"
#include "tests/model/compute_bound_gpu.h"

namespace kcast {
namespace {

// Kernel names as they appear in NeuSight's conv traces and cuDNN/cuBLAS on other architectures.
TEST(ConvAlgo, FamiliesFromKernelNames) {
  EXPECT_EQ(conv_algo_of("cudnn_infer_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"), ConvAlgo::winograd);
  EXPECT_EQ(conv_algo_of("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(...)"), ConvAlgo::winograd);
  EXPECT_EQ(conv_algo_of("volta_gcgemm_64x32_nt"), ConvAlgo::fft);
  EXPECT_EQ(conv_algo_of("void fft2d_r2c_32x32<float, false, 0u, false>(...)"), ConvAlgo::fft);
  EXPECT_EQ(conv_algo_of("void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false>(...)"), ConvAlgo::legacy);
  EXPECT_EQ(conv_algo_of("void explicit_convolve_sgemm<float, int, 1024, 5, 5, 3, 3, 3, 0, false>(...)"), ConvAlgo::legacy);
  EXPECT_EQ(conv_algo_of("volta_sgemm_128x64_nn"), ConvAlgo::gemm);
  EXPECT_EQ(conv_algo_of("maxwell_sgemm_128x64_nn"), ConvAlgo::gemm);
  EXPECT_EQ(conv_algo_of("ampere_sgemm_128x128_nn"), ConvAlgo::gemm);
  // cuDNN's own implicit-GEMM kernels and tensor-core fprop kernels.
  EXPECT_EQ(conv_algo_of("cudnn_infer_volta_scudnn_128x64_relu_xregs_large_nn_v1"), ConvAlgo::implicit);
  EXPECT_EQ(conv_algo_of("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw"), ConvAlgo::implicit);
  EXPECT_EQ(conv_algo_of("void precomputed_convolve_sgemm<float, 1024, 5, 5, 4, 3, 3, 1, false>(...)"), ConvAlgo::implicit);
  // Names that say no algorithm: synthesized rows (an op name), empty names, other kernels.
  EXPECT_EQ(conv_algo_of("layer1.0.conv2 aten::cudnn_convolution"), ConvAlgo::unknown);
  EXPECT_EQ(conv_algo_of(""), ConvAlgo::unknown);
  EXPECT_EQ(conv_algo_of("my_triton_conv_kernel"), ConvAlgo::unknown);
}

// A family's gain scales a compute-bound convolution's rate: twice the gain, half the time.
TEST(ConvAlgo, GainScalesAComputeBoundConvolution) {
  const GpuSpec g = testing::compute_bound_gpu("8.0", 100);
  const std::pair<ConvAlgo, Param> families[] = {{ConvAlgo::gemm, kConvGemmGain},
                                                 {ConvAlgo::winograd, kConvWinogradGain},
                                                 {ConvAlgo::fft, kConvFftGain},
                                                 {ConvAlgo::legacy, kConvLegacyGain}};
  for (const auto& [algo, gain] : families) {
    Kernel k;
    k.cls = KernelClass::conv;
    k.conv_algo = algo;
    k.m = 8192, k.n = 512, k.k = 4608;
    k.derive_from_shape();
    auto work_us = [&](double gain_value) {
      ModelParams p;
      p[kFloorBlend] = 1.0;
      p[gain] = gain_value;
      const CostModel m(p, default_arch_facts());
      return m.predict(k, m.caps(g)).time_us - 1.0;
    };
    EXPECT_NEAR(work_us(2.0), work_us(1.0) / 2.0, work_us(1.0) * 1e-9) << kParamInfo[gain].name;
  }
}

// A convolution whose algorithm is unknown runs at conv_choice_gain on CUDA cores (FP32 cuDNN picks
// Winograd or cuBLAS for many shapes) and as implicit GEMM on tensor cores.
TEST(ConvAlgo, UnknownAlgorithmRunsAtTheChoiceGainOnCudaCoresOnly) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kConvChoiceGain] = 1.6;
  CostModel m(p, default_arch_facts());
  GpuSpec g = testing::compute_bound_gpu("8.0", 100);
  g.tf32_tflops = 80, g.bf16_tflops = 160;
  g.tensor_cores = true;
  const GpuCaps caps = m.caps(g);
  for (DType d : {DType::fp32, DType::bf16}) {
    Kernel k;
    k.cls = KernelClass::conv;
    k.dtype = d;
    k.m = 8192, k.n = 512, k.k = 4608;
    k.derive_from_shape();
    k.conv_algo = ConvAlgo::implicit;
    const double implicit = m.predict(k, caps).time_us - 1.0;
    k.conv_algo = ConvAlgo::unknown;
    const double unknown = m.predict(k, caps).time_us - 1.0;
    if (d == DType::fp32) {
      EXPECT_NEAR(unknown, implicit / 1.6, implicit * 1e-9);
    } else {
      EXPECT_EQ(unknown, implicit);
    }
  }
}

// cuDNN's CUDA-core Winograd kernels tile the output per image (model/conv_algo.h): where the trace
// records the launch grid, its CTAs are the tiles, each a 128x128 tile over K = input channels
// (k / 9), so the same GEMM shape costs more waves when small images leave CTAs part-empty.
TEST(ConvAlgo, WinogradWithALaunchGridRunsItsCtasInWaves) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kKFillSimt] = 0.0;
  CostModel m(p, default_arch_facts());
  const GpuCaps caps = m.caps(testing::compute_bound_gpu("7.0", 100));
  auto work_us = [&](ConvAlgo algo, int64_t ctas, int64_t cin) {
    Kernel k;
    k.cls = KernelClass::conv;
    k.conv_algo = algo;
    k.m = 16 * 14 * 14, k.n = 64, k.k = 9 * cin;  // batch 16, 14x14 output, 64 channels
    k.derive_from_shape();
    k.grid[0] = ctas, k.grid[1] = 1, k.grid[2] = 1;
    return m.predict(k, caps).time_us - 1.0;
  };
  const double one_wave = work_us(ConvAlgo::winograd, 100, 512);
  // A wave costs what its busiest SM holds: 50 CTAs on 100 SMs take as long as 100.
  EXPECT_NEAR(work_us(ConvAlgo::winograd, 50, 512), one_wave, one_wave * 1e-9);
  // Twice the CTAs for the same outputs (smaller images, more padding): two waves.
  EXPECT_NEAR(work_us(ConvAlgo::winograd, 200, 512), 2 * one_wave, one_wave * 1e-9);
  // Each CTA's K loop runs over the input channels.
  EXPECT_NEAR(work_us(ConvAlgo::winograd, 100, 1024), 2 * one_wave, one_wave * 1e-9);
  // One CTA's tile at the SM's rate: 2 x 128 x 128 x 512 FLOPs at the sustained SGEMM rate (eff_simt x
  // 10 TFLOP/s over 100 SMs) times the Winograd family's (conv_eff x conv_winograd_gain).
  EXPECT_NEAR(one_wave, 2.0 * 128 * 128 * 512 / (1e5 * p[kEffSimt] * p[kConvEff] * p[kConvWinogradGain]),
              one_wave * 1e-6);
  // Without the algorithm (no kernel name: --without-names, or a synthesized list), the grid says
  // nothing about the tiling and the prediction does not depend on it.
  EXPECT_EQ(work_us(ConvAlgo::unknown, 100, 512), work_us(ConvAlgo::unknown, 400, 512));
}

// A Winograd-nonfused convolution as a trace records it: cuDNN's cuBLAS SGEMM `name` over the 36
// transformed products (grid z), m = batch x output pixels, n = output channels, k = 9 x input channels.
Kernel nonfused_conv(const char* name, int64_t m, int64_t n, int64_t cin, int64_t grid_x, int64_t grid_y) {
  Kernel k;
  k.name = name;
  k.cls = KernelClass::conv;
  k.conv_algo = ConvAlgo::gemm;
  k.tile = sgemm_tile_of(k.name);
  k.m = m, k.n = n, k.k = 9 * cin;
  k.derive_from_shape();
  k.grid[0] = grid_x, k.grid[1] = grid_y, k.grid[2] = kWinogradNonfusedProducts;
  return k;
}

// cuDNN's Winograd-nonfused convolutions (F(4x4,3x3)) run the 36 transformed products as one
// batched cuBLAS SGEMM, grid z = 36: each CTA is the name's tile over K = input channels, the grid
// counts them, and the transform kernels stream the activations and filters through DRAM.
TEST(ConvAlgo, WinogradNonfusedRunsItsGridsCtasAndStreamsItsTransforms) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kKFillSimt] = 0.0;
  p[kMemLatencyCycles] = 0.0;
  auto work_us = [&](double dram_gbps, int64_t grid_x, int64_t cin, int64_t m) {
    GpuSpec g = testing::compute_bound_gpu("7.0", 80);
    g.dram_bw_gbps = g.measured_dram_bw_gbps = dram_gbps;
    const CostModel model(p, default_arch_facts());
    const Kernel k = nonfused_conv("volta_sgemm_128x128_nn", m, 256, cin, grid_x, 2);
    return model.predict(k, model.caps(g)).time_us - 1.0;
  };
  // Compute-bound (no memory latency, 1e7 GB/s): 80 SMs x 1 CTA of 128x128; 2 x 2 x 36 = 144 CTAs
  // are two waves, 4 x 2 x 36 four; twice the input channels, twice each CTA's K loop.
  const double two_waves = work_us(1e7, 2, 512, 4096);
  EXPECT_NEAR(work_us(1e7, 4, 512, 4096), 2 * two_waves, two_waves * 1e-4);
  EXPECT_NEAR(work_us(1e7, 2, 1024, 4096), 2 * two_waves, two_waves * 1e-4);
  // With little bandwidth the transforms show: more outputs at the same grid cost more, and the
  // extra time doubles when the bandwidth halves.
  const double more_outputs_fast = work_us(200, 2, 512, 8192) - work_us(200, 2, 512, 4096);
  const double more_outputs_slow = work_us(100, 2, 512, 8192) - work_us(100, 2, 512, 4096);
  EXPECT_GT(more_outputs_fast, 0);
  EXPECT_NEAR(more_outputs_slow, 2 * more_outputs_fast, more_outputs_fast * 0.05);
}

// The same convolution on an architecture that does not run the named kernel family (a Pascal GPU
// given a volta_sgemm trace, as in transfer) runs the trace's tile and grid too: on a Pascal and a
// Volta GPU of the same SMs and rates it takes the same time.
TEST(ConvAlgo, WinogradNonfusedRunsTheTracesTileOnAnyArchitecture) {
  ModelParams p;
  const CostModel model(p, default_arch_facts());
  Kernel k = nonfused_conv("volta_sgemm_64x64_nn", 16 * 512, 128, 256, 2, 8);
  const double volta = model.predict(k, model.caps(testing::compute_bound_gpu("7.0", 36))).time_us;
  const double pascal = model.predict(k, model.caps(testing::compute_bound_gpu("6.0", 36))).time_us;
  EXPECT_DOUBLE_EQ(pascal, volta);
  // A GEMM's tile, by contrast, is the library's choice on its own architecture only.
  k.cls = KernelClass::gemm;
  k.conv_algo = ConvAlgo::unknown;
  EXPECT_NE(model.predict(k, model.caps(testing::compute_bound_gpu("6.0", 36))).time_us,
            model.predict(k, model.caps(testing::compute_bound_gpu("7.0", 36))).time_us);
}

}  // namespace
}  // namespace kcast

#include "model/conv_algo.h"

#include <gtest/gtest.h>

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
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kConvWinogradGain] = 2.0;
  CostModel m(p, default_arch_facts());
  const GpuCaps caps = m.caps(g);
  Kernel k;
  k.cls = KernelClass::conv;
  k.m = 8192, k.n = 512, k.k = 4608;
  k.derive_from_shape();
  const double implicit = m.predict(k, caps).time_us - 1.0;
  k.conv_algo = ConvAlgo::winograd;
  const double winograd = m.predict(k, caps).time_us - 1.0;
  EXPECT_NEAR(winograd, implicit / 2.0, implicit * 1e-9);
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

}  // namespace
}  // namespace kcast

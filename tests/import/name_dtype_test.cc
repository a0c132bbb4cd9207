// Tests of the kernel-name dtype hint (predict/import/name_dtype.cc) on names as profilers print them.
#include <gtest/gtest.h>

#include "predict/import/import_util.h"

namespace kcast::import_detail {
namespace {

TEST(NameDtype, LibraryKernelNames) {
  EXPECT_EQ(dtype_from_kernel_name("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn"), DType::fp16);
  EXPECT_EQ(dtype_from_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), DType::bf16);
  EXPECT_EQ(dtype_from_kernel_name(
                "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16"),
            DType::tf32);
  EXPECT_EQ(dtype_from_kernel_name(
                "cutlass3x_sm100_tensorop_s64x256x32gemm_f8_f8_f32_f16_f16_64x256x128_1x1x1_0_tnn_align4"),
            DType::fp8);
  // Block-scaled FP4 names its UE4M3 scales too: FP4, not FP8.
  EXPECT_EQ(dtype_from_kernel_name("cutlass3x_sm100_bstensorop_s256x128x256gemm_block_scaled_ue4m3xe2m1_ue4m3xe2m1_"
                                   "f32_bf16_bf16_256x128x256_2x1x1_0_tnt_align32_o_vs16_2sm"),
            DType::fp4);
  EXPECT_EQ(dtype_from_kernel_name("void cutlass_fp4_gemm::nvfp4_scaled_mm_sm100<cutlass::bfloat16_t>"), DType::fp4);
  EXPECT_EQ(dtype_from_kernel_name("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, "
                                   "cutlass::half_t>>(Flash_fwd_params)"),
            DType::fp16);
  EXPECT_EQ(dtype_from_kernel_name("volta_dgemm_128x64_nn"), DType::fp64);
  EXPECT_EQ(dtype_from_kernel_name("turing_i8816gemm_int8_128x128_ldg16_nt"), DType::int8);
  EXPECT_EQ(dtype_from_kernel_name("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::Half, "
                                   "float, c10::Half>(T4 *, const T2 *, int)"),
            DType::fp16);
}

TEST(NameDtype, NoHintKeepsDefault) {
  EXPECT_EQ(dtype_from_kernel_name("volta_sgemm_128x64_nn"), std::nullopt);
  EXPECT_EQ(dtype_from_kernel_name("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                                   "at::detail::Array<char *, 1>>(int, T2, T3)"),
            std::nullopt);
  EXPECT_EQ(dtype_from_kernel_name(""), std::nullopt);
  EXPECT_EQ(dtype_from_kernel_name("void copy_kernel_vec<float4>(float4 const*, float4*, int)"), std::nullopt);
  EXPECT_EQ(dtype_from_kernel_name("gemm_kernel_double_buffered_128x128"), std::nullopt);
  EXPECT_EQ(dtype_from_kernel_name("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<double, "
                                   "at::native::MeanOps<double, double, double, double>>>(T3)"),
            DType::fp64);
}

}  // namespace
}  // namespace kcast::import_detail

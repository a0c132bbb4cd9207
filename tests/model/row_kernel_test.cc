#include "model/row_kernel.h"

#include <gtest/gtest.h>

#include "io/kernel_list_csv.h"

namespace kcast {
namespace {

TEST(RowKernel, TritonRowInRegistersKernelsReadTheirRowsOnce) {
  for (const char* name : {"_rms_norm_forward_kernel", "_layer_norm_forward_kernel",
                           "_fused_add_rms_norm_forward_kernel", "_rms_layernorm_forward",
                           "_softmax_single_block_forward_kernel", "triton_per_fused__softmax_0", "triton_per_fused_native_layer_norm_0",
                           "triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_1"})
    EXPECT_TRUE(reads_rows_once(name)) << name;
  // PyTorch's own kernels, Apex, Inductor's looping reductions, backward kernels: a second read.
  for (const char* name : {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
                           "cuApplyLayerNorm", "triton_red_fused_native_layer_norm_0", "_rms_norm_backward_kernel",
                           "_group_norm_forward_kernel",  // Liger's: two sweeps over each group
                           "_softmax_multi_block_forward_kernel", "triton_red_fused__softmax_0",
                           "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>",
                           "layer_norm_forward_kernel_but_not_triton"})
    EXPECT_FALSE(reads_rows_once(name)) << name;
}

TEST(RowKernel, KernelListReaderMarksOnlyNormalizationAndSoftmaxRows) {
  auto ks = parse_kernel_list(
      "name,class,bytes\n_rms_norm_forward_kernel,normalization,1e8\n_rms_norm_forward_kernel,elementwise,1e8\n"
      "vectorized_layer_norm_kernel,normalization,1e8\ntriton_per_fused__softmax_0,softmax,1e8\n"
      "triton_per_fused_sum_0,reduction,1e8\n",
      "n.csv", {});
  ASSERT_EQ(ks.size(), 5u);
  EXPECT_TRUE(ks[0].row_read_once);
  EXPECT_FALSE(ks[1].row_read_once);
  EXPECT_FALSE(ks[2].row_read_once);
  EXPECT_TRUE(ks[3].row_read_once);
  EXPECT_FALSE(ks[4].row_read_once);
}

}  // namespace
}  // namespace kcast

#include "model/norm_kernel.h"

#include <gtest/gtest.h>

#include "calibrate/kernel_list_csv.h"

namespace kcast {
namespace {

TEST(NormKernel, TritonRowInRegistersKernelsReadTheirRowsOnce) {
  for (const char* name : {"_rms_norm_forward_kernel", "_layer_norm_forward_kernel",
                           "_fused_add_rms_norm_forward_kernel", "_rms_layernorm_forward", "triton_per_fused_native_layer_norm_0",
                           "triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_1"})
    EXPECT_TRUE(norm_reads_row_once(name)) << name;
  // PyTorch's own kernels, Apex, Inductor's looping reductions, backward kernels: a second read.
  for (const char* name : {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
                           "cuApplyLayerNorm", "triton_red_fused_native_layer_norm_0", "_rms_norm_backward_kernel",
                           "_group_norm_forward_kernel",  // Liger's: two sweeps over each group
                           "layer_norm_forward_kernel_but_not_triton"})
    EXPECT_FALSE(norm_reads_row_once(name)) << name;
}

TEST(NormKernel, KernelListReaderMarksOnlyNormalizationRows) {
  auto ks = parse_kernel_list(
      "name,class,bytes\n_rms_norm_forward_kernel,normalization,1e8\n_rms_norm_forward_kernel,elementwise,1e8\n"
      "vectorized_layer_norm_kernel,normalization,1e8\n",
      "n.csv", {});
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_TRUE(ks[0].norm_one_pass);
  EXPECT_FALSE(ks[1].norm_one_pass);
  EXPECT_FALSE(ks[2].norm_one_pass);
}

}  // namespace
}  // namespace kcast

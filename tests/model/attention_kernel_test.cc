// Attention kernels written with mma.sync (model/attention_kernel.h): named from the trace, timed
// at the architecture's mma_sync_fraction of their usual share on Hopper, unchanged where mma.sync
// is native.
#include "model/attention_kernel.h"

#include <gtest/gtest.h>

#include "io/kernel_list_csv.h"
#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

TEST(AttentionKernel, FlashAttention2AndCutlassSm80KernelsRunMmaSync) {
  for (const char* name :
       {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t>>, false, true, false, false, true, true, false, false>(Flash_fwd_params)",
        "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>>(Flash_bwd_params)",
        "flash_fwd_splitkv_kernel", "aten::_scaled_dot_product_flash_attention",
        "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)",
        "aten::_scaled_dot_product_efficient_attention"})
    EXPECT_TRUE(runs_mma_sync(name)) << name;
  // FlashAttention-3, cuDNN's fused attention, Triton and FlashInfer use each architecture's own instructions.
  for (const char* name :
       {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>>>>>>(T1::Params)",
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
        "_attn_fwd", "BatchPrefillWithPagedKVCacheKernel", "flash_fwd_kernel_sm100"})
    EXPECT_FALSE(runs_mma_sync(name)) << name;
}

TEST(AttentionKernel, HopperRunsMmaSyncAttentionAtItsFractionAndAmpereAtFullRate) {
  const auto rows = parse_kernel_list(
      "name,class,dtype,flops\nflash_fwd_kernel,attention,bf16,4e12\nFlashAttnFwdSm90,attention,bf16,4e12\n"
      "flash_fwd_kernel,gemm,bf16,4e12\n",
      "a.csv", {});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].mma_sync);
  EXPECT_FALSE(rows[1].mma_sync);
  EXPECT_FALSE(rows[2].mma_sync);  // only attention rows are marked
  const CostModel& m = model().model;
  const GpuCaps h100 = target("H100-SXM").caps, a100 = target("A100-SXM4-80GB").caps;
  ASSERT_LT(h100.arch.mma_sync_fraction, 1.0);
  ASSERT_EQ(a100.arch.mma_sync_fraction, 1.0);
  // Compute-bound, far above the floor: the time scales with 1 / rate.
  EXPECT_NEAR(m.predict(rows[1], h100).time_us / m.predict(rows[0], h100).time_us, h100.arch.mma_sync_fraction, 1e-3);
  EXPECT_DOUBLE_EQ(m.predict(rows[1], a100).time_us, m.predict(rows[0], a100).time_us);
}

TEST(AttentionKernel, BlackwellRunsMmaSyncAtHoppersRatePerSmAndClock) {
  // data/archs.csv's estimate: FlashAttention-2 on a B200 gets what the H100's SMs get per clock, so
  // the two differ by their SMs x clock (148 x 1965 / 132 x 1980 MHz), not by their tensor peaks (2.3x).
  const auto rows = parse_kernel_list("name,class,dtype,flops\nflash_fwd_kernel,attention,bf16,4e12\n", "a.csv", {});
  const CostModel& m = model().model;
  const GpuCaps h100 = target("H100-SXM").caps, b200 = target("B200").caps;
  const double ratio = m.predict(rows[0], h100).time_us / m.predict(rows[0], b200).time_us;
  // Per clock: a kernel this long runs the B200 at the clock its power limit holds (data/archs.csv's
  // watts per SM-GHz), past the boost budget; the H100 holds its boost clock under BF16.
  const int bf = int(DType::bf16);
  ASSERT_EQ(h100.gemm_derate[bf], 1.0);
  ASSERT_LT(b200.gemm_derate[bf], 0.85);
  const double f = 4e12, held = 1 - (1 - b200.gemm_derate[bf]) * f / (f + b200.gemm_boost_flops[bf]);
  EXPECT_NEAR(ratio, 148.0 * 1965 / (132.0 * 1980) * held, 0.01);
}

}  // namespace
}  // namespace kcast

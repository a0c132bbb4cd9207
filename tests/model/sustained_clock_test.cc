// A GPU under sustained load (model/gpu_caps.h, sustained_caps): the power limit's clock for every
// GEMM, whatever its length.
#include <gtest/gtest.h>

#include "calibrate/model_file.h"
#include "model/cost_model.h"
#include "io/gpu_database_csv.h"

namespace kcast {
namespace {

Kernel bf16_gemm(int64_t m, int64_t n, int64_t k) {
  Kernel g;
  g.name = "gemm";
  g.cls = KernelClass::gemm;
  g.dtype = DType::bf16;
  g.batch = 1;
  g.m = m;
  g.n = n;
  g.k = k;
  g.flops = 2.0 * double(m) * double(n) * double(k);
  return g;
}

// Only the boost budget goes: the derate, rates and everything else stay.
TEST(SustainedClock, SpendsTheBoostBudgetAndKeepsTheRest) {
  const GpuCaps c = default_model().caps_for(*default_gpu_database().find("B200"));
  ASSERT_GT(c.gemm_boost_flops[int(DType::bf16)], 0.0);
  const GpuCaps s = sustained_caps(c);
  for (DType d : kAllDTypes) {
    EXPECT_EQ(s.gemm_boost_flops[int(d)], 0.0) << to_string(d);
    EXPECT_EQ(s.gemm_derate[int(d)], c.gemm_derate[int(d)]) << to_string(d);
    EXPECT_EQ(s.tensor_tflops[int(d)], c.tensor_tflops[int(d)]) << to_string(d);
  }
  EXPECT_EQ(s.dram_bw_gbps, c.dram_bw_gbps);
  EXPECT_EQ(s.sm_count, c.sm_count);
}

// On a board whose power limit pulls BF16 math below boost (a B200: 0.80), a short GEMM that a lone
// run finishes mostly at boost takes up to 1 / derate longer sustained; a long one, already at the
// settled clock, barely changes; neither is ever faster. Where the budget covers the math (an H100 in
// BF16) nothing changes.
TEST(SustainedClock, ShortGemmsLoseTheirBoostLongOnesAlreadyHadNone) {
  const CostModel& m = default_model().model;
  const GpuCaps b200 = default_model().caps_for(*default_gpu_database().find("B200"));
  const double derate = b200.gemm_derate[int(DType::bf16)];
  ASSERT_LT(derate, 0.9);
  const GpuCaps hot = sustained_caps(b200);
  const Kernel small = bf16_gemm(2048, 2048, 2048), large = bf16_gemm(16384, 16384, 16384);
  const double small_ratio = m.predict(small, hot).time_us / m.predict(small, b200).time_us;
  const double large_ratio = m.predict(large, hot).time_us / m.predict(large, b200).time_us;
  EXPECT_GT(small_ratio, 1.05);
  EXPECT_LE(small_ratio, 1.0 / derate + 1e-9);
  EXPECT_GE(large_ratio, 1.0);
  EXPECT_LT(large_ratio, 1.02);
  const GpuCaps h100 = default_model().caps_for(*default_gpu_database().find("H100-SXM"));
  ASSERT_EQ(h100.gemm_derate[int(DType::bf16)], 1.0);
  EXPECT_EQ(m.predict(small, sustained_caps(h100)).time_us, m.predict(small, h100).time_us);
}

}  // namespace
}  // namespace kcast

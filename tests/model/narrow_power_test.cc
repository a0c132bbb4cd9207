// The power budget of dense FP8 / FP4 math (model/gpu_caps.cc, narrow_power_factor).
#include <gtest/gtest.h>

#include <algorithm>

#include "calibrate/model_file.h"
#include "model/cost_model.h"

namespace kcast {
namespace {

// A tensor-core board of compute capability `cc`: `sms` SMs at `mhz` boost within `watts`, datasheet
// BF16 and FP8 peaks `bf16` and twice that.
GpuSpec board(const char* cc, int sms, double mhz, double watts, double bf16) {
  GpuSpec g;
  g.name = "Board";
  g.compute_capability = cc;
  g.sm_count = sms;
  g.boost_clock_mhz = mhz;
  g.tdp_w = watts;
  g.dram_bw_gbps = 3350;
  g.bf16_tflops = bf16;
  g.fp8_tflops = 2 * bf16;
  g.tensor_cores = true;
  return g;
}

// Dense FP8 math draws narrow_power_factor times the power BF16 math does per SM and GHz: a board whose
// budget covers BF16 at boost (700 W over 132 SMs at 1.98 GHz, 2 W per SM-GHz: 523 W) settles at
// 700 / (523 x factor) of its clock in FP8, measured FP8 rate or not; FP4 likewise.
TEST(NarrowPower, FP8MathHoldsTheClockItsPowerBudgetAllows) {
  GpuSpec g = board("9.0", 132, 1980, 700, 989);  // Hopper: 2.0 W per SM and GHz (data/archs.csv)
  ModelParams p;
  p[kNarrowPowerFactor] = 1.6;
  const CostModel m(p, default_arch_facts());
  const GpuCaps c = m.caps(g);
  ASSERT_DOUBLE_EQ(c.arch.watts_per_sm_ghz, 2.0);
  EXPECT_DOUBLE_EQ(c.gemm_derate[int(DType::bf16)], 1.0);
  const double fp8 = 700.0 / (132 * 1.98 * 2.0 * 1.6);
  EXPECT_NEAR(c.gemm_derate[int(DType::fp8)], fp8, 1e-12);
  g.measured_gemm_eff[int(DType::fp8)] = 0.7;  // a best-shape figure: at boost
  EXPECT_NEAR(m.caps(g).gemm_derate[int(DType::fp8)], fp8, 1e-12);
  // At factor 1 the budget covers FP8 too.
  p[kNarrowPowerFactor] = 1.0;
  EXPECT_DOUBLE_EQ(CostModel(p, default_arch_facts()).caps(g).gemm_derate[int(DType::fp8)], 1.0);
}

// A board of an architecture whose SM power the data pins down (data/archs.csv: Blackwell's from a B200
// settling at ~1580 of its 1965 MHz under back-to-back BF16 tensor math at 1000 W, FP8 at the clock BF16
// holds): its measured best-shape rates are boost figures, derated like datasheet ones, and FP8 takes
// the architecture's own narrow factor, not the fitted one.
TEST(NarrowPower, AnArchitecturesOwnPowerFiguresDerateItsMeasuredRatesToo) {
  GpuSpec g = board("10.0", 148, 1965, 1000, 2250);  // a B200's
  g.measured_gemm_eff[int(DType::bf16)] = 0.776;  // MAMF's best shape, at boost
  ModelParams p;
  p[kNarrowPowerFactor] = 1.6;
  const CostModel m(p, default_arch_facts());
  const GpuCaps c = m.caps(g);
  ASSERT_GT(c.arch.watts_per_sm_ghz, 0.0);
  ASSERT_GT(c.arch.narrow_power_factor, 0.0);
  const double bf16 = 1000.0 / (148 * 1.965 * c.arch.watts_per_sm_ghz);
  EXPECT_NEAR(bf16, 1580.0 / 1965, 0.01);  // the clock the data gives
  EXPECT_NEAR(c.gemm_derate[int(DType::bf16)], bf16, 1e-12);
  EXPECT_NEAR(c.gemm_derate[int(DType::fp8)], std::min(1.0, bf16 / c.arch.narrow_power_factor), 1e-12);
  // An architecture without its own power figure keeps a measured rate as measured, even on a budget
  // the fitted catch-all figure would throttle (as it does the unmeasured FP16).
  g.compute_capability = "gfx942";
  g.fp16_tflops = 2250;
  g.tdp_w = 300;
  const GpuCaps amd = m.caps(g);
  ASSERT_LT(amd.gemm_derate[int(DType::fp16)], 1.0);
  EXPECT_DOUBLE_EQ(amd.gemm_derate[int(DType::bf16)], 1.0);
}

}  // namespace
}  // namespace kcast

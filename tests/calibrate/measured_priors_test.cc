#include "calibrate/measured_priors.h"

#include <gtest/gtest.h>

#include "io/gpu_database_csv.h"

namespace kcast {
namespace {

LoadedModel empty_model() { return LoadedModel{CostModel(ModelParams(), default_arch_facts()), {}, {}, {}, "x"}; }

GpuMeasured with_dram(double gbps) {
  GpuMeasured g;
  g.dram_bw_gbps = gbps;
  return g;
}

TEST(MeasuredPriors, MemEffIsTheMedianMeasuredOverDatasheetRatio) {
  const GpuDatabase& db = default_gpu_database();
  LoadedModel m = empty_model();
  // Datasheet figures come from the database, so the ratios are whatever fraction we measure.
  const double t4 = db.resolve("T4").dram_bw_gbps, v100 = db.resolve("V100-PCIe-16GB").dram_bw_gbps,
               a100 = db.resolve("A100-SXM4-80GB").dram_bw_gbps;
  m.gpus["T4"] = with_dram(0.70 * t4);
  m.gpus["V100-PCIe-16GB"] = with_dram(0.90 * v100);
  m.gpus["A100-SXM4-80GB"] = with_dram(0.86 * a100);
  GpuMeasured no_dram;  // a GPU measured for something else does not vote
  no_dram.launch_us = 2.0;
  m.gpus["L40"] = no_dram;
  auto u = set_mem_eff_from_measured(m, db);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->gpus, 3u);
  EXPECT_NEAR(m.model.params()[kMemEff], 0.86, 1e-9);
  // A GPU without a measurement now predicts its bandwidth with that ratio.
  const GpuCaps h100 = m.caps_for(db.resolve("H100-SXM"));
  EXPECT_NEAR(h100.dram_bw_gbps, 0.86 * db.resolve("H100-SXM").dram_bw_gbps, 1e-6);
}

TEST(MeasuredPriors, NoMeasuredBandwidthLeavesThePriorAlone) {
  LoadedModel m = empty_model();
  const double before = m.model.params()[kMemEff];
  EXPECT_FALSE(set_mem_eff_from_measured(m, default_gpu_database()).has_value());
  EXPECT_DOUBLE_EQ(m.model.params()[kMemEff], before);
}

}  // namespace
}  // namespace kcast

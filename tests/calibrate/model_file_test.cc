#include "calibrate/model_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "calibrate/gpu_database_csv.h"
#include "model/error.h"

namespace kcast {
namespace {

TEST(ModelFile, RoundTripsParamsContextsAndGpuOverrides) {
  LoadedModel m{CostModel(ModelParams(), default_arch_facts()), {}, {}, {}, "x"};
  m.model.mutable_params()[kEffSimt] = 0.6543;
  m.model.mutable_params().context_overhead_us["neusight:add"] = 21.5;
  GpuMeasured g;
  g.dram_bw_gbps = 1234;
  g.gemm_eff[int(DType::bf16)] = 0.77;
  g.source = "unit test";
  m.gpus["T4"] = g;
  const std::string path = ::testing::TempDir() + "/m.json";
  save_model(m, path);
  LoadedModel back = load_model(path);
  EXPECT_DOUBLE_EQ(back.model.params()[kEffSimt], 0.6543);
  EXPECT_DOUBLE_EQ(back.model.params().context_overhead("neusight:add"), 21.5);
  ASSERT_EQ(back.gpus.count("T4"), 1u);
  EXPECT_DOUBLE_EQ(back.gpus["T4"].dram_bw_gbps, 1234);
  EXPECT_DOUBLE_EQ(back.gpus["T4"].gemm_eff[int(DType::bf16)], 0.77);
  // The override reaches the GPU's capabilities.
  GpuSpec t4 = back.spec_for(default_gpu_database().resolve("T4"));
  EXPECT_DOUBLE_EQ(t4.measured_dram_bw_gbps, 1234);
  std::remove(path.c_str());
}

TEST(ModelFile, RejectsWrongFormatAndBadJsonNamingTheFile) {
  const std::string path = ::testing::TempDir() + "/bad.json";
  {
    std::ofstream(path) << "{\"format\": \"other\"}";
  }
  try {
    load_model(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  {
    std::ofstream(path) << "{\"format\": \"kcast-model\", ";
  }
  EXPECT_THROW(load_model(path), InputError);
  std::remove(path.c_str());
}

TEST(ModelFile, FailedSaveLeavesExistingFileUntouched) {
  const std::string dir = ::testing::TempDir() + "/no-such-dir-kcast/m.json";
  LoadedModel m{CostModel(ModelParams(), default_arch_facts()), {}, {}, {}, "x"};
  EXPECT_THROW(save_model(m, dir), InputError);
}

TEST(ModelFile, ShippedDefaultModelLoads) {
  const LoadedModel& m = default_model();
  EXPECT_FALSE(m.gpus.empty()) << "default model carries the published microbenchmark figures";
  EXPECT_GT(m.model.params()[kEffSimt], 0.2);
}

}  // namespace
}  // namespace kcast

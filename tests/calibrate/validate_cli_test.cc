// `kcast validate` through the binary: --holdout-gpu refits without the GPU and scores only it, in
// absolute and transfer mode; JSON carries per-GPU/class statistics.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

// Streaming kernels of several sizes measured on two GPUs with bandwidth-proportional times, plus a
// shared framework floor: the model can fit this, and the same kernels exist on both GPUs.
std::string write_measurements() {
  const std::string path = ::testing::TempDir() + "/validate_meas.csv";
  std::ofstream o(path);
  o << "name,class,bytes,duration_us,gpu,context\n";
  for (int i = 1; i <= 30; ++i) {
    const double bytes = 1e6 * i * i;
    o << "copy" << i << ",elementwise," << bytes << "," << 10 + bytes / 1.3e6 << ",A100-SXM4-80GB,rig\n";
    o << "copy" << i << ",elementwise," << bytes << "," << 10 + bytes / 0.7e6 << ",V100-SXM2-32GB,rig\n";
  }
  return path;
}

TEST(ValidateCli, HoldoutScoresOnlyTheHeldOutGpu) {
  const std::string meas = write_measurements();
  const RunResult r = run_kcast("validate --measurements '" + meas + "' --holdout-gpu 'Tesla V100-SXM2-32GB' --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["holdout_gpus"], nlohmann::json::array({"V100-SXM2-32GB"}));
  std::set<std::string> modes;
  for (const auto& s : j["scores"]) {
    EXPECT_EQ(s["gpu"], "V100-SXM2-32GB");
    modes.insert(s["mode"].get<std::string>());
    if (s["mode"] == "transfer") {
      EXPECT_EQ(s["source_gpu"], "A100-SXM4-80GB");
    }
    EXPECT_EQ(s["rows"], 30);
    EXPECT_GE(s["p90_err"].get<double>(), s["median_err"].get<double>());
  }
  EXPECT_EQ(modes, (std::set<std::string>{"absolute", "transfer"}));
}

// T4 held out of `meas`, scored with a model that carries nothing for it and with one that carries
// `t4_fitted` (a fitted per-board value, as JSON): the held-out board's fitted values came from its
// own measurements, so both must score it identically.
void expect_holdout_ignores(const std::string& meas, const std::string& t4_fitted, const std::string& tag) {
  auto score = [&](const std::string& model) {
    const RunResult r = run_kcast("validate --measurements '" + meas + "' --model '" + model +
                                  "' --holdout-gpu T4 --no-transfer --format json");
    EXPECT_EQ(r.rc, 0) << r.out;
    return nlohmann::json::parse(r.out)["scores"][0]["median_err"].get<double>();
  };
  const std::string plain = ::testing::TempDir() + "/plain_" + tag + ".json";
  const std::string leaky = ::testing::TempDir() + "/leaky_" + tag + ".json";
  std::ofstream(plain) << R"({"format":"kcast-model","version":1})";
  std::ofstream(leaky) << R"({"format":"kcast-model","version":1,"gpus":{"T4":)" << t4_fitted << "}}";
  EXPECT_DOUBLE_EQ(score(plain), score(leaky)) << t4_fitted;
}

// The SGEMM scale, on FP32 GEMMs.
TEST(ValidateCli, HeldOutBoardsFittedScaleDoesNotLeak) {
  const std::string meas = ::testing::TempDir() + "/validate_sgemm.csv";
  {
    std::ofstream o(meas);
    o << "name,class,dtype,m,n,k,duration_us,gpu\n";
    for (int i = 1; i <= 60; ++i) {
      const int n = 256 * (1 + i % 8), k = 128 * (1 + i % 5);
      o << "sgemm,gemm,fp32,1024," << n << "," << k << "," << 2.0 * 1024 * n * k / 10e6 << ",T4\n";
      o << "sgemm,gemm,fp32,1024," << n << "," << k << "," << 2.0 * 1024 * n * k / 8e6 << ",P4\n";
    }
  }
  expect_holdout_ignores(meas, R"({"sgemm_scale":2.5})", "sgemm");
}

// The rig scale (context floors of the machine the board was measured in), on framework-timed adds.
TEST(ValidateCli, HeldOutBoardsRigScaleDoesNotLeak) {
  const std::string meas = ::testing::TempDir() + "/validate_rig.csv";
  {
    std::ofstream o(meas);
    o << "name,class,dtype,bytes,duration_us,gpu,context\n";
    for (int i = 1; i <= 60; ++i) {
      const double bytes = 1e4 * i * i;
      o << "add,elementwise,fp32," << bytes << "," << 20 + bytes / 250e3 << ",T4,bench\n";
      o << "add,elementwise,fp32," << bytes << "," << 30 + bytes / 150e3 << ",P4,bench\n";
    }
  }
  expect_holdout_ignores(meas, R"({"context_scale":3.0})", "rig");
}

TEST(ValidateCli, UnknownHoldoutGpuIsAUsageError) {
  const std::string meas = write_measurements();
  const RunResult r = run_kcast("validate --measurements '" + meas + "' --holdout-gpu 'Tesla Z9'", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("unknown GPU 'Tesla Z9'"), std::string::npos) << r.out;
}

TEST(ValidateCli, HoldingOutAGpuWithoutRowsIsAnError) {
  const std::string meas = write_measurements();
  const RunResult r = run_kcast("validate --measurements '" + meas + "' --holdout-gpu T4", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("no measured rows on the held-out GPU"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kcast

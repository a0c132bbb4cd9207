// `kcast calibrate` through the binary: every shipped microbenchmark file becomes a model that
// `kcast predict --model` uses, and the measured figures change that GPU's prediction; a failed
// calibration leaves an existing model file untouched.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;
namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Kernel time of a memory-bound elementwise kernel and a large BF16 GEMM on `gpu` under `model`.
double predict_us(const std::string& kernels, const std::string& gpu, const std::string& model) {
  const RunResult r = run_kcast("predict --kernels '" + kernels + "' --gpu '" + gpu + "' --mode absolute --format json" +
                                (model.empty() ? "" : " --model '" + model + "'"));
  EXPECT_EQ(r.rc, 0) << r.out;
  return nlohmann::json::parse(r.out)["predictions"][0]["kernel_us"].get<double>();
}

TEST(CalibrateCli, EveryShippedMicrobenchFileCalibratesAModelPredictUses) {
  const std::string dir = ::testing::TempDir();
  const std::string kernels = dir + "/mb_kernels.csv";
  std::ofstream(kernels) << "name,class,dtype,m,n,k,bytes\n"
                            "stream,elementwise,fp32,,,,4000000000\n"
                            "gemm,gemm,bf16,8192,8192,8192,\n";
  // A plain starting model (no GPU overrides), so each file's effect is visible on its own.
  const std::string initial = std::string(KCAST_SOURCE_DIR) + "/data/models/initial.json";
  int files = 0;
  for (const auto& e : fs::directory_iterator(std::string(KCAST_SOURCE_DIR) + "/data/microbench")) {
    if (e.path().extension() != ".csv") continue;
    ++files;
    const std::string out = dir + "/mb_model.json";
    const RunResult r = run_kcast("calibrate --base '" + initial + "' --microbench '" + e.path().string() + "' -o '" + out + "'");
    ASSERT_EQ(r.rc, 0) << e.path() << "\n" << r.out;
    const nlohmann::json m = nlohmann::json::parse(slurp(out));
    ASSERT_EQ(m["gpus"].size(), 1u) << e.path();
    const std::string gpu = m["gpus"].begin().key();
    const double before = predict_us(kernels, gpu, initial);
    const double after = predict_us(kernels, gpu, out);
    EXPECT_GT(after, 0) << gpu;
    EXPECT_NE(before, after) << gpu << ": the measured figures should change the prediction";
  }
  EXPECT_GE(files, 10);
}

TEST(CalibrateCli, FailedCalibrationKeepsTheExistingModelFile) {
  const std::string dir = ::testing::TempDir();
  const std::string out = dir + "/keep.json";
  std::ofstream(out) << "precious";
  const std::string bad = dir + "/bad_measurements.csv";
  std::ofstream(bad) << "name,duration_us,gpu\nk,abc,T4\n";
  const RunResult r = run_kcast("calibrate --measurements '" + bad + "' -o '" + out + "'", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("bad_measurements.csv:2: column 'duration_us'"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(out), "precious");
}

}  // namespace
}  // namespace kcast

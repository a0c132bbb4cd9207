// `kcast validate` through the binary: --holdout-gpu refits without the GPU and scores only it, in
// absolute and transfer mode; JSON carries per-GPU/class statistics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

// Streaming kernels of several sizes measured on two GPUs with bandwidth-proportional times, plus a
// shared framework floor: the model can fit this, and the same kernels exist on both GPUs.
// One file per test: ctest runs the tests of this file in parallel processes.
std::string write_measurements() {
  const std::string path = ::testing::TempDir() + "/validate_meas_" +
                           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv";
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
  // The absolute score is the rows' own: each per-row line carries the measurement written above
  // (10 + bytes / 0.7e6 us on V100), its error is predicted / measured - 1, and their median |error|
  // is the score's median.
  const std::string rows_csv = meas + ".rows.csv";
  const RunResult pr = run_kcast("validate --measurements '" + meas + "' --holdout-gpu V100-SXM2-32GB --per-row '" +
                                 rows_csv + "' --format json");
  ASSERT_EQ(pr.rc, 0) << pr.out;
  std::ifstream in(rows_csv);
  std::string line;
  std::getline(in, line);
  ASSERT_EQ(line, "gpu,class,dtype,context,batch,m,n,k,flops,bytes,measured_us,predicted_us,bound,rel_err");
  std::vector<double> errs;
  while (std::getline(in, line)) {
    std::vector<std::string> c;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) c.push_back(f);
    ASSERT_EQ(c.size(), 14u) << line;
    if (c[0] != "V100-SXM2-32GB") continue;
    const double bytes = std::stod(c[9]), measured = std::stod(c[10]), predicted = std::stod(c[11]);
    EXPECT_NEAR(measured, 10 + bytes / 0.7e6, 1e-3 * measured) << line;
    EXPECT_NEAR(std::stod(c[13]), predicted / measured - 1, 1e-4) << line;
    errs.push_back(std::fabs(predicted / measured - 1));
  }
  ASSERT_EQ(errs.size(), 30u);
  std::sort(errs.begin(), errs.end());
  double absolute_median = -1;
  const nlohmann::json scored = nlohmann::json::parse(pr.out);
  for (const auto& s : scored["scores"])
    if (s["mode"] == "absolute" && s["class"] == "all") absolute_median = s["median_err"].get<double>();
  EXPECT_NEAR(absolute_median, (errs[14] + errs[15]) / 2, 1e-6);
  std::remove(rows_csv.c_str());
}

TEST(ValidateCli, MeasuredRowsWithoutWorkAreLeftOutAndCounted) {
  // Nsight Systems rows (a name and a duration, no shape, flops or bytes) next to the 30 kernels
  // of each GPU: they would pair with one another in transfer scoring and be scored at the floor.
  const std::string meas = write_measurements();
  {
    std::ofstream o(meas, std::ios::app);
    for (int i = 0; i < 3; ++i)
      for (const char* gpu : {"A100-SXM4-80GB", "V100-SXM2-32GB"}) o << "nsys" << i << ",elementwise,," << 50 + i << "," << gpu << ",rig\n";
  }
  const RunResult r = run_kcast("validate --measurements '" + meas + "' --holdout-gpu V100-SXM2-32GB --format json", true);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("left out 6 measured rows without work"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  for (const auto& s : j["scores"]) EXPECT_EQ(s["rows"], 30) << s;
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

// --without-names scores rows as a GPU without a trace of its own sees them: a named SGEMM is
// predicted like the same shape without a name, while by default its name's tile counts.
TEST(ValidateCli, WithoutNamesScoresNamedSgemmsAsUnnamed) {
  const std::string meas = ::testing::TempDir() + "/validate_names.csv";
  {
    std::ofstream o(meas);
    o << "name,class,dtype,m,n,k,grid_x,grid_y,grid_z,duration_us,gpu\n";
    o << "volta_sgemm_32x32_sliced1x4_tn,gemm,fp32,4096,4096,4096,128,128,1,9000,V100-PCIe-32GB\n";
    o << "sgemm,gemm,fp32,4096,4096,4096,128,128,1,9000,V100-PCIe-32GB\n";
  }
  auto predicted = [&](const std::string& extra) {
    const std::string rows = ::testing::TempDir() + "/validate_names_rows.csv";
    const RunResult r = run_kcast("validate --measurements '" + meas + "' --no-transfer --per-row '" + rows + "' " + extra);
    EXPECT_EQ(r.rc, 0) << r.out;
    std::ifstream in(rows);
    std::string line;
    std::getline(in, line);  // header; predicted_us is the 12th column
    std::vector<double> out;
    while (std::getline(in, line)) {
      std::stringstream ss(line);
      std::string cell;
      for (int c = 0; c < 12; ++c) std::getline(ss, cell, ',');
      out.push_back(std::stod(cell));
    }
    return out;
  };
  const std::vector<double> named = predicted(""), blind = predicted("--without-names");
  ASSERT_EQ(named.size(), 2u);
  ASSERT_EQ(blind.size(), 2u);
  EXPECT_GT(std::fabs(named[0] / named[1] - 1.0), 0.01);  // by default the name's small tile counts
  EXPECT_EQ(blind[0], blind[1]);
  EXPECT_EQ(blind[1], named[1]);
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

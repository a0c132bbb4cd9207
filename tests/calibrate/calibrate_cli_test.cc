// `kcast calibrate` through the binary: every shipped microbenchmark file becomes a model that
// `kcast predict --model` uses, and the measured figures change that GPU's prediction; a failed
// calibration leaves an existing model file untouched.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>

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

// model.json names its inputs by size and CRC-32 of the bytes that were parsed (each file is
// read once), with the rows each contributed.
TEST(CalibrateCli, ProvenanceNamesEachInputBySizeCrcAndRows) {
  const std::string dir = ::testing::TempDir();
  const std::string meas = dir + "/prov_measurements.csv";
  std::ofstream(meas) << "name,class,dtype,bytes,duration_us,gpu\n"
                         "add,elementwise,fp32,4000000,12.5,T4\n"
                         "add,elementwise,fp32,40000000,140,T4\n"
                         "add,elementwise,fp32,400000000,1400,\n";  // no gpu: not a measurement
  const std::string mb = std::string(KCAST_SOURCE_DIR) + "/data/microbench/" +
                         fs::directory_iterator(std::string(KCAST_SOURCE_DIR) + "/data/microbench")->path().filename().string();
  const std::string out = dir + "/prov_model.json";
  const RunResult r = run_kcast("calibrate --max-iterations 2 --measurements '" + meas + "' --microbench '" + mb +
                                "' -o '" + out + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json inputs = nlohmann::json::parse(slurp(out))["provenance"]["inputs"];
  ASSERT_EQ(inputs.size(), 2u);
  for (const auto& [file, rows] : {std::pair{mb, -1}, std::pair{meas, 2}}) {
    const std::string bytes = slurp(file);
    const auto it = std::find_if(inputs.begin(), inputs.end(), [&](const auto& e) { return e["file"] == file; });
    ASSERT_NE(it, inputs.end()) << file;
    EXPECT_EQ((*it)["bytes"].template get<size_t>(), bytes.size()) << file;
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()), uInt(bytes.size()));
    EXPECT_EQ(std::stoul((*it)["crc32"].template get<std::string>(), nullptr, 16), crc) << file;
    if (rows >= 0) {
      EXPECT_EQ((*it)["rows"].template get<int>(), rows);
    }
  }
}

// --class fits only the measured kernels of the named classes: the model's fit report and its
// provenance count those rows alone, and a term only the other rows inform keeps its base value.
TEST(CalibrateCli, ClassOptionFitsOnlyThatClassesRows) {
  const std::string dir = ::testing::TempDir();
  const std::string meas = dir + "/class_measurements.csv";
  std::ofstream(meas) << "name,class,dtype,m,n,k,bytes,duration_us,gpu\n"
                         "add,elementwise,fp32,,,,40000000,160,T4\n"
                         "add,elementwise,fp32,,,,400000000,1500,T4\n"
                         "sgemm,gemm,fp32,2048,2048,2048,,9000,T4\n"
                         "sgemm,gemm,fp32,4096,4096,4096,,70000,T4\n";
  const std::string base = std::string(KCAST_SOURCE_DIR) + "/data/models/initial.json";
  const std::string out = dir + "/class_model.json";
  const RunResult r = run_kcast("calibrate --base '" + base + "' --measurements '" + meas +
                                "' --class elementwise -o '" + out + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json m = nlohmann::json::parse(slurp(out));
  for (const auto& line : m["fit"]["per_class_gpu"])
    EXPECT_TRUE(line["class"] == "elementwise" || line["class"] == "all") << line.dump();
  EXPECT_EQ(m["provenance"]["inputs"][0]["rows"].get<int>(), 2);
  EXPECT_EQ(m["params"]["eff_simt"].get<double>(), 0.75);  // the prior: no SGEMM row was fitted
  EXPECT_NE(m["params"]["stream_mem_eff"].get<double>(), 1.0);

  const RunResult bad = run_kcast("calibrate --measurements '" + meas + "' --class elementwize -o '" + out + "'", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("--class"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("elementwize"), std::string::npos) << bad.out;
  const RunResult none = run_kcast("calibrate --measurements '" + meas + "' --class softmax -o '" + out + "'", true);
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.out.find("no measured kernel of that class"), std::string::npos) << none.out;
}


// Calibration believes its microbenchmarks, but says when a figure cannot be right (#42 item 5): above
// the datasheet's peak or below a tenth of it, naming file, line, GPU and figure; a device that is not
// in the database is an error naming the file and line. The shipped files raise no such warning.
TEST(CalibrateCli, ImplausibleMicrobenchFiguresWarnAndUnknownDevicesNameTheFile) {
  const std::string mb = kcast::testing::temp_path("implausible.csv"), out = kcast::testing::temp_path("m.json");
  {
    std::ofstream f(mb);
    f << "benchmark,dtype,size,value,unit,spread,device,notes\n"
         "dram_bw,,1073741824,11000,GB/s,,H100-SXM,three times the datasheet\n"
         "gemm_peak,bf16,,50,TFLOP/s,,H100-SXM,a twentieth of it\n"
         "fma_fp32,,,60,TFLOP/s,,H100-SXM,plausible\n";
  }
  RunResult r = run_kcast("calibrate --microbench '" + mb + "' -o '" + out + "'", true);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find(mb + ":2: warning: dram_bw on H100-SXM: 11000 GB/s is 3.28x the datasheet's 3350 GB/s"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(mb + ":3: warning: gemm_peak bf16 on H100-SXM: 50 TFLOP/s is 0.05x"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("fma_fp32"), std::string::npos) << r.out;
  {
    std::ofstream f(mb);
    f << "benchmark,dtype,size,value,unit,spread,device,notes\ndram_bw,,1073741824,3000,GB/s,,H999-XYZ,\n";
  }
  r = run_kcast("calibrate --microbench '" + mb + "' -o '" + out + "'", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find(mb + ":2: column 'device': unknown GPU 'H999-XYZ'"), std::string::npos) << r.out;
  // Published figures for the shipped GPUs: none implausible.
  const std::string all = std::string(KCAST_SOURCE_DIR) + "/data/microbench";
  for (const auto& e : std::filesystem::directory_iterator(all)) {
    r = run_kcast("calibrate --microbench '" + e.path().string() + "' -o '" + out + "'", true);
    EXPECT_EQ(r.out.find("warning"), std::string::npos) << e.path() << "\n" << r.out;
  }
  std::remove(mb.c_str());
  std::remove(out.c_str());
}

}  // namespace
}  // namespace kcast

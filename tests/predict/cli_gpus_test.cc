// `kcast gpus NAME` through the binary: besides the database row, the cost model's view of the GPU
// (the power limit's clock fraction, sustained rates, where the SGEMM scale comes from).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;
using nlohmann::json;

json gpu_json(const std::string& name) {
  const RunResult r = run_kcast("gpus " + name + " --format json");
  EXPECT_EQ(r.rc, 0) << r.out;
  return json::parse(r.out);
}

// The 72 W L4 holds TDP / (SMs x boost GHz x an Ada SM's 1.1 W per GHz, data/archs.csv) of its
// boost clock under dense math; the 700 W H100 SXM is not power-limited.
TEST(GpusCli, OneGpuShowsThePowerLimitsClockFraction) {
  const json l4 = gpu_json("L4");
  const double expected = l4["tdp_w"].get<double>() /
                          (l4["sm_count"].get<double>() * l4["boost_clock_mhz"].get<double>() * 1e-3 * 1.1);
  ASSERT_LT(expected, 1.0);
  EXPECT_NEAR(l4["model"]["dense_math_clock_fraction"]["bf16"].get<double>(), expected, 1e-9);
  EXPECT_GT(l4["model"]["gemm_tflops_at_boost"]["bf16"].get<double>(), 0);
  EXPECT_EQ(gpu_json("H100-SXM")["model"]["dense_math_clock_fraction"]["bf16"].get<double>(), 1.0);
}

// The memory latency gpus shows is the shipped model's mem_latency_cycles at the boost clock (and the
// what-if knob mem_latency's baseline): an A100 waits longer than an H100 for the same cycles.
TEST(GpusCli, MemoryLatencyIsTheModelsCyclesAtTheBoostClock) {
  std::ifstream in(std::string(KCAST_SOURCE_DIR) + "/data/models/default.json");
  const double cycles = json::parse(in)["params"]["mem_latency_cycles"].get<double>();
  for (const char* name : {"H100-SXM", "A100-SXM4-80GB"}) {
    const json g = gpu_json(name);
    EXPECT_NEAR(g["model"]["mem_latency_us"].get<double>(), cycles / g["boost_clock_mhz"].get<double>(), 1e-9) << name;
  }
  const RunResult t = run_kcast("gpus H100-SXM");
  EXPECT_NE(t.out.find("memory latency"), std::string::npos) << t.out;
}

// A V100 SXM2 has no measured FP32 GEMMs of its own: it takes the V100 PCIe's fitted SGEMM scale
// from the shipped model; a board of an unmeasured chip runs at the typical board's.
TEST(GpusCli, SgemmScaleSaysWhereItComesFrom) {
  std::ifstream in(std::string(KCAST_SOURCE_DIR) + "/data/models/default.json");
  const json model = json::parse(in);
  const json sxm2 = gpu_json("V100-SXM2-16GB")["model"];
  EXPECT_EQ(sxm2["sgemm_scale"].get<double>(), model["gpus"]["V100-PCIe-32GB"]["sgemm_scale"].get<double>());
  EXPECT_NE(sxm2["sgemm_scale_from"].get<std::string>().find("sibling"), std::string::npos);
  const json l4 = gpu_json("L4")["model"];
  EXPECT_TRUE(l4["sgemm_scale"].is_null());
  EXPECT_EQ(l4["sgemm_scale_from"], "typical board");
  EXPECT_EQ(gpu_json("V100-PCIe-32GB")["model"]["sgemm_scale_from"], "own calibration");
}

// The sustained DRAM figure says where it comes from: the MI210's own published STREAM triad; the
// MI250 GCD, with the MI210's memory, its sibling's; the H100 SXM, with no figure or sibling, its
// vendor's measured boards' median fraction of datasheet bandwidth (at most its datasheet).
TEST(GpusCli, DramBandwidthSaysWhereItComesFrom) {
  const json mi210 = gpu_json("MI210")["model"], mi250 = gpu_json("MI250")["model"];
  EXPECT_EQ(mi210["dram_bw_from"], "own measurement");
  EXPECT_NE(mi250["dram_bw_from"].get<std::string>().find("sibling"), std::string::npos);
  EXPECT_EQ(mi250["dram_bw_gbps"].get<double>(), mi210["dram_bw_gbps"].get<double>());
  const json h100 = gpu_json("H100-SXM");
  EXPECT_NE(h100["model"]["dram_bw_from"].get<std::string>().find("vendor"), std::string::npos);
  EXPECT_LT(h100["model"]["dram_bw_gbps"].get<double>(), h100["dram_bw_gbps"].get<double>());
}

// The shipped model measured the A100 80GB PCIe on convolutions alone: they keep its own convolution
// scale while its GEMMs take the A100 PCIe 40GB's SGEMM scale, whose convolutions in turn take the
// 80GB board's.
TEST(GpusCli, ConvolutionScaleSaysWhereItComesFrom) {
  std::ifstream in(std::string(KCAST_SOURCE_DIR) + "/data/models/default.json");
  const json model = json::parse(in);
  const json& fitted = model["gpus"];
  const json pcie80 = gpu_json("A100-PCIe-80GB")["model"], pcie40 = gpu_json("A100-PCIe-40GB")["model"];
  EXPECT_EQ(pcie80["conv_scale_from"], "own calibration");
  EXPECT_EQ(pcie80["conv_scale"].get<double>(), fitted["A100-PCIe-80GB"]["conv_scale"].get<double>());
  EXPECT_EQ(pcie80["sgemm_scale"].get<double>(), fitted["A100-PCIe-40GB"]["sgemm_scale"].get<double>());
  EXPECT_NE(pcie80["sgemm_scale_from"].get<std::string>().find("sibling"), std::string::npos);
  EXPECT_EQ(pcie40["conv_scale"].get<double>(), fitted["A100-PCIe-80GB"]["conv_scale"].get<double>());
  EXPECT_EQ(gpu_json("V100-PCIe-32GB")["model"]["conv_scale_from"], "its SGEMM scale");
}

TEST(GpusCli, AttentionSaysWhereMmaSyncKernelsRunSlower) {
  // data/archs.csv: Hopper runs FlashAttention-2's mma.sync kernels at a fraction of its own share.
  const auto h100 = gpu_json("H100-SXM")["model"], a100 = gpu_json("A100-SXM4-80GB")["model"];
  EXPECT_LT(h100["mma_sync_fraction"].get<double>(), 1.0);
  EXPECT_EQ(a100["mma_sync_fraction"].get<double>(), 1.0);
  EXPECT_EQ(h100["attention_eff"], a100["attention_eff"]);
}

TEST(GpusCli, RowKernelsResidencyIsTheArchitecturesThreadsPerSm) {
  // data/archs.csv: a Turing SM holds 1024 threads, an Ampere GA100 SM 2048, an Ada SM 1536.
  EXPECT_EQ(gpu_json("T4")["model"]["threads_per_sm"], 1024);
  EXPECT_EQ(gpu_json("A100-SXM4-80GB")["model"]["threads_per_sm"], 2048);
  EXPECT_EQ(gpu_json("L4")["model"]["threads_per_sm"], 1536);
}

TEST(GpusCli, ModelWithoutAGpuIsAnErrorNamingTheOption) {
  const RunResult r = run_kcast("gpus --model x.json", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("--model"), std::string::npos) << r.out;
  // csv has no model view: a --model there would be ignored, so it is refused too.
  const RunResult csv = run_kcast("gpus L4 --format csv --model x.json", true);
  EXPECT_EQ(csv.rc, 2);
  EXPECT_NE(csv.out.find("--model"), std::string::npos) << csv.out;
}

}  // namespace
}  // namespace kcast

namespace kcast::testing {
namespace {

// Runs kcast with KCAST_GPUS set to `paths` (the child inherits the environment).
RunResult with_gpus(const std::string& paths, const std::string& args) {
  ::setenv("KCAST_GPUS", paths.c_str(), 1);
  RunResult r = run_kcast(args, true);
  ::unsetenv("KCAST_GPUS");
  return r;
}

TEST(GpusFile, AddsAGpuThatDoesNotExistAndReplacesAShippedOne) {
  const std::string f = temp_path("extra_gpus.csv");
  // A future board, and the H100 SXM with twice its memory bandwidth (the file's row replaces the shipped one).
  std::ofstream(f) << "name,arch,compute_capability,sm_count,boost_clock_mhz,memory_gb,dram_bw_gbps,l2_mb,"
                      "fp32_tflops,bf16_tflops,tensor_cores\n"
                      "NextGen,Blackwell,10.0,160,2000,288,13000,200,80,4000,1\n"
                      "NVIDIA H100 80GB HBM3,Hopper,9.0,132,1980,80,6700,50,67,989.4,1\n";
  const RunResult g = with_gpus(f, "gpus NextGen --format json");
  ASSERT_EQ(g.rc, 0) << g.out;
  EXPECT_NE(g.out.find("\"sm_count\": 160"), std::string::npos) << g.out;
  // A memory-bound kernel: the replaced H100 runs it faster than the shipped one, by at most 2x.
  const std::string list = temp_path("stream.csv");
  std::ofstream(list) << "name,class,dtype,bytes\nstream,elementwise,bf16,4000000000\n";
  auto step = [&](const RunResult& r) {
    return nlohmann::json::parse(r.out.substr(r.out.find('{')))["predictions"][0]["step_us"].get<double>();
  };
  const RunResult shipped = run_kcast("predict --kernels '" + list + "' --gpu H100-SXM --format json", true);
  const RunResult doubled = with_gpus(f, "predict --kernels '" + list + "' --gpu H100-SXM --format json");
  ASSERT_EQ(shipped.rc, 0) << shipped.out;
  ASSERT_EQ(doubled.rc, 0) << doubled.out;
  EXPECT_LT(step(doubled), 0.6 * step(shipped));
  EXPECT_GT(step(doubled), 0.5 * step(shipped) * (1 - 1e-9));
  EXPECT_EQ(with_gpus(f, "predict --kernels '" + list + "' --gpu NextGen").rc, 0);
  std::remove(f.c_str());
  std::remove(list.c_str());
}

TEST(GpusFile, BadFilesAreErrorsNamingThem) {
  const std::string f = temp_path("bad_gpus.csv");
  std::ofstream(f) << "name,sm_count,boost_clock_mhz,dram_bw_gbps,fp32_tflops\nX,many,1000,100,1\n";
  const RunResult bad = with_gpus(f, "gpus");
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_NE(bad.out.find("bad_gpus.csv:2"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("sm_count"), std::string::npos) << bad.out;
  const RunResult missing = with_gpus("/no/such/gpus.csv", "gpus");
  EXPECT_EQ(missing.rc, 2) << missing.out;
  EXPECT_NE(missing.out.find("KCAST_GPUS: /no/such/gpus.csv"), std::string::npos) << missing.out;
  std::remove(f.c_str());
}

}  // namespace
}  // namespace kcast::testing

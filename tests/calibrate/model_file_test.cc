#include "calibrate/model_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <initializer_list>

#include "io/gpu_database_csv.h"
#include "model/error.h"
#include "tests/input_error_of.h"

namespace kcast {
namespace {

using kcast::testing::input_error_of;

TEST(ModelFile, RoundTripsParamsContextsAndGpuOverrides) {
  LoadedModel m{CostModel(ModelParams(), default_arch_facts()), {}, {}, {}, "x"};
  m.model.mutable_params()[kEffSimt] = 0.6543;
  m.model.mutable_params().context_overhead_us["neusight:add"] = 21.5;
  m.model.mutable_params().context_a_pass_bytes["aiconfigurator:fp8"] = 5;
  GpuMeasured g;
  g.dram_bw_gbps = 1234;
  g.stream_latency_us = 0.51;
  g.gemm_eff[int(DType::bf16)] = 0.77;
  g.source = "unit test";
  m.gpus["T4"] = g;
  const std::string path = ::testing::TempDir() + "/m.json";
  save_model(m, path);
  LoadedModel back = load_model(path);
  EXPECT_DOUBLE_EQ(back.model.params()[kEffSimt], 0.6543);
  EXPECT_DOUBLE_EQ(back.model.params().context_overhead("neusight:add"), 21.5);
  EXPECT_DOUBLE_EQ(back.model.params().context_a_pass("aiconfigurator:fp8"), 5.0);
  EXPECT_DOUBLE_EQ(back.model.params().context_a_pass("neusight:add"), 0.0);
  ASSERT_EQ(back.gpus.count("T4"), 1u);
  EXPECT_DOUBLE_EQ(back.gpus["T4"].dram_bw_gbps, 1234);
  EXPECT_DOUBLE_EQ(back.gpus["T4"].gemm_eff[int(DType::bf16)], 0.77);
  // The override reaches the GPU's capabilities.
  GpuSpec t4 = back.spec_for(default_gpu_database().resolve("T4"));
  EXPECT_DOUBLE_EQ(t4.measured_dram_bw_gbps, 1234);
  EXPECT_DOUBLE_EQ(t4.measured_stream_latency_us, 0.51);
  std::remove(path.c_str());
}

TEST(ModelFile, RejectsWrongFormatAndBadJsonNamingTheFile) {
  const std::string path = ::testing::TempDir() + "/bad.json";
  {
    std::ofstream(path) << "{\"format\": \"other\"}";
  }
  const std::string wrong_format = input_error_of([&] { load_model(path); });
  EXPECT_NE(wrong_format.find(path), std::string::npos) << wrong_format;
  {
    std::ofstream(path) << "{\"format\": \"kcast-model\", ";
  }
  EXPECT_THROW(load_model(path), InputError);
  // A number too large for a double is an input error naming the file, not an internal error.
  {
    std::ofstream(path) << R"({"format":"kcast-model","version":1,"params":{"floor_us":1e99999}})";
  }
  const std::string too_large = input_error_of([&] { load_model(path); });
  EXPECT_NE(too_large.find(path + ": invalid JSON"), std::string::npos) << too_large;
  std::remove(path.c_str());
}

TEST(ModelFile, RejectsANegativeOperandPassNamingTheContext) {
  const std::string path = ::testing::TempDir() + "/pass.json";
  {
    std::ofstream(path) << R"({"format":"kcast-model","version":1,"context_a_pass_bytes":{"bench:fp8":-3}})";
  }
  const std::string err = input_error_of([&] { load_model(path); });
  EXPECT_NE(err.find(path + ": context_a_pass_bytes.bench:fp8"), std::string::npos) << err;
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

namespace kcast {
namespace {

// A model with no measured GPUs yet; `measure` gives one a figure.
LoadedModel bare_model() { return LoadedModel{CostModel(ModelParams(), default_arch_facts()), {}, {}, {}, "x"}; }
void measure(LoadedModel& m, const char* gpu, double GpuMeasured::*field, double value) {
  m.gpus[gpu].*field = value;
}

TEST(ModelFile, BoardWithoutBandwidthMeasurementTakesItsMemorySiblings) {
  LoadedModel m = bare_model();
  measure(m, "V100-PCIe-16GB", &GpuMeasured::dram_bw_gbps, 814);  // same GV100 and 900 GB/s HBM2 as the 32GB
  const GpuDatabase& db = default_gpu_database();
  EXPECT_DOUBLE_EQ(m.spec_for(db.resolve("V100-PCIe-32GB")).measured_dram_bw_gbps, 814);
  // Its own measurement wins over a sibling's.
  measure(m, "V100-PCIe-32GB", &GpuMeasured::dram_bw_gbps, 850);
  EXPECT_DOUBLE_EQ(m.spec_for(db.resolve("V100-PCIe-32GB")).measured_dram_bw_gbps, 850);
}

// A board with no memory sibling takes the median fraction of datasheet bandwidth its own vendor's
// measured boards sustain; another vendor's boards do not count, and with none of its vendor the
// GPU has no figure (mem_eff applies).
TEST(ModelFile, BoardWithoutMemorySiblingTakesItsVendorsMedianFraction) {
  LoadedModel m = bare_model();
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& t4 = db.resolve("T4");
  const GpuSpec& mi100 = db.resolve("MI100");
  EXPECT_FALSE(known(m.spec_for(t4).measured_dram_bw_gbps));
  // NVIDIA boards at 0.9, 0.8 and 0.6 of their datasheets; an AMD board at 0.5 of its own.
  const GpuSpec& v100 = db.resolve("V100-PCIe-16GB");
  const GpuSpec& a100 = db.resolve("A100-SXM4-80GB");
  const GpuSpec& h200 = db.resolve("H200");
  measure(m, v100.name.c_str(), &GpuMeasured::dram_bw_gbps, 0.9 * v100.dram_bw_gbps);
  measure(m, a100.name.c_str(), &GpuMeasured::dram_bw_gbps, 0.8 * a100.dram_bw_gbps);
  measure(m, h200.name.c_str(), &GpuMeasured::dram_bw_gbps, 0.6 * h200.dram_bw_gbps);
  EXPECT_FALSE(known(m.spec_for(mi100).measured_dram_bw_gbps));  // no AMD board measured yet
  measure(m, "MI210", &GpuMeasured::dram_bw_gbps, 0.5 * db.resolve("MI210").dram_bw_gbps);
  EXPECT_NEAR(m.spec_for(t4).measured_dram_bw_gbps, 0.8 * t4.dram_bw_gbps, 1e-9);
  EXPECT_NEAR(m.spec_for(mi100).measured_dram_bw_gbps, 0.5 * mi100.dram_bw_gbps, 1e-9);
  // A memory sibling still wins over the vendor's median (V100 PCIe 32GB: the 16GB board's figure).
  EXPECT_DOUBLE_EQ(m.spec_for(db.resolve("V100-PCIe-32GB")).measured_dram_bw_gbps, 0.9 * v100.dram_bw_gbps);
  // Without siblings (a board's own figures only), nothing is borrowed.
  EXPECT_FALSE(known(m.spec_for(t4, false).measured_dram_bw_gbps));
}

// A board without its own SGEMM scale takes the median of its chip's measured boards (same compute
// capability and SM count); another chip of the same architecture does not count, and a board's own
// scale wins.
TEST(ModelFile, BoardWithoutSgemmScaleTakesItsChipSiblingsMedian) {
  LoadedModel m = bare_model();
  const GpuDatabase& db = default_gpu_database();
  auto scale_of = [&](const char* gpu) { return m.spec_for(db.resolve(gpu)).measured_sgemm_scale; };
  measure(m, "A100-PCIe-40GB", &GpuMeasured::sgemm_scale, 1.2);
  EXPECT_DOUBLE_EQ(scale_of("A100-SXM4-80GB"), 1.2);
  measure(m, "A100-PCIe-80GB", &GpuMeasured::sgemm_scale, 0.8);
  EXPECT_DOUBLE_EQ(scale_of("A100-SXM4-80GB"), 1.0);
  EXPECT_DOUBLE_EQ(scale_of("A100-PCIe-40GB"), 1.2);
  // GA102 (A40, compute capability 8.6) and GA100 boards are different chips.
  EXPECT_FALSE(known(scale_of("A40")));
  // Same compute capability, other SM count: the H100 PCIe (114 SMs) is not the SXM's 132-SM
  // configuration, which the H200 shares.
  measure(m, "H100-SXM", &GpuMeasured::sgemm_scale, 0.9);
  EXPECT_DOUBLE_EQ(scale_of("H200"), 0.9);
  EXPECT_FALSE(known(scale_of("H100-PCIe")));
}

// A streaming round trip follows the same rule (the chip's memory system); a board's own figure wins.
TEST(ModelFile, BoardWithoutStreamLatencyTakesItsChipSiblings) {
  LoadedModel m = bare_model();
  const GpuDatabase& db = default_gpu_database();
  auto latency_of = [&](const char* gpu) { return m.spec_for(db.resolve(gpu)).measured_stream_latency_us; };
  measure(m, "H200", &GpuMeasured::stream_latency_us, 0.55);
  EXPECT_DOUBLE_EQ(latency_of("H100-SXM"), 0.55);
  EXPECT_FALSE(known(latency_of("H100-PCIe")));
  measure(m, "H100-SXM", &GpuMeasured::stream_latency_us, 0.5);
  EXPECT_DOUBLE_EQ(latency_of("H100-SXM"), 0.5);
  EXPECT_FALSE(known(latency_of("A40")));
}

// Convolution scales follow the same sibling rule, from the chip's boards with measured convolutions;
// a board's GEMMs never take a sibling's convolution scale (cuDNN's kernels and cuBLAS's differ per
// board).
TEST(ModelFile, ConvolutionScaleHasItsOwnSiblings) {
  LoadedModel m = bare_model();
  const GpuDatabase& db = default_gpu_database();
  measure(m, "A100-PCIe-40GB", &GpuMeasured::sgemm_scale, 1.2);
  measure(m, "A100-PCIe-80GB", &GpuMeasured::conv_scale, 0.85);
  const GpuSpec pcie80 = m.spec_for(db.resolve("A100-PCIe-80GB"));
  EXPECT_DOUBLE_EQ(pcie80.measured_sgemm_scale, 1.2);  // its GEMMs: the sibling's SGEMM scale
  EXPECT_DOUBLE_EQ(pcie80.measured_conv_scale, 0.85);
  const GpuSpec pcie40 = m.spec_for(db.resolve("A100-PCIe-40GB"));
  EXPECT_DOUBLE_EQ(pcie40.measured_sgemm_scale, 1.2);
  EXPECT_DOUBLE_EQ(pcie40.measured_conv_scale, 0.85);  // its convolutions: the sibling's
  // Without siblings (what calibrate --microbench stores as a board's own), neither is borrowed.
  EXPECT_FALSE(known(m.spec_for(db.resolve("A100-SXM4-80GB"), false).measured_conv_scale));
  EXPECT_FALSE(known(m.spec_for(db.resolve("A100-SXM4-80GB"), false).measured_sgemm_scale));
  // A round trip through model.json keeps it.
  const LoadedModel back = model_from_json(model_to_json(m), "t.json");
  EXPECT_DOUBLE_EQ(back.gpus.at("A100-PCIe-80GB").conv_scale, 0.85);
}

}  // namespace
}  // namespace kcast

namespace kcast {
namespace {

TEST(ArchFacts, BatchedSgemmTileIsOneTileOrNone) {
  const auto t = parse_arch_facts(
      "compute_capability,tiles,simt_batched_tile\n"
      "6.0,128x128,64x128\n"
      "7.0,128x128,\n",
      "archs.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].simt_batched.m, 64);
  EXPECT_EQ(t[0].simt_batched.n, 128);
  EXPECT_EQ(t[1].simt_batched.m, 0);
  const std::string err = input_error_of([] {
    parse_arch_facts("compute_capability,tiles,simt_batched_tile\n8.0,128x128,128x128;64x64\n", "archs.csv");
  });
  EXPECT_NE(err.find("archs.csv:2: column 'simt_batched_tile'"), std::string::npos) << err;
}

// simt_long_k is a 0/1 flag (absent = 0); the shipped table sets it for Pascal only.
TEST(ArchFacts, LongKFlagIsReadAndSetForPascal) {
  const auto t = parse_arch_facts("compute_capability,tiles,simt_long_k\n6.0,128x128,1\n7.0,128x128,\n", "archs.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_TRUE(t[0].simt_long_k);
  EXPECT_FALSE(t[1].simt_long_k);
  for (const char* cc : {"6.0", "6.1"}) EXPECT_TRUE(find_arch_facts(default_arch_facts(), cc).simt_long_k) << cc;
  for (const char* cc : {"7.0", "7.5", "8.0", "9.0"})
    EXPECT_FALSE(find_arch_facts(default_arch_facts(), cc).simt_long_k) << cc;
  const std::string err =
      input_error_of([] { parse_arch_facts("compute_capability,tiles,simt_long_k\n6.0,128x128,yes\n", "archs.csv"); });
  EXPECT_NE(err.find("archs.csv:2: column 'simt_long_k'"), std::string::npos) << err;
}

// Which cuBLAS SGEMM kernel families an architecture runs: a list, empty for none; an unknown
// family is an error naming the file, line and column.
TEST(ArchFacts, SgemmFamiliesAreAListOfKnownNames) {
  const auto t = parse_arch_facts(
      "compute_capability,tiles,sgemm_families\n"
      "7.5,128x128,volta;turing\n"
      "9.0,128x128,\n",
      "archs.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_TRUE(t[0].runs(SgemmFamily::volta));
  EXPECT_TRUE(t[0].runs(SgemmFamily::turing));
  EXPECT_FALSE(t[0].runs(SgemmFamily::ampere));
  EXPECT_FALSE(t[0].runs(SgemmFamily::none));
  EXPECT_EQ(t[1].sgemm_families, 0u);
  const std::string msg = input_error_of(
      [] { parse_arch_facts("compute_capability,tiles,sgemm_families\n8.0,128x128,ampere;hopper\n", "archs.csv"); });
  EXPECT_NE(msg.find("archs.csv:2: column 'sgemm_families'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hopper"), std::string::npos) << msg;
}

// Each of `bad` in the one-number column `column` of an archs.csv row is an error naming the file,
// line and column.
void expect_bad_arch_cells(const std::string& column, std::initializer_list<const char*> bad) {
  for (const char* v : bad) {
    const std::string err = input_error_of([&] {
      parse_arch_facts("compute_capability,tiles," + column + "\n9.0,128x128," + v + "\n", "archs.csv");
    });
    EXPECT_NE(err.find("archs.csv:2: column '" + column + "'"), std::string::npos) << v << ": " << err;
  }
}

// An architecture's own power figure in `column`: a positive number; empty or absent = the fitted
// figure (0), and a figure that is not positive is an error naming the file, line and column.
void expect_positive_or_empty(const std::string& column, double ArchFacts::*field, double value) {
  const auto t = parse_arch_facts("compute_capability,tiles," + column + "\n9.0,128x128," + std::to_string(value) +
                                      "\n8.0,128x128,\n",
                                  "archs.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].*field, value) << column;
  EXPECT_EQ(t[1].*field, 0.0) << column;
  EXPECT_EQ(parse_arch_facts("compute_capability,tiles\n9.0,128x128\n", "old.csv")[0].*field, 0.0) << column;
  expect_bad_arch_cells(column, {"0", "-1", "-1.6", "lots", "more"});
}

// watts_per_sm_ghz: the power an SM of the architecture draws per GHz under dense math.
TEST(ArchFacts, SmPowerIsPositiveOrEmpty) {
  expect_positive_or_empty("watts_per_sm_ghz", &ArchFacts::watts_per_sm_ghz, 1.1);
}

// narrow_power_factor: its FP8 / FP4 SM power relative to BF16.
TEST(ArchFacts, NarrowPowerIsPositiveOrEmpty) {
  expect_positive_or_empty("narrow_power_factor", &ArchFacts::narrow_power_factor, 1.25);
}

// mma_sync_fraction: a share in (0, 1]; empty or absent = 1 (mma.sync is the native instruction).
TEST(ArchFacts, MmaSyncFractionIsAShareOrEmpty) {
  const auto t = parse_arch_facts("compute_capability,tiles,mma_sync_fraction\n9.0,128x128,0.58\n8.0,128x128,\n",
                                  "archs.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_DOUBLE_EQ(t[0].mma_sync_fraction, 0.58);
  EXPECT_EQ(t[1].mma_sync_fraction, 1.0);
  EXPECT_EQ(parse_arch_facts("compute_capability,tiles\n9.0,128x128\n", "old.csv")[0].mma_sync_fraction, 1.0);
  expect_bad_arch_cells("mma_sync_fraction", {"0", "1.5", "-0.2", "half"});
}

// threads_per_sm: the resident threads an SM holds; empty or absent = 2048, and a count outside
// 32..65536 (or not a number) is an error naming the file, line and column.
TEST(ArchFacts, ThreadsPerSmIsACountOrEmpty) {
  const auto t = parse_arch_facts("compute_capability,tiles,threads_per_sm\n7.5,128x128,1024\n8.0,128x128,\n",
                                  "archs.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].threads_per_sm, 1024);
  EXPECT_EQ(t[1].threads_per_sm, 2048);
  EXPECT_EQ(parse_arch_facts("compute_capability,tiles\n9.0,128x128\n", "old.csv")[0].threads_per_sm, 2048);
  expect_bad_arch_cells("threads_per_sm", {"0", "16", "100000", "-2048", "many"});
}

TEST(ArchFacts, ParsesBothTileMenusAndNamesABadCell) {
  const std::string text =
      "compute_capability,arch,fp32_gemm_factor,ctas_per_sm,split_k,max_split_k,stream_k,tiles,simt_tiles,note\n"
      "7.0,Volta,1.0,1,1,16,0,256x128;128x64,128x128;32x32,n\n"
      "8.0,Ampere,1.0,1,1,64,0,128x128,,no SIMT menu: the tensor one serves both\n";
  const auto t = parse_arch_facts(text, "archs.csv");
  ASSERT_EQ(t.size(), 2u);
  ASSERT_EQ(t[0].simt_tiles.size(), 2u);
  EXPECT_EQ(t[0].simt_tiles[1].m, 32);
  EXPECT_TRUE(t[1].simt_tiles.empty());
  const std::string msg = input_error_of([] {
    parse_arch_facts(
        "compute_capability,tiles,simt_tiles\n"
        "7.0,128x128,128y64\n",
        "archs.csv");
  });
  EXPECT_NE(msg.find("archs.csv"), std::string::npos) << msg;
  EXPECT_NE(msg.find("simt_tiles"), std::string::npos) << msg;
  EXPECT_NE(msg.find("128y64"), std::string::npos) << msg;
}

}  // namespace
}  // namespace kcast

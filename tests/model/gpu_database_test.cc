#include "model/gpu_database.h"

#include <gtest/gtest.h>

#include <cmath>

#include "calibrate/model_file.h"
#include "model/arch_facts.h"
#include "model/error.h"

namespace kcast {
namespace {

GpuDatabase small_db() {
  GpuSpec a;
  a.name = "A100-SXM4-40GB";
  a.aliases = {"NVIDIA A100-SXM4-40GB"};
  a.compute_capability = "8.0";
  a.sm_count = 108;
  a.memory_gb = 40;
  GpuSpec b = a;
  b.name = "A100-SXM4-80GB";
  b.aliases = {"NVIDIA A100-SXM4-80GB"};
  b.memory_gb = 80;
  GpuSpec v;
  v.name = "V100-PCIe-32GB";
  v.compute_capability = "7.0";
  v.sm_count = 80;
  v.memory_gb = 32;
  return GpuDatabase({a, b, v});
}

TEST(GpuDatabase, MatchesIgnoringCaseVendorAndPunctuation) {
  GpuDatabase db = small_db();
  EXPECT_EQ(db.resolve("Tesla V100-PCIE-32GB").name, "V100-PCIe-32GB");
  EXPECT_EQ(db.resolve("v100 pcie 32gb").name, "V100-PCIe-32GB");
  EXPECT_EQ(db.resolve("nvidia a100-sxm4-80gb").name, "A100-SXM4-80GB");
}

TEST(GpuDatabase, UnknownNameSuggestsClosest) {
  GpuDatabase db = small_db();
  try {
    db.resolve("A100-SXM4-40G");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown GPU 'A100-SXM4-40G'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("A100-SXM4-40GB"), std::string::npos) << msg;
  }
}

TEST(GpuDatabase, ResolvesBoardVariantByProperties) {
  GpuDatabase db = small_db();
  DeviceProps p;
  p.sm_count = 108;
  p.compute_capability = "8.0";
  p.memory_gb = 39.4;
  GpuResolution r = db.resolve("NVIDIA A100-PG509-200", p);
  ASSERT_NE(r.gpu, nullptr);
  EXPECT_EQ(r.gpu->name, "A100-SXM4-40GB");
  EXPECT_NE(r.warning.find("by properties"), std::string::npos);
  p.sm_count = 46;
  EXPECT_EQ(db.resolve("Mystery GPU", p).gpu, nullptr);
}

}  // namespace
}  // namespace kcast

#include "io/gpu_database_csv.h"

namespace kcast {
namespace {

// Every device string docs/cli-contract.md promises must resolve, to the board it names, and so must the devices of
// the public measurements kcast is validated on.
TEST(ShippedGpuDatabase, ResolvesEveryCliDeviceName) {
  const GpuDatabase& db = default_gpu_database();
  EXPECT_GE(db.all().size(), 18u);
  const std::pair<const char*, const char*> names[] = {
      {"NVIDIA H100 80GB HBM3", "H100-SXM"},   {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
      {"NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB"}, {"NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"},
      {"Tesla V100-PCIE-32GB", "V100-PCIe-32GB"}, {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
      {"Tesla P100-PCIE-16GB", "P100-PCIe-16GB"}, {"Tesla P100-SXM2-16GB", "P100-SXM2"},
      {"Tesla T4", "T4"}, {"Tesla P4", "P4"}, {"NVIDIA L4", "L4"}, {"NVIDIA L40S", "L40S"},
      {"NVIDIA H200", "H200"}, {"NVIDIA B200", "B200"}, {"NVIDIA GB200", "GB200"},
      {"NVIDIA B300", "B300"}, {"NVIDIA GB300", "GB300"},
      {"NVIDIA H100 PCIe", "H100-PCIe"},
      // The AMD devices of NeuSight's evaluation, as PyTorch on ROCm names them.
      {"AMD Instinct MI100", "MI100"}, {"AMD Instinct MI210", "MI210"}, {"AMD Instinct MI250", "MI250"},
      {"AMD Instinct MI250X / MI250", "MI250X"}};
  for (const auto& [device, canonical] : names) EXPECT_EQ(db.resolve(device).name, canonical) << device;
}

TEST(ShippedGpuDatabase, PeaksAreDenseAndConsistent) {
  for (const GpuSpec& g : default_gpu_database().all()) {
    EXPECT_GT(g.sm_count, 0) << g.name;
    EXPECT_GT(g.dram_bw_gbps, 0) << g.name;
    // Tensor BF16 is never below SIMT FP32 where both exist (catches unit mix-ups).
    if (known(g.bf16_tflops)) {
      EXPECT_GT(g.bf16_tflops, g.fp32_tflops) << g.name;
    }
  }
}

// fp4_tflops: Blackwell's dense FP4 is twice its FP8; no earlier board has FP4 units. The peak a GEMM
// of a dtype runs at falls back to the 16-bit tensor peak for FP8 / FP4 without units, else FP32.
TEST(ShippedGpuDatabase, Fp4PeaksAndTheGemmPeakFallback) {
  const GpuDatabase& db = default_gpu_database();
  for (const char* blackwell : {"B200", "GB200"}) {
    const GpuSpec& g = db.resolve(blackwell);
    EXPECT_DOUBLE_EQ(g.fp4_tflops, 2 * g.fp8_tflops) << blackwell;
    EXPECT_TRUE(g.has_tensor(DType::fp4)) << blackwell;
  }
  // Blackwell Ultra (B300, GB300: compute capability 10.3) runs NVFP4 at 1.5x Blackwell's per-SM rate
  // and FP8 as before, so at least 3x its FP8; it gave up FP64 almost entirely. It takes the Blackwell
  // architecture row (same major version).
  for (const char* ultra : {"B300", "GB300"}) {
    const GpuSpec& g = db.resolve(ultra);
    EXPECT_GE(g.fp4_tflops, 3 * g.fp8_tflops) << ultra;
    EXPECT_LT(g.fp64_tflops, 2) << ultra;
    EXPECT_EQ(find_arch_facts(default_arch_facts(), g.compute_capability).compute_capability, "10.0") << ultra;
  }
  // FP4 units arrived with Blackwell, AMD's CDNA4 (MI355X) and the announced Rubin; nothing earlier has them.
  for (const GpuSpec& g : db.all()) {
    if (g.arch != "Blackwell" && g.arch != "Rubin" && g.arch != "CDNA4") {
      EXPECT_TRUE(std::isnan(g.fp4_tflops)) << g.name;
    }
  }
  EXPECT_EQ(db.resolve("H100-SXM").gemm_peak_tflops(DType::fp4), db.resolve("H100-SXM").bf16_tflops);
  EXPECT_EQ(db.resolve("A100-SXM4-80GB").gemm_peak_tflops(DType::fp8), 312);
  EXPECT_EQ(db.resolve("H100-SXM").gemm_peak_tflops(DType::fp8), db.resolve("H100-SXM").fp8_tflops);
  EXPECT_EQ(db.resolve("P100-PCIe-16GB").gemm_peak_tflops(DType::fp4), 9.3);  // no tensor cores: SIMT FP32
  // An older database file without the column still loads (the column is optional).
  const std::string old = "name,sm_count,boost_clock_mhz,dram_bw_gbps,fp32_tflops,fp8_tflops\nX,10,1000,100,1,50\n";
  EXPECT_TRUE(std::isnan(parse_gpu_database(old, "old.csv").all()[0].fp4_tflops));
}

// link_gbps: one direction of the GPU's own links. Boards with NVLink built in carry far more than
// any PCIe slot (Gen5 x16: 64 GB/s), newer NVLink generations more than older ones.
TEST(ShippedGpuDatabase, LinkBandwidthIsOneDirectionOfTheBoardsLinks) {
  const GpuDatabase& db = default_gpu_database();
  for (const char* nvlink : {"V100-SXM2-32GB", "A100-SXM4-80GB", "H100-SXM", "H200", "B200"})
    EXPECT_GT(db.resolve(nvlink).link_gbps, 100) << nvlink;
  for (const char* pcie : {"T4", "L4", "A100-PCIe-40GB", "H100-PCIe"}) EXPECT_LE(db.resolve(pcie).link_gbps, 64) << pcie;
  EXPECT_LT(db.resolve("A100-SXM4-80GB").link_gbps, db.resolve("H100-SXM").link_gbps);
  EXPECT_LT(db.resolve("H100-SXM").link_gbps, db.resolve("B200").link_gbps);
  // The host link: PCIe Gen3 < Gen4 < Gen5 < a GB200's NVLink-C2C.
  EXPECT_LT(db.resolve("V100-SXM2-32GB").host_gbps, db.resolve("A100-SXM4-80GB").host_gbps);
  EXPECT_LT(db.resolve("A100-SXM4-80GB").host_gbps, db.resolve("H100-SXM").host_gbps);
  EXPECT_LT(db.resolve("H100-SXM").host_gbps, db.resolve("GB200").host_gbps);
  for (const GpuSpec& g : db.all()) EXPECT_GT(g.host_gbps, 0) << g.name;
}

TEST(GpuDatabaseCsv, LinkBandwidthMustBePositive) {
  const std::string bad_host = "name,sm_count,boost_clock_mhz,dram_bw_gbps,fp32_tflops,host_gbps\nX,10,1000,100,1,0\n";
  try {
    parse_gpu_database(bad_host, "h.csv");
    ADD_FAILURE() << "host_gbps 0";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("h.csv:2: column 'host_gbps'"), std::string::npos) << e.what();
  }
  const std::string head = "name,sm_count,boost_clock_mhz,dram_bw_gbps,fp32_tflops,link_gbps\n";
  EXPECT_TRUE(std::isnan(parse_gpu_database(head + "X,10,1000,100,1,\n", "g.csv").all()[0].link_gbps));
  EXPECT_EQ(parse_gpu_database(head + "X,10,1000,100,1,25\n", "g.csv").all()[0].link_gbps, 25);
  for (const char* bad : {"0", "-3", "fast"}) {
    try {
      parse_gpu_database(head + "X,10,1000,100,1," + bad + "\n", "g.csv");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("g.csv:2: column 'link_gbps'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace kcast

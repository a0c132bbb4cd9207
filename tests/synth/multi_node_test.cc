// Collectives whose group spans nodes (SynthOptions::gpus_per_node, Kernel::net_bytes): the share of
// their bytes that leaves a node through its NICs, in Megatron-LM's rank order, and what the cost
// model makes of it (the slower of the GPU's links and its NIC, GpuSpec::net_gbps).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "io/kernel_list_csv.h"
#include "model/error.h"
#include "predict/synth/emitter.h"
#include "predict/synth/synth.h"
#include "tests/predict/predict_fixture.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using testing::with_mode;

TEST(MultiNode, ShareOfTheBytesThatLeavesTheNode) {
  // A ring over 64 replicas, 8 to a node: each node's 8 channels use its 8 NICs, an eighth each.
  EXPECT_DOUBLE_EQ(ring_net_share(64, 1, 8), 1.0 / 8);
  // Replicas 8 ranks apart (tensor parallel 8 inside each node): one per node, all of it leaves.
  EXPECT_DOUBLE_EQ(ring_net_share(8, 8, 8), 1.0);
  EXPECT_DOUBLE_EQ(ring_net_share(8, 1, 8), 0.0);  // a group inside one node
  EXPECT_DOUBLE_EQ(ring_net_share(4, 2, 8), 0.0);
  // An all-to-all over 16 GPUs, 8 to a node: 8 of each GPU's 15 peers are elsewhere.
  EXPECT_DOUBLE_EQ(all_to_all_net_share(16, 1, 8), 8.0 / 15);
  EXPECT_DOUBLE_EQ(all_to_all_net_share(8, 1, 8), 0.0);
  // Pipeline stages: 8 ranks apart on 8-GPU nodes, every boundary crosses; 2 apart, 4 stages to a
  // node, 1 of 7 boundaries.
  EXPECT_DOUBLE_EQ(stage_boundary_net_share(4, 8, 8), 1.0);
  EXPECT_DOUBLE_EQ(stage_boundary_net_share(8, 2, 8), 1.0 / 7);
  EXPECT_DOUBLE_EQ(stage_boundary_net_share(4, 2, 8), 0.0);
}

double net_share_of(const std::vector<Kernel>& ks, const std::string& part) {
  double bytes = 0, net = 0;
  for (const Kernel& k : ks)
    if (k.name.find(part) != std::string::npos) bytes += k.count * k.bytes, net += k.count * k.net_bytes;
  return bytes > 0 ? net / bytes : -1;
}

// Llama 3 70B with tensor parallelism 8 and 8 replicas: the tensor-parallel collectives stay inside a
// node, the gradient all-reduce crosses nodes whole; on one 64-GPU node nothing leaves it.
TEST(MultiNode, SynthMarksTheCollectivesThatCrossNodes) {
  SynthOptions o = with_mode(Mode::train, 16, 512);
  o.tp = 8;
  o.dp = 8;
  o.layers = 2;
  const auto ks = synthesize("llama3-70b", o);
  EXPECT_DOUBLE_EQ(net_share_of(ks, "(tensor parallel)"), 0.0);
  EXPECT_DOUBLE_EQ(net_share_of(ks, "dp.grad"), 1.0);
  o.gpus_per_node = 64;
  EXPECT_DOUBLE_EQ(net_share_of(synthesize("llama3-70b", o), "dp.grad"), 0.0);
  o.gpus_per_node = 0;
  EXPECT_THROW(synthesize("llama3-70b", o), InputError);
}

// The cost model: the slower of the link and the NIC. An all-reduce of 1 GB whose 0.5 GB leave the node
// on an H100 (NVLink 450 GB/s, NIC 50 GB/s each way, at their NCCL efficiencies) is NIC-bound. (The model
// given caps without a network figure keeps the link's time; the predictor refuses such a GPU first.)
TEST(MultiNode, TheNicBoundsACollectiveThatCrossesNodes) {
  const std::string csv =
      "name,class,dtype,bytes,net_bytes\n"
      "ar,communication,bf16,1e9,\n"
      "ar_net,communication,bf16,1e9,5e8\n";
  const auto ks = parse_kernel_list(csv, "multi_node.csv", KernelListOptions{});
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_DOUBLE_EQ(ks[1].net_bytes, 5e8);
  const auto& m = kcast::testing::model();
  const GpuCaps h100 = m.caps_for(kcast::testing::db().resolve("H100-SXM"));
  EXPECT_NEAR(m.model.predict(ks[0], h100).time_us - h100.mem_latency_us, 1e9 / (450 * 0.7 * 1e3), 1e-6);
  EXPECT_NEAR(m.model.predict(ks[1], h100).time_us - h100.mem_latency_us, 5e8 / (50 * 0.9 * 1e3), 1e-6);
  GpuCaps no_net = h100;
  no_net.net_gbps = 0;
  EXPECT_DOUBLE_EQ(m.model.predict(ks[1], no_net).time_us, m.model.predict(ks[0], no_net).time_us);
  // The column round-trips and refuses what cannot be.
  std::ostringstream out;
  write_kernel_list(ks, out);
  EXPECT_DOUBLE_EQ(parse_kernel_list(out.str(), "back.csv", KernelListOptions{})[1].net_bytes, 5e8);
  EXPECT_THROW(parse_kernel_list("name,class,bytes,net_bytes\nx,communication,100,200\n", "bad.csv",
                                 KernelListOptions{}),
               InputError);
}

// A user's GPU row (KCAST_GPUS) without a network or link figure cannot time collectives: predict
// refuses, naming the file, the GPU and the missing column, instead of timing them at another speed.
// Every shipped GPU has both, so `--gpu all` predicts (and warns about none).
TEST(MultiNode, PredictRefusesAGpuWithoutTheFiguresItsCollectivesNeed) {
  const std::string list = ::testing::TempDir() + "/nodes.csv";
  const auto synth = kcast::testing::run_kcast(
      "synth llama3-8b --mode train --batch 16 --seq 256 --layers 2 --dp 16 -o '" + list + "'", true);
  ASSERT_EQ(synth.rc, 0) << synth.out;
  const std::string gpus = ::testing::TempDir() + "/user_gpus.csv";
  std::ofstream(gpus) << "name,arch,compute_capability,sm_count,boost_clock_mhz,memory_gb,dram_bw_gbps,l2_mb,"
                         "fp32_tflops,bf16_tflops,tensor_cores,link_gbps,net_gbps,domain_size\n"
                         "NoNic,Blackwell,10.0,148,1965,180,8000,126.5,75,2250,1,900,,8\n"
                         "NoLink,Blackwell,10.0,148,1965,180,8000,126.5,75,2250,1,,50,8\n";
  ::setenv("KCAST_GPUS", gpus.c_str(), 1);
  const auto no_nic = kcast::testing::run_kcast("predict --kernels '" + list + "' --gpu H100-SXM,NoNic", true);
  const auto no_link = kcast::testing::run_kcast("predict --kernels '" + list + "' --gpu NoLink", true);
  ::unsetenv("KCAST_GPUS");
  EXPECT_NE(no_nic.rc, 0) << no_nic.out;
  EXPECT_NE(no_nic.out.find("nodes.csv: "), std::string::npos) << no_nic.out;
  EXPECT_NE(no_nic.out.find("GPU 'NoNic' has no net_gbps"), std::string::npos) << no_nic.out;
  EXPECT_NE(no_link.rc, 0) << no_link.out;
  EXPECT_NE(no_link.out.find("GPU 'NoLink' has no link_gbps"), std::string::npos) << no_link.out;
  const auto all = kcast::testing::run_kcast("predict --kernels '" + list + "' --gpu all", true);
  EXPECT_EQ(all.rc, 0) << all.out;
  EXPECT_EQ(all.out.find("warning"), std::string::npos) << all.out;
  std::remove(list.c_str());
  std::remove(gpus.c_str());
}

// The walls study tells the NICs from the GPU's own links: doubling the network alone speeds an
// expert-parallel step across two nodes up, by no more than doubling both.
TEST(MultiNode, WallsSeparateTheNetwork) {
  const std::string list = ::testing::TempDir() + "/ep_nodes.csv";
  const auto synth = kcast::testing::run_kcast(
      "synth qwen3-30b-a3b --mode train --batch 16 --seq 1024 --layers 2 --dp 16 --ep 16 -o '" + list + "'", true);
  ASSERT_EQ(synth.rc, 0) << synth.out;
  const auto r = kcast::testing::run_kcast("whatif --kernels '" + list + "' --gpu H100-SXM --walls --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  double link = 0, net = 0;
  for (const auto& w : j["walls"]) {
    if (w["name"] == "link_2x") link = w["speedup"].get<double>();
    if (w["name"] == "net_2x") net = w["speedup"].get<double>();
  }
  EXPECT_GT(net, 1.0);
  EXPECT_LE(net, link + 1e-12);
  std::remove(list.c_str());
}

}  // namespace
}  // namespace kcast::synth

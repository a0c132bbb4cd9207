// Collectives on every GPU: each database row carries its scale-up link, the size of the domain the
// link reaches and its network per GPU; collectives are timed on the link inside the domain and the
// network beyond it, synth and plan place nodes by the GPU's domain, and an announced GPU says so.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/gpu_caps.h"
#include "tests/predict/predict_fixture.h"

namespace kcast::testing {
namespace {

using nlohmann::json;

// Every shipped row has the three figures and says where they come from; the network is never faster
// than the scale-up link, and only NVL72-class racks span more than 16 GPUs.
TEST(Interconnect, EveryShippedGpuHasALinkADomainAndANetwork) {
  const RunResult r = run_kcast("gpus --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json gpus = json::parse(r.out)["gpus"];
  ASSERT_GE(gpus.size(), 42u);
  for (const json& g : gpus) {
    const std::string name = g["name"];
    ASSERT_TRUE(g["link_gbps"].is_number()) << name;
    ASSERT_TRUE(g["net_gbps"].is_number()) << name;
    ASSERT_TRUE(g["domain_size"].is_number_integer()) << name;
    EXPECT_FALSE(g["interconnect_source"].get<std::string>().empty()) << name;
    EXPECT_LE(g["net_gbps"].get<double>(), g["link_gbps"].get<double>()) << name;
    EXPECT_TRUE(g["announced"].is_boolean()) << name;
  }
  for (const char* rack : {"GB200", "GB300", "Rubin"}) EXPECT_EQ(db().resolve(rack).domain_size, 72) << rack;
  for (const char* board : {"H100-SXM", "B200", "MI300X", "MI355X"}) EXPECT_EQ(db().resolve(board).domain_size, 8);
  // The lineup the issue asks for is there; only the announced part is flagged.
  for (const char* name : {"MI325X", "MI355X", "H20", "RTX PRO 6000 Blackwell Server Edition", "Rubin"})
    EXPECT_NE(db().find(name), nullptr) << name;
  for (const GpuSpec& g : db().all()) EXPECT_EQ(g.announced, g.name == "Rubin") << g.name;
}

// An all-reduce inside the node follows the links (H100 NVLink 450, MI300X Infinity Fabric 448 GB/s per
// direction); one whose bytes leave the node follows the NICs (400 Gb/s per GPU on both platforms).
// Before every GPU had a network figure, MI300X timed the second on its links: 9x faster than H100.
TEST(Interconnect, CollectiveTimesFollowTheLinksAndTheNetworks) {
  const std::string list = temp_path("collectives.csv");
  std::ofstream(list) << "name,class,dtype,bytes,net_bytes\n"
                         "ncclAllReduce_in_node,communication,bf16,4e9,\n"
                         "ncclAllReduce_across_nodes,communication,bf16,4e9,2e9\n";
  const RunResult r = run_kcast("predict --kernels '" + list + "' --gpu H100-SXM,MI300X,B200 --per-kernel '" +
                                list + ".rows.csv' --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  // Per-row predictions, from the per-kernel CSV: row,target_gpu,name,class,predicted_us,...
  std::ifstream rows(list + ".rows.csv");
  std::string line;
  std::getline(rows, line);
  ASSERT_EQ(line.rfind("row,target_gpu,name,class,predicted_us,", 0), 0u) << line;
  std::map<std::string, std::vector<double>> us;
  while (std::getline(rows, line)) {
    std::vector<std::string> cells;
    size_t from = 0;
    for (size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
      cells.push_back(line.substr(from, comma - from));
    cells.push_back(line.substr(from));
    ASSERT_GE(cells.size(), 5u) << line;
    us[cells[1]].push_back(std::stod(cells[4]));
  }
  ASSERT_EQ(us["H100-SXM"].size(), 2u);
  ASSERT_EQ(us["MI300X"].size(), 2u);
  // In the node: 4 GB over each GPU's link at NCCL's share of it.
  const double h100_link = 4e9 / (450 * kLinkEff * 1e3), mi300x_link = 4e9 / (448 * kLinkEff * 1e3);
  EXPECT_NEAR(us["MI300X"][0] / us["H100-SXM"][0], mi300x_link / h100_link, 0.02);
  // Across nodes: the 2 GB through the NIC dominate on both (50 GB/s each way), so they take the same time.
  const double nic = 2e9 / (50 * kNetEff * 1e3);
  EXPECT_GT(nic, h100_link);
  EXPECT_NEAR(us["MI300X"][1] / us["H100-SXM"][1], 1.0, 0.02);
  EXPECT_NEAR(us["H100-SXM"][1], nic, 0.05 * nic);
  // B200: twice the NVLink, the same NIC: faster in the node, not across nodes.
  EXPECT_NEAR(us["H100-SXM"][0] / us["B200"][0], 2.0, 0.05);
  EXPECT_NEAR(us["B200"][1] / us["H100-SXM"][1], 1.0, 0.02);
  std::remove(list.c_str());
  std::remove((list + ".rows.csv").c_str());
}

// synth --gpu places nodes by the GPU's scale-up domain: 16-way data parallelism crosses nodes on
// B200 boards (8 per node), not in a GB200 NVL72 rack; GPUs whose domains differ need --gpus-per-node
// when the layout is larger than the smaller domain.
TEST(Interconnect, SynthPlacesNodesByTheGpusDomain) {
  const std::string base = "synth llama3-8b --mode train --batch 16 --seq 256 --layers 2 --dp 16 --format json -o ";
  // Whether any row of the list sends bytes between nodes (the last column, net_bytes, filled).
  auto net_bytes = [&](const std::string& gpu) {
    const std::string out = temp_path("domain_" + gpu + ".csv");
    const RunResult r = run_kcast(base + "'" + out + "' --gpu " + gpu);
    EXPECT_EQ(r.rc, 0) << r.out;
    std::ifstream in(out);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line.substr(line.rfind(',') + 1), "net_bytes");
    bool crosses = false;
    while (std::getline(in, line)) crosses |= line.back() != ',';
    std::remove(out.c_str());
    return crosses;
  };
  EXPECT_TRUE(net_bytes("B200"));
  EXPECT_FALSE(net_bytes("GB200"));
  const RunResult mixed = run_kcast(base + "/dev/null --gpu B200,GB200", true);
  EXPECT_NE(mixed.rc, 0);
  EXPECT_NE(mixed.out.find("option '--gpus-per-node'"), std::string::npos) << mixed.out;
  const RunResult given = run_kcast(base + "/dev/null --gpu B200,GB200 --gpus-per-node 8");
  EXPECT_EQ(given.rc, 0) << given.out;
}

// A user row without domain_size is an error naming the column when the layout spans GPUs.
TEST(Interconnect, AUserRowWithoutADomainIsRefusedForAMultiGpuLayout) {
  const std::string gpus = temp_path("no_domain_gpus.csv");
  std::ofstream(gpus) << "name,arch,compute_capability,sm_count,boost_clock_mhz,memory_gb,dram_bw_gbps,l2_mb,"
                         "fp32_tflops,bf16_tflops,tensor_cores,link_gbps,net_gbps\n"
                         "NoDomain,Blackwell,10.0,148,1965,180,8000,126.5,75,2250,1,900,50\n";
  ::setenv("KCAST_GPUS", gpus.c_str(), 1);
  const RunResult multi =
      run_kcast("synth llama3-8b --mode train --batch 16 --seq 256 --layers 2 --dp 16 --format json --gpu NoDomain "
                "-o /dev/null", true);
  const RunResult single =
      run_kcast("synth llama3-8b --mode train --batch 2 --seq 256 --layers 2 --format json --gpu NoDomain -o /dev/null");
  ::unsetenv("KCAST_GPUS");
  EXPECT_NE(multi.rc, 0);
  EXPECT_NE(multi.out.find("'NoDomain' has no domain_size"), std::string::npos) << multi.out;
  EXPECT_EQ(single.rc, 0) << single.out;
  std::remove(gpus.c_str());
}

// An announced GPU says so: a note on stderr in every command that uses it, and in predict's JSON.
TEST(Interconnect, AnAnnouncedGpuIsFlaggedWhereverItIsUsed) {
  const RunResult p = run_kcast("predict --kernels '" + fixture_path() + "' --gpu H100-SXM,Rubin --format json");
  ASSERT_EQ(p.rc, 0) << p.out;
  const json j = json::parse(p.out)["predictions"];
  EXPECT_FALSE(j[0].contains("announced"));
  EXPECT_EQ(j[1]["announced"], true);
  const RunResult note = run_kcast("predict --kernels '" + fixture_path() + "' --gpu Rubin", true);
  EXPECT_NE(note.out.find("Rubin is announced, not shipping"), std::string::npos) << note.out;
  const RunResult serve = run_kcast(
      "serve llama3-8b --gpu Rubin --input-tokens 128 --output-tokens 16 --concurrency 2 --requests 8", true);
  EXPECT_EQ(serve.rc, 0) << serve.out;
  EXPECT_NE(serve.out.find("Rubin is announced"), std::string::npos) << serve.out;
  const RunResult synth = run_kcast(
      "synth llama3-8b --mode decode --batch 1 --seq 256 --gpu H100-SXM,Rubin --format json -o /dev/null");
  ASSERT_EQ(synth.rc, 0) << synth.out;
  const json steps = json::parse(synth.out);
  EXPECT_FALSE(steps[0].contains("announced"));
  EXPECT_EQ(steps[1]["announced"], true);
  const RunResult served = run_kcast(
      "serve llama3-8b --gpu Rubin --input-tokens 128 --output-tokens 16 --concurrency 2 --requests 8 --format json");
  ASSERT_EQ(served.rc, 0) << served.out;
  EXPECT_EQ(json::parse(served.out)["announced"], true);
  const RunResult table = run_kcast("gpus Rubin");
  EXPECT_NE(table.out.find("announced, not shipping"), std::string::npos) << table.out;
}

}  // namespace
}  // namespace kcast::testing

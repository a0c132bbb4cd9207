// `kcast synth --memory-json FILE`: the memory report as JSON, the same values as the stderr lines and
// as synth::Footprint; the report and the kernel list replace what they overwrite only when both are
// written.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "io/atomic_file.h"
#include "predict/synth/synth.h"
#include "tests/predict/predict_fixture.h"
#include "tests/synth/synth_options.h"

namespace kcast::synth {
namespace {

using kcast::testing::run_kcast;
using testing::with_mode;

TEST(SynthMemoryJson, CarriesTheFootprintAndEachFit) {
  const std::string json = ::testing::TempDir() + "/memory.json";
  std::remove(json.c_str());
  const auto r = run_kcast("synth llama3-8b --mode decode --batch 64 --seq 8192 --attention flash "
                           "--gpu H100-SXM,T4 --memory-json '" + json + "' -o /dev/null",
                           true);
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(kcast::read_file(json));
  SynthOptions o = with_mode(Mode::decode, 64, 8192);
  o.attention = AttentionImpl::flash;
  Footprint f;
  synthesize("llama3-8b", o, &f);
  EXPECT_DOUBLE_EQ(j["params"].get<double>(), f.params);
  EXPECT_DOUBLE_EQ(j["kv_cache_bytes"].get<double>(), f.kv_cache_bytes);
  EXPECT_DOUBLE_EQ(j["activation_bytes"].get<double>(), f.activation_bytes);
  EXPECT_EQ(j["activations"], "peak");
  EXPECT_DOUBLE_EQ(j["total_bytes"].get<double>(), f.total_bytes());
  ASSERT_EQ(j["gpus"].size(), 2u);
  const auto& h100 = j["gpus"][0];
  EXPECT_EQ(h100["gpu"], "H100-SXM");
  EXPECT_TRUE(h100["fits"].get<bool>());
  EXPECT_DOUBLE_EQ(h100["capacity_bytes"].get<double>(), 80.0 * 1073741824);
  EXPECT_DOUBLE_EQ(h100["need_bytes"].get<double>(), f.total_bytes());
  EXPECT_EQ(h100["largest_batch"].get<double>(), 65);  // as the stderr line says
  EXPECT_NE(r.out.find("at most 65 sequences fit"), std::string::npos) << r.out;
  EXPECT_FALSE(j["gpus"][1]["fits"].get<bool>());
  EXPECT_EQ(j["gpus"][1]["largest_batch"].get<double>(), 1);
  std::remove(json.c_str());
}

TEST(SynthMemoryJson, AResNetHasNoActivationEstimate) {
  // Nothing estimated is a JSON null, not a crash.
  const std::string json = ::testing::TempDir() + "/resnet_memory.json";
  const auto r = run_kcast("synth resnet50 --mode train --batch 32 --memory-json '" + json + "' -o /dev/null", true);
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(kcast::read_file(json));
  EXPECT_TRUE(j["activations"].is_null());
  EXPECT_GT(j["weight_bytes"].get<double>(), 0);
  std::remove(json.c_str());
}

TEST(SynthMemoryJson, AnUnwritableReportLeavesTheKernelListAlone) {
  const std::string list = ::testing::TempDir() + "/kept.csv";
  std::ofstream(list) << "precious\n";
  const auto r =
      run_kcast("synth llama3-8b --memory-json /no/such/dir/m.json -o '" + list + "'", true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("/no/such/dir/m.json"), std::string::npos) << r.out;
  EXPECT_EQ(kcast::read_file(list), "precious\n");
  std::remove(list.c_str());
}

TEST(SynthMemoryJson, AnUnwritableKernelListLeavesTheReportAlone) {
  const std::string json = ::testing::TempDir() + "/kept.json";
  std::ofstream(json) << "precious\n";
  const auto r = run_kcast("synth llama3-8b --gpu H100-SXM --memory-json '" + json + "' -o /no/such/dir/l.csv", true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("/no/such/dir/l.csv"), std::string::npos) << r.out;
  EXPECT_EQ(kcast::read_file(json), "precious\n");
  std::remove(json.c_str());
}

}  // namespace
}  // namespace kcast::synth

// Megatron-LM's CPU activation offloading (`kcast synth --cpu-offload-layers N`): the N layers' kept
// activations leave the GPU's memory for the host's, linearly in N; each offloaded layer and micro-batch
// copies them out in the forward and back in the backward; the step waits only for what the copies
// outlast the layers' compute; Megatron's own conditions are one-line errors naming the option.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predict/synth/emitter.h"
#include "predict/synth/synth.h"
#include "tests/predict/predict_fixture.h"

namespace kcast::synth {
namespace {

using kcast::testing::run_kcast;

// A 4-layer Llama-like model under Megatron, one pipeline stage, m micro-batches of 1 sequence.
SynthOptions small(int64_t offload, int64_t microbatches = 2) {
  SynthOptions o;
  o.mode = Mode::train;
  o.batch = microbatches, o.seq = 512, o.microbatches = microbatches;
  o.layers = 4, o.hidden = 256, o.heads = 4, o.kv_heads = 2, o.ffn = 512, o.vocab = 1000;
  o.dtype = DType::bf16;
  o.attention = AttentionImpl::flash;
  o.framework = Framework::megatron;
  o.cpu_offload_layers = offload;
  return o;
}

Footprint footprint(const SynthOptions& o) {
  Footprint f;
  synthesize("llama3-8b", o, &f);
  return f;
}

TEST(CpuOffload, OffloadedLayersLeaveTheGpuLinearly) {
  const Footprint plain = footprint(small(0));
  EXPECT_EQ(plain.offloaded_activation_bytes, 0);
  const double one = footprint(small(1)).offloaded_activation_bytes;
  ASSERT_GT(one, 0);
  for (int64_t n = 1; n <= 3; ++n) {
    const Footprint f = footprint(small(n));
    EXPECT_DOUBLE_EQ(f.offloaded_activation_bytes, double(n) * one) << n;
    // What the host holds is exactly what the GPU no longer does; the rest of the footprint is unchanged.
    EXPECT_DOUBLE_EQ(plain.activation_bytes - f.activation_bytes, f.offloaded_activation_bytes) << n;
    EXPECT_DOUBLE_EQ(plain.weight_bytes, f.weight_bytes);
    EXPECT_DOUBLE_EQ(plain.total_bytes() - f.total_bytes(), f.offloaded_activation_bytes) << n;
  }
}

TEST(CpuOffload, EachLayerAndMicroBatchCopiesOutAndBack) {
  const int64_t n = 3, m = 2;
  const SynthOptions o = small(n, m);
  Footprint f;
  const std::vector<Kernel> rows = synthesize("llama3-8b", o, &f);
  double out = 0, back = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Kernel& k = rows[r];
    if (k.name.find(kCpuOffloadName) == std::string::npos) continue;
    EXPECT_EQ(k.cls, KernelClass::memcpy) << k.name;
    EXPECT_DOUBLE_EQ(k.count, double(n * m)) << k.name;
    EXPECT_DOUBLE_EQ(k.bytes, f.offloaded_activation_bytes / double(n)) << k.name;
    if (k.name.find("Device-to-Host") != std::string::npos) {
      EXPECT_LT(r, f.forward_rows) << k.name;  // in the forward
      out += k.count * k.bytes;
    } else {
      EXPECT_NE(k.name.find("Host-to-Device"), std::string::npos) << k.name;
      EXPECT_GE(r, f.forward_rows) << k.name;  // in the backward
      back += k.count * k.bytes;
    }
  }
  EXPECT_DOUBLE_EQ(out, double(m) * f.offloaded_activation_bytes);
  EXPECT_DOUBLE_EQ(back, out);
}

// The step adds exactly the copies' exposed part, which is never negative nor more than the copies.
// Long sequences on an H100's PCIe link: the copies outlast the layers' compute; on a GB200's
// NVLink-C2C (7x the bandwidth) they expose less of themselves.
TEST(CpuOffload, TheStepWaitsOnlyForWhatTheCopiesOutlast) {
  const std::string base =
      "synth llama3-8b --mode train --layers 8 --seq 4096 --batch 2 --microbatches 2 --dtype bf16 --attention flash "
      "--framework megatron --master-weights --format json -o /dev/null --gpu ";
  auto share = [&](const std::string& gpu) {
    const auto plain = run_kcast(base + gpu), off = run_kcast(base + gpu + " --cpu-offload-layers 4");
    EXPECT_EQ(plain.rc, 0) << plain.out;
    EXPECT_EQ(off.rc, 0) << off.out;
    const auto p = nlohmann::json::parse(plain.out).at(0), j = nlohmann::json::parse(off.out).at(0);
    EXPECT_FALSE(p.contains("cpu_offload_s"));
    EXPECT_EQ(j["cpu_offload_layers"], 4);
    const double copies = j["cpu_offload_s"], exposed = j["exposed_cpu_offload_s"];
    EXPECT_GT(copies, 0) << gpu;
    EXPECT_GE(exposed, 0) << gpu;
    EXPECT_LE(exposed, copies) << gpu;
    EXPECT_NEAR(j["step_s"].get<double>() - p["step_s"].get<double>(), exposed, 1e-9 * p["step_s"].get<double>()) << gpu;
    EXPECT_LT(j["memory_gb"].get<double>(), p["memory_gb"].get<double>()) << gpu;
    return exposed / copies;
  };
  const double h100 = share("H100-SXM"), gb200 = share("GB200");
  EXPECT_GT(h100, 0);
  EXPECT_LT(gb200, h100);
}

TEST(CpuOffload, MegatronsConditionsAreOneLineErrors) {
  const std::string base = "synth llama3-8b --mode train --layers 4 --seq 512 --batch 2 -o /dev/null ";
  for (const std::string bad : {"--framework megatron --cpu-offload-layers 4",  // all the layers
                                "--framework megatron --pp 2 --microbatches 2 --cpu-offload-layers 1",
                                "--framework megatron --recompute full --cpu-offload-layers 1",
                                "--framework megatron --recompute-modules core_attn --cpu-offload-layers 1",
                                "--framework torchtitan --cpu-offload-layers 1", "--cpu-offload-layers -1"}) {
    const auto r = run_kcast(base + bad, true);
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_NE(r.out.find("option '--cpu-offload-layers'"), std::string::npos) << bad << "\n" << r.out;
  }
  const auto none = run_kcast(base + "--framework eager --cpu-offload-layers 0");  // Megatron's default: off
  EXPECT_EQ(none.rc, 0) << none.out;
}

TEST(CpuOffload, TheMemoryJsonSaysWhatWentToTheHost) {
  const std::string json = kcast::testing::temp_path("offload_memory.json");
  const auto r = run_kcast("synth llama3-8b --mode train --layers 4 --seq 512 --batch 2 --framework megatron "
                           "--cpu-offload-layers 2 --memory-json '" + json + "' -o /dev/null", true);
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["cpu_offload_layers"], 2);
  EXPECT_GT(j["offloaded_activation_bytes"].get<double>(), 0);
  EXPECT_NE(r.out.find("2 layers' activations"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kcast::synth

// Megatron-LM's interleaved 1F1B schedule (SynthOptions::virtual_stages): the critical path of a
// pipeline GPU is m v + pp - 1 chunk times of layers / (pp v) layers and m v + pp - 2 stage
// crossings (Narayanan et al. 2021), and the first stage holds pp + (pp - 1) / v micro-batches'
// activations (Korthikanti et al. 2022).
#include <gtest/gtest.h>

#include <string>

#include "model/error.h"
#include "predict/synth/synth.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::find;
using testing::with_mode;

SynthOptions pipeline(int64_t v) {
  SynthOptions o = with_mode(Mode::train, 8, 512);
  o.pp = 4;
  o.microbatches = 8;
  o.virtual_stages = v;
  return o;
}

TEST(InterleavedPipeline, CriticalPathAndFirstStageActivations) {
  const double m = 8, pp = 4, stage_layers = 32 / pp;
  Footprint plain_f;
  const auto plain = synthesize("llama3-8b", pipeline(1), &plain_f);
  for (int64_t v : {1, 2, 4}) {
    Footprint f;
    const auto ks = synthesize("llama3-8b", pipeline(v), &f);
    const Kernel* norm = find(ks, "layer.input_norm aten::pow");
    const Kernel* send = find(ks, "pp.send_recv nccl:send (pipeline activations)");
    ASSERT_NE(norm, nullptr);
    ASSERT_NE(send, nullptr);
    EXPECT_DOUBLE_EQ(norm->count, stage_layers / double(v) * (m * double(v) + pp - 1)) << v;
    EXPECT_DOUBLE_EQ(send->count, m * double(v) + pp - 2) << v;
    // The last stage runs one micro-batch at a time whatever the schedule; the first holds
    // min(m, pp) micro-batches without interleaving, pp + (pp - 1) / v with it.
    EXPECT_DOUBLE_EQ(f.activation_bytes, plain_f.activation_bytes) << v;
    const double in_flight = v == 1 ? pp : pp + (pp - 1) / double(v);
    EXPECT_NEAR(f.first_stage_activation_bytes / plain_f.first_stage_activation_bytes, in_flight / pp, 1e-12) << v;
    EXPECT_DOUBLE_EQ(f.first_stage_microbatches, in_flight) << v;
  }
}

TEST(InterleavedPipeline, BadSchedulesNameTheOption) {
  SynthOptions o = pipeline(16);  // 4 stages x 16 chunks: more chunks than the 32 layers
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--virtual-stages'"), std::string::npos);
  o = pipeline(2);
  o.microbatches = 6;  // not divisible by the 4 stages
  o.batch = 6;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--virtual-stages'"), std::string::npos);
  o = pipeline(2);
  o.pp = 1;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--virtual-stages'"), std::string::npos);
}

}  // namespace
}  // namespace kcast::synth

// Megatron-LM's sequence parallelism in a synthesized step (SynthOptions::sequence_parallel): the
// ops between the tensor-parallel regions run on seq / tp tokens, and the collectives move what the
// all-reduces moved, plus the backward's second all-gather of each region's input.
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
using testing::bus_bytes;
using testing::with_mode;

TEST(SequenceParallel, NormsRunOnAShardAndCollectivesKeepTheirBytes) {
  SynthOptions o = with_mode(Mode::train, 2, 1024);
  o.tp = 4;
  const auto tp = synthesize("llama3-8b", o);
  o.sequence_parallel = true;
  const auto sp = synthesize("llama3-8b", o);
  const double T = 2 * 1024, d = 4096, L = 32, share = 3.0 / 4, bytes = T * d * 2;
  // The input norm's first kernel (the fp32 copy) over T / 4 tokens' hidden states.
  const Kernel* plain = find(tp, "layer.input_norm aten::_to_copy (fp32)");
  const Kernel* sharded = find(sp, "layer.input_norm aten::_to_copy (fp32)");
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(sharded, nullptr);
  EXPECT_DOUBLE_EQ(sharded->bytes, plain->bytes / 4);
  // Per layer, two regions (attention, MLP): without it two all-reduces forward and two backward,
  // each 2 (t - 1) / t of T d e; with it, the same bytes as all-gathers and reduce-scatters, and one
  // more all-gather per region in backward (the saved shard gathered again).
  auto layer_collectives = [](const std::vector<Kernel>& ks, const std::string& kind) {
    double b = 0;
    for (const Kernel& k : ks)
      if (k.name.rfind("layer.", 0) == 0 && k.name.find(kind) != std::string::npos) b += k.count * k.bytes;
    return b;
  };
  EXPECT_NEAR(layer_collectives(tp, "(tensor parallel)") / (L * 4 * 2 * share * bytes), 1.0, 1e-12);
  EXPECT_NEAR(layer_collectives(sp, "(sequence parallel)") / (L * (4 * 2 + 2) * share * bytes), 1.0, 1e-12);
  EXPECT_EQ(bus_bytes(sp, "nccl:all_reduce (tensor parallel)"), 0);
}

TEST(SequenceParallel, NeedsTensorParallelism) {
  SynthOptions o = with_mode(Mode::train, 2, 1024);
  o.sequence_parallel = true;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--sequence-parallel'"), std::string::npos);
  // Decoding one token for 2 sequences: 2 tokens do not split over 4 GPUs.
  SynthOptions decode = with_mode(Mode::decode, 2, 1024);
  decode.tp = 4;
  decode.sequence_parallel = true;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", decode); }).find("do not split over the 4"), std::string::npos);
}

}  // namespace
}  // namespace kcast::synth

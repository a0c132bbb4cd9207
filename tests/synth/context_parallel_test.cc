// `--cp N` (SynthOptions::cp): Megatron-LM's context parallelism, ring attention as Transformer Engine
// runs it. Each GPU holds seq / N tokens of every sequence: its projections and MLPs do 1 / N of the
// work, its attention its queries against every key (1 / N of the causal pairs), the other GPUs' K and
// V chunks pass by in N - 1 ring steps, and the weights' gradients are reduced over dp x cp.
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
using testing::bus_bytes;
using testing::find;
using testing::with_mode;

SynthOptions ring(int64_t cp) {
  SynthOptions o = with_mode(Mode::train, 1, 8192);
  o.attention = AttentionImpl::flash;
  o.cp = cp;
  return o;
}

TEST(ContextParallel, EachGpuDoesItsShareOfTheSequence) {
  Footprint f1, f2;
  const auto one = synthesize("llama3-8b", ring(1), &f1);
  const auto two = synthesize("llama3-8b", ring(2), &f2);
  for (const char* row : {"layer.attn.q_proj aten::mm", "layer.mlp.down_proj aten::mm",
                          "layer.attn.flash aten::_scaled_dot_product_flash_attention"}) {
    const Kernel *a = find(one, row), *b = find(two, row);
    ASSERT_NE(a, nullptr) << row;
    ASSERT_NE(b, nullptr) << row;
    EXPECT_DOUBLE_EQ(b->flops, a->flops / 2) << row;
  }
  // The ring: one step of the other GPU's K and V (4096 tokens x 8 heads x 128 x 2 tensors x 2 bytes)
  // per layer forward, K, V and their gradients in backward.
  const double chunk = 4096.0 * 8 * 128 * 2 * 2;
  const Kernel* kv = find(two, "layer.attn.cp nccl:send_recv (context-parallel K|V ring)");
  ASSERT_NE(kv, nullptr);
  EXPECT_DOUBLE_EQ(kv->bytes, chunk);
  EXPECT_DOUBLE_EQ(find(two, "layer.attn.cp nccl:send_recv (context-parallel K|V and dK|dV ring, backward)")->bytes,
                   2 * chunk);
  EXPECT_EQ(find(one, "layer.attn.cp nccl:send_recv (context-parallel K|V ring)"), nullptr);
  // The two GPUs hold the same weights: their gradients are all-reduced between them (2 (n - 1) / n
  // of the bf16 gradients), and each keeps half the activations.
  EXPECT_DOUBLE_EQ(bus_bytes(two, "dp.grad"), f2.params * 2);
  EXPECT_DOUBLE_EQ(bus_bytes(one, "dp.grad"), 0);
  EXPECT_NEAR(f2.activation_bytes / f1.activation_bytes, 0.5, 0.01);
}

// Sliding-window layers: each GPU does 1 / cp of the sequence's windowed pairs (S w - w^2 / 2).
TEST(ContextParallel, WindowedLayersShareTheirPairs) {
  SynthOptions o = ring(1);
  const auto one = synthesize("gemma-3-27b", o);
  o.cp = 4;
  const auto four = synthesize("gemma-3-27b", o);
  const std::string row = "local_layer.attn.flash aten::_scaled_dot_product_flash_attention";
  ASSERT_NE(find(one, row), nullptr);
  ASSERT_NE(find(four, row), nullptr);
  EXPECT_DOUBLE_EQ(find(four, row)->flops, find(one, row)->flops / 4);
}

TEST(ContextParallel, OnlyWholeSequencesWithFusedAttention) {
  SynthOptions eager = ring(2);
  eager.attention = AttentionImpl::eager;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", eager); }).find("--attention flash"), std::string::npos);
  SynthOptions decode = ring(2);
  decode.mode = Mode::decode;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", decode); }).find("'--cp'"), std::string::npos);
  SynthOptions odd = ring(3);
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", odd); }).find("chunks"), std::string::npos);
}

}  // namespace
}  // namespace kcast::synth

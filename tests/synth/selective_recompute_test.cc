// `--recompute selective` (Megatron-LM's selective activation recomputation, Korthikanti et al. 2022):
// eager attention's core — QK^T, its scaling and mask, softmax, dropout, the attention over V — keeps
// no scores and runs again before its backward. The paper's closed forms: a GPT layer in 16 bits then
// keeps 34 s b h bytes, s b h (10 + 24 / t) under t-way tensor parallelism, 34 s b h / t with sequence
// parallelism (against 34 s b h + 5 a s^2 b and so on without).
#include <gtest/gtest.h>

#include <string>

#include "predict/synth/synth.h"
#include "tests/synth/activation_layers.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using testing::gpt_training;
using testing::gpt_with_fused_gelu;
using testing::one_layer;
using testing::with_mode;

SynthOptions selective_training() {
  SynthOptions o = gpt_training();
  o.selective_recompute = true;
  return o;
}

TEST(SelectiveRecompute, GptLayerIsKorthikantisSelectiveCount) {
  const TransformerConfig gpt = gpt_with_fused_gelu();
  const double s = 2048, b = 4, h = 2048;
  const double stats = 2 * 8 * s * b;  // the LayerNorms' fp32 mean and rstd, which the paper leaves out
  SynthOptions o = selective_training();
  EXPECT_DOUBLE_EQ(one_layer(gpt, o), 34 * s * b * h + stats);
  for (int64_t t : {2, 4}) {
    o.tp = t;
    EXPECT_DOUBLE_EQ(one_layer(gpt, o), s * b * h * (10 + 24.0 / t) + stats) << "tp " << t;
  }
  o.sequence_parallel = true;
  for (int64_t t : {2, 4}) {
    o.tp = t;
    EXPECT_DOUBLE_EQ(one_layer(gpt, o), 34 * s * b * h / t + stats / t) << "sp " << t;
  }
}

// The time side: every forward row from QK^T to the attention over V runs once more before the
// layer's backward, named "(recompute)", with the same work and count; nothing else is added.
TEST(SelectiveRecompute, RerunsTheAttentionCoreOnly) {
  SynthOptions o = with_mode(Mode::train, 2, 512);
  const auto plain = synthesize("gpt2-large", o);
  o.selective_recompute = true;
  const auto re = synthesize("gpt2-large", o);
  std::vector<std::string> core;  // the forward rows of one layer's attention core, in order
  bool inside = false;
  for (const Kernel& k : plain) {
    if (k.name.rfind("layer.attn.qk aten::bmm (QK^T)", 0) == 0) inside = true;
    if (inside) core.push_back(k.name);
    if (k.name.rfind("layer.attn.pv aten::bmm (PV)", 0) == 0) break;
  }
  ASSERT_GE(core.size(), 4u);  // QK^T, scale, mask, softmax, dropout, PV
  const std::vector<std::string> recomputed = testing::recomputed_rows(plain, re);
  EXPECT_EQ(recomputed, core);
  EXPECT_EQ(re.size(), plain.size() + core.size());
}

// With a fused attention kernel there are no scores to drop and nothing to re-run: the same list and
// figure as without, and a note that says so.
TEST(SelectiveRecompute, IsANoOpWithFlashAttention) {
  SynthOptions o = with_mode(Mode::train, 2, 512);
  o.attention = AttentionImpl::flash;
  Footprint plain_f, sel_f;
  const auto plain = synthesize("llama3-8b", o, &plain_f);
  o.selective_recompute = true;
  const auto sel = synthesize("llama3-8b", o, &sel_f);
  testing::expect_same_rows(plain, sel);
  EXPECT_DOUBLE_EQ(plain_f.activation_bytes, sel_f.activation_bytes);
  ASSERT_FALSE(sel_f.notes.empty());
  EXPECT_NE(sel_f.notes.back().find("nothing is recomputed"), std::string::npos) << sel_f.notes.back();
}

}  // namespace
}  // namespace kcast::synth

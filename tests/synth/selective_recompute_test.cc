// `--recompute selective` (Megatron-LM's selective activation recomputation, Korthikanti et al. 2022):
// eager attention's core — QK^T, its scaling and mask, softmax, dropout, the attention over V — keeps
// no scores and runs again before its backward. The paper's closed forms: a GPT layer in 16 bits then
// keeps 34 s b h bytes, s b h (10 + 24 / t) under t-way tensor parallelism, 34 s b h / t with sequence
// parallelism (against 34 s b h + 5 a s^2 b and so on without).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "model/error.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using testing::with_mode;
using testing::write_temp;

// A GPT with PyTorch's fused GELU (as the paper's layers), attention dropout as in GPT-2.
TransformerConfig gpt_with_fused_gelu() {
  const std::string p = write_temp("selective_gpt.json", R"({"model_type": "gpt2", "n_embd": 2048, "n_layer": 24,
      "n_head": 16, "n_positions": 2048, "vocab_size": 50257, "activation_function": "gelu"})");
  TransformerConfig c = read_hf_config(p);
  std::remove(p.c_str());
  return c;
}

SynthOptions selective_training() {
  SynthOptions o = with_mode(Mode::train, 4, 2048);
  o.dtype = DType::fp16;
  o.selective_recompute = true;
  return o;
}

// One layer's activations: a two-layer step's less a one-layer step's.
double one_layer(const TransformerConfig& cfg, SynthOptions o) {
  Footprint two, one;
  o.layers = 2;
  synthesize_transformer(with_overrides(cfg, o), o, &two);
  o.layers = 1;
  synthesize_transformer(with_overrides(cfg, o), o, &one);
  return two.activation_bytes - one.activation_bytes;
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
  std::vector<std::string> recomputed;
  for (const Kernel& k : re) {
    const auto at = k.name.find(" (recompute)");
    if (at == std::string::npos) continue;
    recomputed.push_back(k.name.substr(0, at));
    const Kernel* fwd = testing::find(plain, k.name.substr(0, at));
    ASSERT_NE(fwd, nullptr) << k.name;
    EXPECT_EQ(fwd->flops, k.flops) << k.name;
    EXPECT_EQ(fwd->bytes, k.bytes) << k.name;
    EXPECT_EQ(fwd->count, k.count) << k.name;
  }
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
  EXPECT_EQ(plain.size(), sel.size());
  EXPECT_DOUBLE_EQ(plain_f.activation_bytes, sel_f.activation_bytes);
  ASSERT_FALSE(sel_f.notes.empty());
  EXPECT_NE(sel_f.notes.back().find("nothing is recomputed"), std::string::npos) << sel_f.notes.back();
}

TEST(SelectiveRecompute, OnlyInTransformerTraining) {
  SynthOptions bad = with_mode(Mode::infer, 2, 512);
  bad.selective_recompute = true;
  EXPECT_THROW(synthesize("llama3-8b", bad), InputError);
  bad.mode = Mode::train;
  bad.seq = 0;
  EXPECT_THROW(synthesize("resnet50", bad), InputError);
}

}  // namespace
}  // namespace kcast::synth

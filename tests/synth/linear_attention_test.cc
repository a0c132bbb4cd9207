// Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5): the hybrid layout, its parameters, its
// recurrent state in place of a KV cache, and the delta rule's kernels, in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::find;
using testing::with_mode;

// A small Qwen3-Next: 8 layers, every 4th full attention (gated output, 4 heads of 64, 2 KV heads,
// a quarter rotary); linear attention of 2 key heads and 4 value heads of 32; a dense MLP of 512.
std::string hybrid(const std::string& extra = "") {
  return R"({"model_type": "qwen3_next", "hidden_size": 256, "num_hidden_layers": 8, "num_attention_heads": 4,
      "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512, "vocab_size": 1000,
      "rms_norm_eps": 1e-6, "partial_rotary_factor": 0.25, "full_attention_interval": 4,
      "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 32,
      "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4, "tie_word_embeddings": false)" +
         extra + "}";
}

TEST(LinearAttention, LayoutAndParametersInClosedForm) {
  const TransformerConfig c = parse_hf_config(hybrid(), "h.json");
  EXPECT_TRUE(c.notes.empty());
  EXPECT_EQ(c.linear_layers, 6);  // layers 3 and 7 are full attention
  EXPECT_TRUE(c.attn_output_gate);
  const double d = 256;
  // Full attention: q_proj makes query and gate (2 x 256), k and v 128 each, o 256 -> 256, q / k norms of 64.
  const double full = d * 512 + 2 * d * 128 + 256 * d + 2 * 64;
  // Linear: qkvz (2 x 64 + 2 x 128), ba (2 x 4), the depthwise conv over q | k | v (256 channels x 4),
  // dt_bias and A_log (4 each), the gated norm (32), out_proj 128 -> 256.
  const double linear = d * 384 + d * 8 + 256 * 4 + 8 + 32 + 128 * d;
  const double per_layer = 2 * d + 3 * d * 512;  // two norms, the SwiGLU MLP
  EXPECT_DOUBLE_EQ(c.parameter_count(), 2 * full + 6 * linear + 8 * per_layer + 2 * 1000 * d + d);
  // layer_types, where listed, decide instead.
  std::string types = R"(, "layer_types": [)";
  for (int i = 0; i < 8; ++i) types += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"linear_attention\"");
  EXPECT_EQ(parse_hf_config(hybrid(types + "]"), "t.json").linear_layers, 4);
}

TEST(LinearAttention, DecodingKeepsAStatePerSequenceInsteadOfACache) {
  Footprint f;
  SynthOptions o = with_mode(Mode::decode, 3, 1000);
  o.dtype = DType::bf16;
  synthesize_transformer(parse_hf_config(hybrid(), "h.json"), o, &f);
  // 2 full layers cache K and V (2 heads of 64) for 1000 keys; 6 linear layers hold 4 heads' 32 x 32
  // fp32 state and the conv's last 3 inputs of 256 channels, per sequence.
  const double kv = 2 * 1000 * 2 * 2 * 64 * 2, state = 6 * (4 * 32 * 32 * 4 + 256 * 3 * 2);
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, 3 * (kv + state));
  const auto ks = synthesize_transformer(parse_hf_config(hybrid(), "h.json"), o);
  const Kernel* rec = find(ks, "linear_layer.linear_attn.gdn fla::fused_recurrent_gated_delta_rule");
  ASSERT_NE(rec, nullptr);
  EXPECT_EQ(rec->count, 6);
  EXPECT_DOUBLE_EQ(rec->flops, 3 * 4 * 6 * 32 * 32);  // S k, the update, S q per token and head
  EXPECT_GE(rec->bytes, 2 * 3 * 4 * 32 * 32 * 4.0);   // the state read and written
  EXPECT_NE(find(ks, "linear_layer.linear_attn.conv causal_conv1d_update"), nullptr);
  // Eager HF repeats q and k from the 2 key heads to the 4 value heads; serving kernels do not.
  EXPECT_NE(find(ks, "linear_layer.linear_attn.qk aten::repeat_interleave"), nullptr);
  o.runtime = Runtime::serving;
  const auto sv = synthesize_transformer(parse_hf_config(hybrid(), "h.json"), o);
  EXPECT_EQ(find(sv, "linear_layer.linear_attn.qk aten::repeat_interleave"), nullptr);
  EXPECT_NE(find(sv, "linear_layer.linear_attn.gating fused_gdn_gating"), nullptr);
}

TEST(LinearAttention, APromptRunsTheChunkedDeltaRuleAndGatesFullAttention) {
  SynthOptions o = with_mode(Mode::infer, 2, 256);
  o.dtype = DType::bf16;
  const auto ks = synthesize_transformer(parse_hf_config(hybrid(), "h.json"), o);
  const Kernel* chunk = find(ks, "linear_layer.linear_attn.gdn fla::chunk_gated_delta_rule");
  ASSERT_NE(chunk, nullptr);
  const double C = 64, dk = 32, dv = 32, tokens_heads = 2 * 256 * 4;
  EXPECT_DOUBLE_EQ(chunk->flops, tokens_heads * (6 * C * dk + 4 * C * dv + 6 * dk * dv + C * C / 1.5));
  // The full layers' q_proj also makes the gate; their output is multiplied by its sigmoid.
  const Kernel* q = find(ks, "layer.attn.q_proj aten::mm");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->n, 512);
  EXPECT_EQ(q->count, 2);
  EXPECT_NE(find(ks, "layer.attn.output_gate aten::sigmoid"), nullptr);
}

TEST(LinearAttention, TrainingAddsTheDeltaRulesBackwardAndSixNTFlops) {
  SynthOptions o = with_mode(Mode::train, 2, 256);
  o.dtype = DType::bf16;
  const TransformerConfig c = parse_hf_config(hybrid(), "h.json");
  const auto ks = synthesize_transformer(c, o);
  const Kernel* fwd = find(ks, "linear_layer.linear_attn.gdn fla::chunk_gated_delta_rule");
  const Kernel* bwd = find(ks, "linear_layer.linear_attn.gdn fla::chunk_gated_delta_rule_bwd");
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_DOUBLE_EQ(bwd->flops, 2.5 * fwd->flops);
  EXPECT_NE(find(ks, "linear_layer.linear_attn.conv causal_conv1d_bwd"), nullptr);
  // The projections' forward and backward: 6 x their parameters x the tokens.
  double proj = 0;
  for (const Kernel& k : ks)
    if (k.cls == KernelClass::gemm && k.name.find("linear_attn.in_proj") != std::string::npos) proj += k.count * k.flops;
  EXPECT_DOUBLE_EQ(proj, 6.0 * 512 * 6 * (256 * 384 + 256 * 8));
}

TEST(LinearAttention, WhatIsNotSynthesizedIsRefused) {
  auto err = [](const std::string& json, Mode mode, int64_t tp = 1, int64_t pp = 1) {
    return input_error_of([&] {
      SynthOptions o = with_mode(mode, 2, 64);
      o.tp = tp, o.pp = pp;
      synthesize_transformer(parse_hf_config(json, "h.json"), o);
    });
  };
  EXPECT_NE(err(hybrid(), Mode::infer, 1, 2).find("'--pp'"), std::string::npos);
  EXPECT_NE(err(hybrid(), Mode::infer, 4).find("'--tp'"), std::string::npos);  // 2 key heads
  // A hybrid type without its linear heads, and linear layers listed without them, are errors.
  const std::string plain = R"({"model_type": "qwen3_next", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 2, "intermediate_size": 256, "vocab_size": 10, "rms_norm_eps": 1e-6})";
  EXPECT_NE(input_error_of([&] { parse_hf_config(plain, "p.json"); }).find("'linear_num_value_heads'"),
            std::string::npos);
  const std::string listed = R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 2, "vocab_size": 10, "rms_norm_eps": 1e-6,
      "layer_types": ["linear_attention", "full_attention"]})";
  EXPECT_NE(input_error_of([&] { parse_hf_config(listed, "l.json"); }).find("linear_* head fields"),
            std::string::npos);
}

}  // namespace
}  // namespace kcast::synth

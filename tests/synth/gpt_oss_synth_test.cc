// GPT-OSS (20B: 32 experts, 120B: 128; top-4, sliding-window and full layers alternating) in `kcast
// synth`: the published parameter counts, and HF's eager code, which loops over the chosen experts
// in training but runs every expert on every token at inference.
#include <gtest/gtest.h>

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
using testing::test_config;
using testing::with_mode;

TEST(SynthGptOss, ParameterCountsAreThePublishedOnes) {
  const TransformerConfig small = test_config("gpt-oss-20b"), large = test_config("gpt-oss-120b");
  EXPECT_TRUE(small.notes.empty());  // known by name
  EXPECT_EQ(small.local_layers, 12);
  // Written out: attention with biases and a sink per head; per expert gate|up and down with their
  // biases; the router with its bias; two norms; embedding, untied head, final norm.
  const double d = 2880, F = 2880, V = 201088;
  const double attn = d * 4096 + 4096 + 2 * (d * 512 + 512) + 4096 * d + d + 64;
  auto total = [&](double L, double E) {
    return L * (attn + E * (d * 2 * F + 2 * F + F * d + d) + d * E + E + 2 * d) + 2 * V * d + d;
  };
  EXPECT_DOUBLE_EQ(small.parameter_count(), total(24, 32));
  EXPECT_DOUBLE_EQ(small.parameter_count(), 20914757184.0);  // model card: 20.91B
  EXPECT_DOUBLE_EQ(large.parameter_count(), 116829156672.0);  // 116.83B
  // Active parameters as published leave the input embedding out: 3.61B and 5.13B.
  EXPECT_NEAR((small.active_parameter_count() - V * d) / 3.61e9, 1.0, 0.005);
  EXPECT_NEAR((large.active_parameter_count() - V * d) / 5.13e9, 1.0, 0.005);
}

TEST(SynthGptOss, EagerInferenceRunsEveryExpertAndTrainingLoops) {
  const TransformerConfig c = test_config("gpt-oss-20b");
  const double T = 2 * 1024, d = 2880, F = 2880;
  const auto infer = synthesize_transformer(c, with_mode(Mode::infer, 2, 1024));
  const Kernel* up = find(infer, "layer.moe.experts aten::bmm (gate_up_proj)");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->batch, 32);
  EXPECT_DOUBLE_EQ(up->flops, 32 * 2 * T * d * 2 * F);  // all 32 experts on all tokens
  EXPECT_NE(find(infer, "layer.moe.experts.gate_up_proj aten::add (bias)"), nullptr);
  EXPECT_NE(find(infer, "layer.moe.gate aten::addmm"), nullptr);  // the router's bias
  EXPECT_NE(find(infer, "layer.moe.router aten::_softmax (top-k)"), nullptr);
  for (const char* op : {"aten::clamp (gate)", "aten::clamp (up)", "aten::sigmoid", "aten::add (up + 1)"})
    EXPECT_NE(find(infer, std::string("layer.moe.experts.act ") + op), nullptr) << op;
  EXPECT_EQ(find(infer, "layer.moe.experts.act aten::silu"), nullptr);
  // Eager attention appends each head's sink to every score row.
  const Kernel* sinks = find(infer, "layer.attn.sinks aten::max");
  ASSERT_NE(sinks, nullptr);
  EXPECT_DOUBLE_EQ(sinks->flops, 2 * 64 * 1024.0 * 1024);
  // Training: the loop over the experts the tokens hit (all 32 for 8192 picks), each expert's
  // projections with their biases; the same expert FLOPs as 4 of 32 experts per token.
  const auto train = synthesize_transformer(c, with_mode(Mode::train, 2, 1024));
  EXPECT_EQ(find(train, "layer.moe.experts aten::bmm (gate_up_proj)"), nullptr);
  const Kernel* loop_up = find(train, "layer.moe.experts.gate_proj|up_proj aten::addmm");
  ASSERT_NE(loop_up, nullptr);
  EXPECT_DOUBLE_EQ(loop_up->flops * loop_up->count / 12, 2 * (4 * T) * d * F * 2);  // per layer, gate and up
  // Expert parallelism: the routed loop (training) and FP8 serving take it; eager inference does not.
  SynthOptions ep = with_mode(Mode::train, 4, 1024);
  ep.dp = ep.ep = 4;
  EXPECT_NO_THROW(synthesize_transformer(c, ep));
  ep.mode = Mode::infer;
  EXPECT_NE(input_error_of([&] { synthesize_transformer(c, ep); }).find("'--ep'"), std::string::npos);
  ep.dtype = DType::fp8;
  EXPECT_NO_THROW(synthesize_transformer(c, ep));
}

// Narrow serving quantizes GPT-OSS's experts alone: its checkpoints are MXFP4 there and 16-bit in
// attention, the router, the embeddings and the head (quantization_config modules_to_not_convert),
// which is what a config saying so gets too; Qwen3's FP4 serving narrows its attention as well.
TEST(SynthGptOss, NarrowServingQuantizesOnlyTheExperts) {
  SynthOptions o = with_mode(Mode::decode, 64, 1024);
  o.runtime = Runtime::serving;
  o.attention = AttentionImpl::flash;
  o.dtype = DType::fp4;
  const auto oss = synthesize_transformer(test_config("gpt-oss-20b"), o);
  const Kernel* qkv = find(oss, "layer.attn.qkv_proj aten::addmm");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->dtype, DType::bf16);
  ASSERT_NE(find(oss, "layer.moe.experts cutlass_fp4_group_mm (w13)"), nullptr);
  EXPECT_EQ(find(oss, "layer.moe.experts cutlass_fp4_group_mm (w13)")->dtype, DType::fp4);
  const auto qwen = synthesize_transformer(test_config("qwen3-30b-a3b"), o);
  const Kernel* narrow = find(qwen, "layer.attn.qkv_proj cutlass_scaled_fp4_mm");
  ASSERT_NE(narrow, nullptr);
  EXPECT_EQ(narrow->dtype, DType::fp4);
  // A Mixtral-like config whose quantization leaves self_attn out.
  const std::string cfg = R"({"model_type": "mixtral", "hidden_act": "silu", "rms_norm_eps": 1e-05,
    "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
    "num_local_experts": 4, "num_experts_per_tok": 2,
    "quantization_config": {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]}})";
  EXPECT_TRUE(parse_hf_config(cfg, "q.json").quantized_experts_only);
  EXPECT_FALSE(test_config("mixtral-8x22b").quantized_experts_only);
}

}  // namespace
}  // namespace kcast::synth

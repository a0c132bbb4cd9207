// Llama 4 (Scout: 16 experts in every layer; Maverick: 128 experts every other layer) in `kcast
// synth`, from multimodal configs whose text_config is the language model: parameter counts written
// out from the dimensions, the layer layout, and the ops HF's eager Llama 4 adds or drops.
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

// The summed count of every row whose name ends with `suffix` (over all sections).
double runs(const std::vector<Kernel>& ks, const std::string& suffix) {
  double n = 0;
  for (const auto& k : ks)
    if (k.name.size() >= suffix.size() && k.name.compare(k.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      n += k.count;
  return n;
}

constexpr double d = 5120, L = 48, F = 8192, Fd = 16384, V = 202048;
const double attn = 2 * d * 40 * 128 + 2 * d * 8 * 128;

TEST(SynthLlama4, ParameterCounts) {
  const TransformerConfig scout = test_config("llama4-scout");
  ASSERT_EQ(scout.notes.size(), 1u);
  EXPECT_EQ(scout.notes[0], "the language model only; not synthesized: vision_config");
  EXPECT_EQ(scout.dense_layers, 0);
  // Every layer: attention, two norms, 16 experts, the router, one shared expert; the embedding,
  // the untied head and the final norm.
  const double moe16 = 16 * 3 * d * F + d * 16 + 3 * d * F;
  EXPECT_DOUBLE_EQ(scout.parameter_count(), L * (attn + 2 * d + moe16) + 2 * V * d + d);
  EXPECT_NEAR(scout.active_parameter_count() / 17e9, 1.0, 0.02);  // "17B active"

  const TransformerConfig mav = test_config("llama4-maverick");
  EXPECT_EQ(mav.dense_layers, 24);  // experts in layers 1, 3, ..., 47
  const double moe128 = 128 * 3 * d * F + d * 128 + 3 * d * F;
  EXPECT_DOUBLE_EQ(mav.parameter_count(), L * (attn + 2 * d) + 24 * 3 * d * Fd + 24 * moe128 + 2 * V * d + d);
  EXPECT_NEAR(mav.parameter_count() / 400e9, 1.0, 0.005);        // "400B total"
  EXPECT_NEAR(mav.active_parameter_count() / 17e9, 1.0, 0.02);  // "17B active"
}

TEST(SynthLlama4, EagerLayersAsHfRunsThem) {
  const TransformerConfig mav = test_config("llama4-maverick");
  const double T = 2 * 1024;
  const auto ks = synthesize_transformer(mav, with_mode(Mode::infer, 2, 1024));
  // Dense layers keep intermediate_size_mlp; expert layers add a shared expert of intermediate_size.
  const Kernel* dense = find(ks, "dense_layer.mlp.down_proj aten::mm");
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->k, Fd);
  EXPECT_DOUBLE_EQ(dense->count, 24);
  ASSERT_NE(find(ks, "layer.moe.shared_experts.down_proj aten::mm"), nullptr);
  EXPECT_EQ(find(ks, "layer.moe.shared_experts.down_proj aten::mm")->k, F);
  // Llama4TextExperts runs all 128 experts on every token: 128 x the routed expert's FLOPs.
  const Kernel* up = find(ks, "layer.moe.experts aten::bmm (gate_up_proj)");
  const Kernel* down = find(ks, "layer.moe.experts aten::bmm (down_proj)");
  ASSERT_NE(up, nullptr);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(up->batch, 128);
  EXPECT_EQ(up->m, T);
  EXPECT_DOUBLE_EQ(up->flops + down->flops, 128 * 2 * T * 3 * d * F);
  // Rotary on 36 of the 48 layers (every fourth is NoPE), temperature tuning on the other 12;
  // no q/k norm in Maverick; softmax in bf16 (no fp32 upcast and cast back).
  EXPECT_DOUBLE_EQ(runs(ks, "attn.rotary_q aten::mul (complex)"), 36);
  EXPECT_DOUBLE_EQ(runs(ks, "attn.temperature aten::mul (q)"), 12);
  EXPECT_DOUBLE_EQ(runs(ks, "attn.q_l2_norm aten::mean"), 0);
  EXPECT_DOUBLE_EQ(runs(ks, "attn.softmax aten::_softmax"), 48);
  EXPECT_DOUBLE_EQ(runs(ks, "attn.softmax aten::_to_copy"), 0);
  EXPECT_EQ(find(ks, "layer.attn.softmax aten::_softmax")->dtype, DType::bf16);
  // Scout L2-normalizes q and k on its rotary layers.
  const auto scout = synthesize_transformer(test_config("llama4-scout"), with_mode(Mode::infer, 1, 512));
  EXPECT_DOUBLE_EQ(runs(scout, "attn.q_l2_norm aten::mean"), 36);
  EXPECT_DOUBLE_EQ(runs(scout, "attn.k_l2_norm aten::mean"), 36);
}

// A serving engine's Llama 4 attention: on the rotary three quarters of the layers one rotary kernel
// over q and k and one fused weightless norm of their heads (each reading and writing them once);
// on the NoPE quarter one temperature multiply of q; none of eager's complex-number passes.
TEST(SynthLlama4, ServingRunsItsPositionOpsFused) {
  SynthOptions o = with_mode(Mode::decode, 4, 1024);
  o.runtime = Runtime::serving;
  o.attention = AttentionImpl::flash;
  const auto ks = synthesize_transformer(test_config("llama4-scout"), o);
  const double q = 4 * 40 * 128, kv = 4 * 8 * 128;  // one new token per sequence: q and k elements
  const Kernel* rot = find(ks, "layer.attn.rotary_qk vllm::rotary_embedding");
  const Kernel* norm = find(ks, "layer.attn.qk_l2_norm triton_fused_l2_norm (q|k)");
  const Kernel* temp = find(ks, "layer.attn.temperature triton_fused_mul (q, temperature)");
  ASSERT_NE(rot, nullptr);
  ASSERT_NE(norm, nullptr);
  ASSERT_NE(temp, nullptr);
  EXPECT_DOUBLE_EQ(rot->count, 36);
  EXPECT_DOUBLE_EQ(norm->count, 36);
  EXPECT_DOUBLE_EQ(temp->count, 12);
  EXPECT_DOUBLE_EQ(norm->bytes, 2 * (q + kv) * 2);  // bf16 in and out
  EXPECT_DOUBLE_EQ(temp->bytes, 2 * q * 2 + 4 * 8);  // q in and out, each token's int64 position
  for (const Kernel& k : ks) EXPECT_EQ(k.name.find("complex"), std::string::npos) << k.name;
}

TEST(SynthLlama4, ServingRoutesAndLimitsAreNamed) {
  const TransformerConfig scout = test_config("llama4-scout");
  // FP8 serving: fused MoE over the experts the tokens pick (top-1), the shared expert beside.
  SynthOptions o = with_mode(Mode::decode, 8, 8192);
  o.dtype = DType::fp8;
  o.attention = AttentionImpl::flash;
  const auto ks = synthesize_transformer(scout, o);
  ASSERT_NE(find(ks, "layer.moe.router fused_topk (sigmoid)"), nullptr);
  const Kernel* w13 = find(ks, "layer.moe.experts fused_moe_kernel (w13)");
  ASSERT_NE(w13, nullptr);
  EXPECT_EQ(w13->batch, 6);  // 8 tokens hit 16 (1 - (15/16)^8) = 6.4 of the experts
  EXPECT_EQ(find(ks, "layer.moe.experts aten::bmm (gate_up_proj)"), nullptr);
  o.dp = o.ep = 2;
  EXPECT_NO_THROW(synthesize_transformer(scout, o));
  SynthOptions eager = with_mode(Mode::infer, 2, 1024);
  eager.dp = eager.ep = 2;
  EXPECT_NE(input_error_of([&] { synthesize_transformer(scout, eager); }).find("'--ep'"), std::string::npos);
  // Chunked attention beyond one chunk is refused, naming the option and the chunk.
  const std::string e = input_error_of([&] { synthesize_transformer(scout, with_mode(Mode::infer, 1, 16384)); });
  EXPECT_NE(e.find("'--seq'"), std::string::npos) << e;
  EXPECT_NE(e.find("8192"), std::string::npos) << e;
}

}  // namespace
}  // namespace kcast::synth

// The activations an inference step holds at once (Footprint::activation_bytes outside training): one
// layer's busiest op beside the residual stream, counted here in closed form from the shapes of HF's
// eager code and of the fused kernels, for the cases where a different op is the busiest.
#include <gtest/gtest.h>

#include <string>

#include "predict/synth/synth.h"
#include "tests/predict/predict_fixture.h"
#include "tests/synth/synth_options.h"

namespace kcast::synth {
namespace {

using kcast::testing::run_kcast;
using testing::with_mode;

constexpr double kLlamaD = 4096, kLlamaV = 128256;

Footprint footprint_of(const std::string& model, SynthOptions o) {
  Footprint f;
  synthesize(model, o, &f);
  return f;
}

// Llama 3 8B prefilling 8 x 4096 tokens with HF's eager attention: the softmax holds the bf16 scores,
// their fp32 copy and the fp32 result (10 bytes per score, 8 x 32 heads x 4096 x 4096 scores) beside
// q, the 8 KV heads' k and v and their copies to all 32 heads.
TEST(InferenceMemory, EagerPrefillPeaksAtTheSoftmax) {
  const Footprint f = footprint_of("llama3-8b", with_mode(Mode::infer, 8, 4096));
  const double T = 8 * 4096.0, P = 8 * 32 * 4096.0 * 4096;
  const double stream = 2 * T * kLlamaD * 2;
  const double qkv = T * 32 * 128 * 2 + T * 8 * 256 * 2 + T * 32 * 256 * 2;
  EXPECT_TRUE(f.activations_transient);
  EXPECT_DOUBLE_EQ(f.activation_bytes, stream + qkv + 10 * P);
  EXPECT_DOUBLE_EQ(f.gradient_bytes + f.optimizer_bytes + f.kv_cache_bytes, 0);
}

// The same with a fused attention kernel: no scores, and the logits of every token (the LM head runs
// on all of them in a forward) are the largest tensor.
TEST(InferenceMemory, FlashPrefillPeaksAtTheLogits) {
  SynthOptions o = with_mode(Mode::infer, 8, 4096);
  o.attention = AttentionImpl::flash;
  const double T = 8 * 4096.0;
  EXPECT_DOUBLE_EQ(footprint_of("llama3-8b", o).activation_bytes, 2 * T * kLlamaD * 2 + T * kLlamaV * 2);
  // Under tensor parallelism each GPU holds an eighth of the vocabulary's logits, and the eager
  // RMSNorm's two fp32 copies of the (unsplit) hidden states become the larger.
  o.tp = 8;
  ASSERT_LT(T * (kLlamaV / 8) * 2, 8 * T * kLlamaD);
  EXPECT_DOUBLE_EQ(footprint_of("llama3-8b", o).activation_bytes, 2 * T * kLlamaD * 2 + 8 * T * kLlamaD);
}

// Decoding eagerly with grouped-query attention, HF's repeat_kv copies the whole cache to every head
// in each layer: 64 sequences x 8192 keys x 32 heads x (128 + 128) x 2 bytes, far more than the
// one-token scores. A fused kernel reads the shared heads from the cache and copies nothing.
TEST(InferenceMemory, EagerDecodeCopiesTheCacheToEveryHead) {
  SynthOptions o = with_mode(Mode::decode, 64, 8192);
  const double T = 64, P = 64 * 32 * 8192.0;
  const double copies = 64 * 8192.0 * 32 * 256 * 2;
  EXPECT_DOUBLE_EQ(footprint_of("llama3-8b", o).activation_bytes,
                   2 * T * kLlamaD * 2 + T * 32 * 128 * 2 + copies + 10 * P);
  o.attention = AttentionImpl::flash;
  EXPECT_DOUBLE_EQ(footprint_of("llama3-8b", o).activation_bytes, 2 * T * kLlamaD * 2 + T * kLlamaV * 2);
}

// A mixture decoding 64 tokens: each token's two experts as the fused MoE kernels buffer them (the
// gathered inputs, gate and up, the activation) outweigh the logits; plus the router's fp32 scores.
TEST(InferenceMemory, MixtureDecodePeaksInTheExperts) {
  SynthOptions o = with_mode(Mode::decode, 64, 4096);
  o.attention = AttentionImpl::flash;
  const double T = 64, Tk = 2 * T;
  EXPECT_DOUBLE_EQ(footprint_of("mixtral-8x7b", o).activation_bytes,
                   2 * T * 4096 * 2 + T * 8 * 4 + Tk * 4096 * 2 + 3 * Tk * 14336 * 2);
}

// GPT-2 large in fp32 (no upcast: softmax's input and output, 8 bytes per score), where the logits
// over 50257 tokens are still the larger; and a generation reports its prompt's peak, not its last
// decode step's.
TEST(InferenceMemory, GenerationTakesThePrefillPeak) {
  const double T = 4 * 1000.0, V = 50257;
  const Footprint infer = footprint_of("gpt2-large", with_mode(Mode::infer, 4, 1000));
  EXPECT_DOUBLE_EQ(infer.activation_bytes, 2 * T * 1280 * 4 + T * V * 4);
  SynthOptions g = with_mode(Mode::generate, 4, 1000);
  g.new_tokens = 16;
  const Footprint gen = footprint_of("gpt2-large", g);
  EXPECT_DOUBLE_EQ(gen.activation_bytes, infer.activation_bytes);
  EXPECT_GT(gen.kv_cache_bytes, 0);
}

// What the CLI makes of it: the eager prefill of 16 x 4096 tokens needs more than an H100 holds, the
// fused-attention one fits.
TEST(InferenceMemory, EagerLongPrefillDoesNotFitWhereFlashDoes) {
  const auto eager = run_kcast("synth llama3-8b --batch 16 --seq 4096 --gpu H100-SXM -o /dev/null", true);
  EXPECT_EQ(eager.rc, 0) << eager.out;
  EXPECT_NE(eager.out.find("(one layer's peak, estimate)"), std::string::npos) << eager.out;
  EXPECT_NE(eager.out.find("H100-SXM (85.90 GB): does not fit"), std::string::npos) << eager.out;
  const auto flash =
      run_kcast("synth llama3-8b --batch 16 --seq 4096 --attention flash --gpu H100-SXM -o /dev/null", true);
  EXPECT_NE(flash.out.find("H100-SXM (85.90 GB): fits"), std::string::npos) << flash.out;
}

}  // namespace
}  // namespace kcast::synth

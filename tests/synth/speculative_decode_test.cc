// `--decode-tokens Q` (SynthOptions::decode_tokens): a decode step that runs Q tokens of each sequence
// against its cache, as speculative decoding's verification of Q - 1 draft tokens does. Against the
// one-token step of the same cache: every projection and the LM head have Q times the rows, the
// attention Q times the FLOPs but the same cache read, the cache the same size.
#include <gtest/gtest.h>

#include <string>

#include "model/error.h"
#include "predict/synth/synth.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using testing::find;
using testing::with_mode;

SynthOptions verify(int64_t q, AttentionImpl a = AttentionImpl::flash) {
  SynthOptions o = with_mode(Mode::decode, 4, 1024);
  o.attention = a;
  o.decode_tokens = q;
  return o;
}

TEST(SpeculativeDecode, OneTokenIsPlainDecoding) {
  const auto plain = synthesize("llama3-8b", with_mode(Mode::decode, 4, 1024));
  const auto one = synthesize("llama3-8b", verify(1, AttentionImpl::eager));
  testing::expect_same_rows(plain, one);
}

TEST(SpeculativeDecode, VerifyingDraftsMultipliesRowsNotTheCacheRead) {
  Footprint f1, f4;
  const auto one = synthesize("llama3-8b", verify(1), &f1);
  const auto four = synthesize("llama3-8b", verify(4), &f4);
  for (const char* proj : {"layer.attn.q_proj aten::mm", "layer.mlp.down_proj aten::mm", "head.lm_head aten::mm"}) {
    const Kernel *a = find(one, proj), *b = find(four, proj);
    ASSERT_NE(a, nullptr) << proj;
    ASSERT_NE(b, nullptr) << proj;
    EXPECT_EQ(a->m, 4);  // one token of each of the 4 sequences
    EXPECT_EQ(b->m, 16) << proj;
    EXPECT_DOUBLE_EQ(b->flops, 4 * a->flops) << proj;
  }
  const std::string flash = "layer.attn.flash aten::_scaled_dot_product_flash_attention";
  const Kernel *a = find(one, flash), *b = find(four, flash);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // 4 sequences x 32 heads x Q queries x 1024 keys x 128 x 4 flops (q.k and p.v).
  EXPECT_DOUBLE_EQ(a->flops, 4 * 32 * 1024.0 * 128 * 4);
  EXPECT_DOUBLE_EQ(b->flops, 4 * a->flops);
  // Bytes: the cache's k and v read once either way (4 x 1024 keys x 8 heads x 128 x 2 tensors x 2
  // bytes); q and the output grow with the queries (4 sequences x Q x 4096 x 2 tensors x 2 bytes),
  // plus the fp32 log-sum-exp per head and query.
  const double cache = 4 * 1024.0 * 8 * 128 * 2 * 2;
  EXPECT_DOUBLE_EQ(a->bytes, cache + 4 * 1 * 4096.0 * 2 * 2 + 4 * 32 * 1 * 4.0);
  EXPECT_DOUBLE_EQ(b->bytes, cache + 4 * 4 * 4096.0 * 2 * 2 + 4 * 32 * 4 * 4.0);
  EXPECT_DOUBLE_EQ(f4.kv_cache_bytes, f1.kv_cache_bytes);
  EXPECT_GT(f4.activation_bytes, f1.activation_bytes);
}

// DeepSeek-V3's serving path: the absorbed per-head bmms run every verified token, the latent
// attention kernel Q times the FLOPs over the same cached rows.
TEST(SpeculativeDecode, LatentAttentionVerifiesEveryToken) {
  const auto one = synthesize("deepseek-v3", verify(1));
  const auto two = synthesize("deepseek-v3", verify(2));
  const Kernel *k1 = find(one, "layer.attn.absorb_k aten::bmm (q_nope x W_UK)"),
               *k2 = find(two, "layer.attn.absorb_k aten::bmm (q_nope x W_UK)");
  ASSERT_NE(k1, nullptr);
  ASSERT_NE(k2, nullptr);
  EXPECT_EQ(k1->m, 4);
  EXPECT_EQ(k2->m, 8);
  const Kernel *a1 = find(one, "layer.attn.mla_decode (latent cache)"),
               *a2 = find(two, "layer.attn.mla_decode (latent cache)");
  ASSERT_NE(a1, nullptr);
  ASSERT_NE(a2, nullptr);
  EXPECT_DOUBLE_EQ(a2->flops, 2 * a1->flops);
  // Per token beyond the cache: q (128 heads x 576) in, the latent output (128 x 512) out, and one
  // fp32 statistic per head, all in bf16 but the statistic.
  EXPECT_DOUBLE_EQ(a2->bytes - a1->bytes, 4 * (128 * (576 + 512) * 2.0 + 128 * 4));
}

TEST(SpeculativeDecode, OnlyDecodingAndAtMostTheContext) {
  SynthOptions train = with_mode(Mode::train, 4, 1024);
  train.decode_tokens = 2;
  EXPECT_THROW(synthesize("llama3-8b", train), InputError);
  EXPECT_THROW(synthesize("llama3-8b", verify(1025)), InputError);
  EXPECT_THROW(synthesize("llama3-8b", verify(0)), InputError);
}

}  // namespace
}  // namespace kcast::synth

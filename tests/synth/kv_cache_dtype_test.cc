// `--kv-cache-dtype` (SynthOptions::kv_cache_dtype): a decode step whose KV cache is stored in another
// dtype than the model's (serving stacks' FP8 cache): the cache's memory and the fused attention
// kernel's reads of it shrink by the element size; every other row stays as it was.
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

SynthOptions serving(std::optional<DType> kv, Mode mode = Mode::decode) {
  SynthOptions o = with_mode(mode, 8, 4096);
  o.attention = AttentionImpl::flash;
  o.kv_cache_dtype = kv;
  return o;
}

TEST(KvCacheDtype, TheModelsOwnDtypeChangesNothing) {
  const auto plain = synthesize("llama3-8b", serving(std::nullopt));
  const auto same = synthesize("llama3-8b", serving(DType::bf16));
  testing::expect_same_rows(plain, same);
}

// Llama 3 8B, 8 sequences at 4096 keys: the cache holds 32 layers x 2 (K, V) x 8 x 4096 x 8 heads x
// 128, one byte each in FP8; the attention kernel reads its layer's share once, plus q and the
// output in bf16 and the fp32 log-sum-exp; the new token's K and V are quantized as they are written.
TEST(KvCacheDtype, Fp8HalvesTheCacheAndItsReads) {
  Footprint f16, f8;
  const auto b16 = synthesize("llama3-8b", serving(std::nullopt), &f16);
  const auto b8 = synthesize("llama3-8b", serving(DType::fp8), &f8);
  const double cache = 32 * 2 * 8 * 4096.0 * 8 * 128;
  EXPECT_DOUBLE_EQ(f16.kv_cache_bytes, 2 * cache);
  EXPECT_DOUBLE_EQ(f8.kv_cache_bytes, cache);
  const Kernel* a = find(b8, "layer.attn.flash aten::_scaled_dot_product_flash_attention");
  ASSERT_NE(a, nullptr);
  EXPECT_DOUBLE_EQ(a->bytes, 2 * 8 * 4096.0 * 8 * 128 * 1 + 2 * 8 * 4096.0 * 2 + 8 * 32 * 4.0);
  const Kernel* w = find(b8, "layer.attn.kv_cache reshape_and_cache (quantized)");
  ASSERT_NE(w, nullptr);
  EXPECT_DOUBLE_EQ(w->count * w->bytes, 32 * 2 * (8 * 8 * 128.0) * (2 + 1));
  EXPECT_EQ(b8.size(), b16.size());
  for (const Kernel& k : b16)
    if (k.name.find("attn.") == std::string::npos) {
      const Kernel* same = find(b8, k.name);
      ASSERT_NE(same, nullptr) << k.name;
      EXPECT_EQ(same->bytes, k.bytes) << k.name;
    }
}

// DeepSeek-V3's latent cache (one 512 + 64 row per token, shared by the heads) in FP8.
TEST(KvCacheDtype, LatentCacheInFp8) {
  Footprint f16, f8;
  const auto b16 = synthesize("deepseek-v3", serving(std::nullopt), &f16);
  const auto b8 = synthesize("deepseek-v3", serving(DType::fp8), &f8);
  EXPECT_DOUBLE_EQ(f8.kv_cache_bytes, f16.kv_cache_bytes / 2);
  const std::string mla = "layer.attn.mla_decode (latent cache)";
  const Kernel *a16 = find(b16, mla), *a8 = find(b8, mla);
  ASSERT_NE(a16, nullptr);
  ASSERT_NE(a8, nullptr);
  EXPECT_DOUBLE_EQ(a16->bytes - a8->bytes, 8 * 4096.0 * 576 * (2 - 1));
}

// A generation's prompt reads no cache: its rows are the same; its decode steps read the FP8 cache.
TEST(KvCacheDtype, GenerationQuantizesOnlyTheDecodeSteps) {
  SynthOptions g16 = serving(std::nullopt, Mode::generate), g8 = serving(DType::fp8, Mode::generate);
  g16.seq = g8.seq = 1024;
  g16.new_tokens = g8.new_tokens = 32;
  Footprint f16, f8;
  const auto b16 = synthesize("llama3-8b", g16, &f16), b8 = synthesize("llama3-8b", g8, &f8);
  EXPECT_DOUBLE_EQ(f8.kv_cache_bytes, f16.kv_cache_bytes / 2);
  double prefill16 = 0, prefill8 = 0, decode16 = 0, decode8 = 0;
  for (const Kernel& k : b16) (k.name.rfind("prefill.", 0) == 0 ? prefill16 : decode16) += k.count * k.bytes;
  for (const Kernel& k : b8) (k.name.rfind("prefill.", 0) == 0 ? prefill8 : decode8) += k.count * k.bytes;
  EXPECT_DOUBLE_EQ(prefill8, prefill16);
  EXPECT_LT(decode8, decode16);
}

TEST(KvCacheDtype, OnlyADecodingFusedKernelReadsAQuantizedCache) {
  SynthOptions eager = serving(DType::fp8);
  eager.attention = AttentionImpl::eager;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", eager); }).find("--attention flash"), std::string::npos);
  const SynthOptions prefill = serving(DType::fp8, Mode::infer);
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", prefill); }).find("'--kv-cache-dtype'"), std::string::npos);
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", serving(DType::fp32)); }).find("not a KV cache dtype"),
            std::string::npos);
  SynthOptions cnn = serving(DType::fp8, Mode::infer);
  cnn.seq = 0;
  EXPECT_THROW(synthesize("resnet50", cnn), InputError);
}

}  // namespace
}  // namespace kcast::synth

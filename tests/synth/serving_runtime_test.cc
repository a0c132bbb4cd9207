// `kcast synth --runtime serving`: the kernels a serving stack (vLLM / SGLang) launches for an
// inference step, against the same step in PyTorch eager: the same projection FLOPs in fewer, fused
// kernels, logits for the sampled tokens only, the paged cache written every step.
#include <gtest/gtest.h>

#include <string>

#include "model/attention_kernel.h"
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

SynthOptions serving(Mode mode, int64_t batch, int64_t seq) {
  SynthOptions o = with_mode(mode, batch, seq);
  o.runtime = Runtime::serving;
  return o;
}

SynthOptions eager_flash(Mode mode, int64_t batch, int64_t seq) {
  SynthOptions o = with_mode(mode, batch, seq);
  o.attention = AttentionImpl::flash;
  return o;
}

bool in_layer(const Kernel& k) { return k.name.rfind("layer.", 0) == 0; }

// count x FLOPs of the layers' GEMMs.
double layer_gemm_flops(const std::vector<Kernel>& ks) {
  double f = 0;
  for (const Kernel& k : ks)
    if (in_layer(k) && k.cls == KernelClass::gemm) f += k.count * k.flops;
  return f;
}

TEST(ServingRuntime, ADenseLayerIsTenFusedKernels) {
  // Llama 3 8B decoding: per layer two fused add+RMSNorms, merged q|k|v and gate|up, one rotary kernel
  // for q and k, the cache write, attention, o and down, silu_and_mul. Eager runs 40-odd.
  const auto ks = synthesize("llama3-8b", serving(Mode::decode, 4, 1024));
  int rows = 0;
  for (const Kernel& k : ks)
    if (in_layer(k)) {
      ++rows;
      EXPECT_EQ(k.count, 32) << k.name;  // once per layer, 32 layers
    }
  EXPECT_EQ(rows, 10);
  for (const char* name :
       {"layer.input_norm vllm::fused_add_rms_norm", "layer.attn.qkv_proj aten::mm",
        "layer.attn.rotary_qk vllm::rotary_embedding", "layer.attn.kv_cache vllm::reshape_and_cache_flash",
        "layer.mlp.gate_up_proj aten::mm", "layer.mlp.act vllm::silu_and_mul"})
    EXPECT_NE(find(ks, name), nullptr) << name;
  int eager_rows = 0;
  for (const Kernel& k : synthesize("llama3-8b", eager_flash(Mode::decode, 4, 1024))) eager_rows += in_layer(k);
  EXPECT_GT(eager_rows, 30);
}

TEST(ServingRuntime, SameProjectionWorkAndCacheTraffic) {
  const auto s = synthesize("llama3-8b", serving(Mode::decode, 4, 1024));
  const auto e = synthesize("llama3-8b", eager_flash(Mode::decode, 4, 1024));
  EXPECT_DOUBLE_EQ(layer_gemm_flops(s), layer_gemm_flops(e));
  // The cache write: 4 tokens' K and V (8 KV heads x 128) read and written in bf16.
  const Kernel* cache = find(s, "layer.attn.kv_cache vllm::reshape_and_cache_flash");
  ASSERT_NE(cache, nullptr);
  EXPECT_DOUBLE_EQ(cache->bytes, 2 * 4 * 1024.0 * (2 + 2));
  // Attention reads the whole cache, as the eager fused kernel does.
  const Kernel* attn = find(s, "layer.attn.flash vllm::unified_attention (varlen | paged KV)");
  const Kernel* eager_attn = find(e, "layer.attn.flash aten::_scaled_dot_product_flash_attention");
  ASSERT_NE(attn, nullptr);
  ASSERT_NE(eager_attn, nullptr);
  EXPECT_DOUBLE_EQ(attn->flops, eager_attn->flops);
  EXPECT_DOUBLE_EQ(attn->bytes, eager_attn->bytes);
  // Serving stacks' attention runs each architecture's native instructions; PyTorch's flash backend
  // is FlashAttention-2's mma.sync everywhere (model/attention_kernel.h).
  EXPECT_FALSE(runs_mma_sync(attn->name));
  EXPECT_TRUE(runs_mma_sync(eager_attn->name));
}

TEST(ServingRuntime, APromptSamplesOnlyItsLastToken) {
  // Prefill of 2 x 512 tokens: the LM head runs on 2 rows, not 1024; the prompt's K and V go to the cache.
  const auto s = synthesize("llama3-8b", serving(Mode::infer, 2, 512));
  const Kernel* head = find(s, "head.lm_head aten::mm");
  ASSERT_NE(head, nullptr);
  EXPECT_DOUBLE_EQ(head->flops, 2.0 * 2 * 4096 * 128256);
  const auto eager = synthesize("llama3-8b", eager_flash(Mode::infer, 2, 512));
  const Kernel* eager_head = find(eager, "head.lm_head aten::mm");
  ASSERT_NE(eager_head, nullptr);
  EXPECT_DOUBLE_EQ(eager_head->flops, 2.0 * 1024 * 4096 * 128256);
  EXPECT_DOUBLE_EQ(find(s, "layer.attn.kv_cache vllm::reshape_and_cache_flash")->bytes, 2 * 1024 * 1024.0 * 4);
  EXPECT_NE(find(s, "head.sampler top_k_top_p_sampling"), nullptr);
}

TEST(ServingRuntime, APromptPeaksAtItsMlpNotItsLogits) {
  // Llama 3 8B prefilling 8 x 4096 tokens: eager holds every token's logits (8.4 GB in bf16); a serving
  // stack the last tokens' only, so the layer's peak is the residual stream and the MLP's gate, up and
  // product (3 x T x 14336 in bf16), the fused norms holding no fp32 copies.
  Footprint s, e;
  synthesize("llama3-8b", serving(Mode::infer, 8, 4096), &s);
  synthesize("llama3-8b", eager_flash(Mode::infer, 8, 4096), &e);
  const double T = 8 * 4096;
  EXPECT_DOUBLE_EQ(s.activation_bytes, 2 * T * 4096 * 2 + 3 * T * 14336 * 2);
  EXPECT_DOUBLE_EQ(e.activation_bytes, 2 * T * 4096 * 2 + T * 128256 * 2);  // eager's peak: the logits
}

TEST(ServingRuntime, MixturesRunTheFusedMoe) {
  const auto s = synthesize("qwen3-30b-a3b", serving(Mode::decode, 8, 1024));
  EXPECT_NE(find(s, "layer.moe.experts fused_moe_kernel (w13)"), nullptr);
  EXPECT_NE(find(s, "layer.moe.experts moe_align_block_size"), nullptr);
  for (const Kernel& k : s) EXPECT_EQ(k.name.find("nonzero"), std::string::npos) << k.name;  // no eager loop
  // Qwen3's per-head q / k norms stay, one kernel each.
  EXPECT_NE(find(s, "layer.attn.q_norm vllm::rms_norm"), nullptr);
}

TEST(ServingRuntime, GptOssRunsItsClampedSwigluAndSinksFused) {
  Footprint fs, fe;
  const auto s = synthesize("gpt-oss-20b", serving(Mode::decode, 4, 1024), &fs);
  synthesize("gpt-oss-20b", eager_flash(Mode::decode, 4, 1024), &fe);
  EXPECT_DOUBLE_EQ(fs.params, fe.params) << "the sink logits and biases are the same parameters";
  bool fused = false;
  for (const Kernel& k : s) {
    EXPECT_EQ(k.name.find("aten::clamp"), std::string::npos) << k.name;  // eager's seven-kernel SwiGLU
    EXPECT_EQ(k.name.find("attn.sinks"), std::string::npos) << k.name;   // the fused kernel reads the sinks
    fused |= k.name.find("swigluoai_and_mul") != std::string::npos;
  }
  EXPECT_TRUE(fused);
}

TEST(ServingRuntime, RefusedWhereItIsNotSynthesized) {
  struct Case {
    std::string model;
    Mode mode;
    std::string expect;
  };
  for (const Case& c : std::vector<Case>{{"llama3-8b", Mode::train, "inference"},
                                         {"bert-large", Mode::infer, "llama-like"},
                                         {"resnet50", Mode::infer, "resnet50"}}) {
    const int64_t seq = c.model == "resnet50" ? 0 : 64;
    const std::string err = input_error_of([&] { synthesize(c.model, serving(c.mode, 1, seq)); });
    EXPECT_NE(err.find("'--runtime'"), std::string::npos) << c.model << ": " << err;
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.model << ": " << err;
  }
}

}  // namespace
}  // namespace kcast::synth

namespace kcast::synth {
namespace {

// Each engine's layer kernels: vLLM's CUDA ops keep one element in flight per thread (its rotary and
// silu_and_mul; its fused residual-add norm loads vectors), SGLang's and TensorRT-LLM's load vectors.
// The same bytes either way: only how fast they move differs.
TEST(ServingRuntime, TheEngineSaysWhoseLayerKernelsRun) {
  auto of = [](ServingKernels e) {
    SynthOptions o = testing::with_mode(Mode::infer, 8, 2048);
    o.runtime = Runtime::serving;
    o.serving_kernels = e;
    return synthesize("llama3-8b", o);
  };
  const auto vllm = of(ServingKernels::vllm), sglang = of(ServingKernels::sglang), trtllm = of(ServingKernels::trtllm);
  ASSERT_EQ(vllm.size(), sglang.size());
  ASSERT_EQ(vllm.size(), trtllm.size());
  int bound = 0;
  for (size_t i = 0; i < vllm.size(); ++i) {
    EXPECT_EQ(vllm[i].bytes, trtllm[i].bytes) << vllm[i].name;
    EXPECT_EQ(vllm[i].bytes, sglang[i].bytes) << vllm[i].name;
    if (vllm[i].access == ThreadAccess::none) continue;
    if (vllm[i].access != ThreadAccess::index_select) {  // the embedding gather is PyTorch's in every engine
      ++bound;
      EXPECT_EQ(trtllm[i].access, ThreadAccess::none) << trtllm[i].name;
      EXPECT_EQ(sglang[i].access, ThreadAccess::none) << sglang[i].name;
    }
  }
  EXPECT_EQ(bound, 2);  // rotary, silu_and_mul
  const Kernel* act = testing::find(vllm, "layer.mlp.act vllm::silu_and_mul");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->access, ThreadAccess::gated_activation);
  EXPECT_NE(testing::find(trtllm, "layer.mlp.act trtllm::silu_and_mul"), nullptr);
}

}  // namespace
}  // namespace kcast::synth

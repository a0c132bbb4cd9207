// Mixtures of experts in `kcast synth`: the built-in Mixtral 8x7B and Hugging Face MoE configs,
// checked against the published parameter counts and closed-form FLOPs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "model/error.h"
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
using testing::write_temp;

bool attention_or_rotary(const Kernel& k) {
  return k.name.find("attn.qk ") != std::string::npos || k.name.find("attn.pv ") != std::string::npos ||
         k.name.find("rotary ") != std::string::npos;
}

// Forward GEMM FLOPs of the projections (attention's batched GEMMs and the rotary table left out).
double projection_flops(const std::vector<Kernel>& ks) {
  double f = 0;
  for (const auto& k : ks)
    if (k.cls == KernelClass::gemm && !attention_or_rotary(k)) f += k.flops * k.count;
  return f;
}

// Mixtral 8x7B's dimensions, written out here rather than read from the built-in table.
constexpr double d = 4096, L = 32, V = 32000, Fe = 14336, E = 8, kv = 8 * 128;
const double attn = 2 * d * d + 2 * d * kv;

TEST(SynthMoE, MixtralMatchesItsPublishedParameterCounts) {
  const TransformerConfig* c = find_builtin_transformer("mixtral-8x7b");
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->parameter_count(), 46702792704.0);  // 46.7B, as published
  // 12.9B active: attention, router and two experts per layer, embeddings and the untied head.
  EXPECT_DOUBLE_EQ(c->active_parameter_count(), L * (attn + d * E + 2 * 3 * d * Fe + 2 * d) + 2 * V * d + d);
  // Training: the Adam rows update every expert's parameters, chosen or not (bf16: 4 tensors of 2 bytes).
  const auto ks = synthesize("mixtral-8x7b", with_mode(Mode::train, 1, 64));
  const Kernel* lerp = find(ks, "optimizer.adam aten::_foreach_lerp_ (exp_avg)");
  ASSERT_NE(lerp, nullptr);
  EXPECT_NEAR(lerp->bytes * lerp->count / 6, 46702792704.0, 1);
}

TEST(SynthMoE, ForwardRunsTwoExpertsPerToken) {
  // 4 x 512 tokens, 2 of 8 experts each: all 8 experts hit, 512 tokens apiece.
  const auto ks = synthesize("mixtral-8x7b", with_mode(Mode::infer, 4, 512));
  const double T = 4 * 512;
  EXPECT_NEAR(projection_flops(ks) / (2 * T * (L * (attn + d * E + 2 * 3 * d * Fe) + V * d)), 1.0, 1e-9);
  const Kernel* up = find(ks, "layer.moe.experts.gate_proj|up_proj aten::mm");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->m, 512);
  EXPECT_EQ(up->n, 14336);
  EXPECT_DOUBLE_EQ(up->count, 2 * E * L);
  // Each expert's token count goes to the host (torch.where): one device-to-host copy per expert.
  const Kernel* sync = find(ks, "layer.moe.experts aten::nonzero (count to host)");
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->cls, KernelClass::memcpy);
  EXPECT_DOUBLE_EQ(sync->count, E * L);
}

TEST(SynthMoE, DecodingOneTokenRunsOnlyItsExperts) {
  const auto ks = synthesize("mixtral-8x7b", with_mode(Mode::decode, 1, 1024));
  const Kernel* down = find(ks, "layer.moe.experts.down_proj aten::mm");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->m, 1);
  EXPECT_DOUBLE_EQ(down->count, 2 * L);  // the token's two experts, not all eight
}

TEST(SynthMoE, TensorParallelSplitsExpertsAndFp8KeepsTheRouterBf16) {
  SynthOptions o = with_mode(Mode::infer, 2, 256);
  o.tp = 2;
  const auto tp = synthesize("mixtral-8x7b", o);
  const Kernel* up = find(tp, "layer.moe.experts.gate_proj|up_proj aten::mm");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->n, 14336 / 2);
  o.tp = 1;
  o.dtype = DType::fp8;
  const auto f8 = synthesize("mixtral-8x7b", o);
  const Kernel* router = find(f8, "layer.moe.gate aten::mm");
  ASSERT_NE(router, nullptr);
  EXPECT_EQ(router->dtype, DType::bf16);
  // Serving runs the experts as vLLM's fused_moe: one grouped FP8 GEMM each for gate|up and down
  // over the chosen experts (all eight for 512 tokens), no per-expert loop and no host sync.
  const Kernel* w13 = find(f8, "layer.moe.experts fused_moe_kernel (w13)");
  ASSERT_NE(w13, nullptr);
  EXPECT_EQ(w13->dtype, DType::fp8);
  EXPECT_EQ(std::vector<int64_t>({w13->batch, w13->m, w13->n, w13->k}), std::vector<int64_t>({8, 128, 2 * 14336, 4096}));
  EXPECT_DOUBLE_EQ(w13->count, L);
  EXPECT_EQ(find(f8, "layer.moe.experts aten::nonzero (count to host)"), nullptr);
  double expert_flops = 0;
  for (const auto& k : f8)
    if (k.name.find("fused_moe_kernel") != std::string::npos) expert_flops += k.flops * k.count;
  EXPECT_NEAR(expert_flops / (2 * 512 * L * 2 * 3 * d * Fe), 1.0, 1e-12);
  // NVFP4 serving: the same grouped GEMMs as CUTLASS FP4 ones, the router still BF16.
  o.dtype = DType::fp4;
  const auto f4 = synthesize("mixtral-8x7b", o);
  const Kernel* w13_4 = find(f4, "layer.moe.experts cutlass_fp4_group_mm (w13)");
  ASSERT_NE(w13_4, nullptr);
  EXPECT_EQ(w13_4->dtype, DType::fp4);
  EXPECT_EQ(std::vector<int64_t>({w13_4->batch, w13_4->m, w13_4->n, w13_4->k}),
            std::vector<int64_t>({w13->batch, w13->m, w13->n, w13->k}));
  ASSERT_NE(find(f4, "layer.moe.gate aten::mm"), nullptr);
  EXPECT_EQ(find(f4, "layer.moe.gate aten::mm")->dtype, DType::bf16);
}

// Qwen1.5-MoE-A2.7B's config.json (Qwen/Qwen1.5-MoE-A2.7B): 60 experts of 1408, 4 per token, and a
// shared expert of 5632 behind a sigmoid gate; top-k weights not renormalized.
const char* kQwenMoe = R"({"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24,
    "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 5632, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts": 60, "num_experts_per_tok": 4, "norm_topk_prob": false,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936, "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-06, "hidden_act": "silu", "tie_word_embeddings": false})";

TransformerConfig read_text(const std::string& name, const char* json) {
  const std::string p = write_temp(name, json);
  TransformerConfig c = read_hf_config(p);
  std::filesystem::remove(p);
  return c;
}

TEST(SynthMoE, QwenMoeConfigAddsTheSharedExpert) {
  const TransformerConfig c = read_text("qwen_moe.json", kQwenMoe);
  // Qwen2's q/k/v biases included (model card: 14.3B in total).
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_DOUBLE_EQ(c.parameter_count(), 14315784192.0);
  EXPECT_EQ(c.experts, 60);
  EXPECT_EQ(c.experts_per_token, 4);
  EXPECT_EQ(c.expert_ffn, 1408);
  EXPECT_EQ(c.shared_expert_ffn, 5632);
  EXPECT_FALSE(c.norm_topk);
  const auto ks = synthesize_transformer(c, with_mode(Mode::infer, 1, 600));  // 2400 picks: 40 per expert
  const double T = 600, dq = 2048, layers = 24;
  const double per_token = dq * dq * 4 + dq * 60 + 4 * 3 * dq * 1408 + 3 * dq * 5632 + dq;
  EXPECT_NEAR(projection_flops(ks) / (2 * T * (layers * per_token + 151936 * dq)), 1.0, 1e-9);
  const Kernel* shared = find(ks, "layer.moe.shared_expert.down_proj aten::mm");
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->m, 600);
  EXPECT_DOUBLE_EQ(shared->count, layers);
  EXPECT_NE(find(ks, "layer.moe.shared_expert_gate aten::sigmoid"), nullptr);
  EXPECT_EQ(find(ks, "layer.moe.router aten::sum|div (renormalize)"), nullptr);
}

// Qwen3-30B-A3B's config.json (Qwen/Qwen3-30B-A3B): 32 heads of 128 over a hidden size of 2048,
// per-head q/k RMSNorm, 128 experts of 768, 8 per token.
const char* kQwen3Moe = R"({"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48,
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144,
    "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": true,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936, "max_position_embeddings": 40960,
    "rms_norm_eps": 1e-06, "hidden_act": "silu", "tie_word_embeddings": false, "attention_bias": false})";

TEST(SynthMoE, Qwen3MoeHeadsWiderThanTheHiddenSize) {
  const TransformerConfig c = read_text("qwen3_moe.json", kQwen3Moe);
  EXPECT_EQ(c.head_dim(), 128);
  EXPECT_DOUBLE_EQ(c.parameter_count(), 30532122624.0);          // model card: 30.5B in total
  EXPECT_DOUBLE_EQ(c.active_parameter_count(), 3353032704.0);    // and 3.3B activated
  const auto ks = synthesize_transformer(c, with_mode(Mode::infer, 1, 256));  // 2048 picks: 16 per expert
  const Kernel* q = find(ks, "layer.attn.q_proj aten::mm");
  const Kernel* o = find(ks, "layer.attn.out_proj aten::mm");
  ASSERT_NE(q, nullptr);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(std::vector<int64_t>({q->n, q->k}), std::vector<int64_t>({32 * 128, 2048}));
  EXPECT_EQ(std::vector<int64_t>({o->n, o->k}), std::vector<int64_t>({2048, 32 * 128}));
  const Kernel* qk = find(ks, "layer.attn.qk aten::bmm (QK^T)");
  ASSERT_NE(qk, nullptr);
  EXPECT_EQ(qk->batch, 32);
  EXPECT_EQ(qk->k, 128);
  // The per-head q norm: its mean runs over 256 x 32 rows of 128.
  const Kernel* qn = find(ks, "layer.attn.q_norm aten::mean");
  ASSERT_NE(qn, nullptr);
  EXPECT_DOUBLE_EQ(qn->flops, 256.0 * 32 * 128);
  const Kernel* up = find(ks, "layer.moe.experts.gate_proj|up_proj aten::mm");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->m, 16);
  EXPECT_DOUBLE_EQ(up->count, 2 * 128 * 48);
}

TransformerConfig deepseek_v3() { return testing::test_config("deepseek-v3"); }

// DeepSeek-V3: latent attention, 3 dense layers then 58 of 256 routed experts (8 per token) and one
// shared expert, a sigmoid router with group-limited top-k.
TEST(SynthMoE, DeepSeekV3MatchesItsPublishedParameterCounts) {
  const TransformerConfig c = deepseek_v3();
  EXPECT_TRUE(c.mla());
  EXPECT_EQ(c.dense_layers, 3);
  EXPECT_EQ(c.experts, 256);
  EXPECT_EQ(c.shared_expert_ffn, 2048);
  EXPECT_EQ(c.router, TransformerConfig::Router::sigmoid);
  // Written out from the dimensions: attention (q_a, its norm, q_b; kv_a, its norm, kv_b; o).
  const double dd = 7168, H = 128;
  const double at = dd * 1536 + 1536 + 1536 * H * 192 + dd * 576 + 512 + 512 * H * 256 + H * 128 * dd;
  const double expert = 3 * dd * 2048, dense_mlp = 3 * dd * 18432, router = dd * 256 + 256;
  const double emb = 2 * 129280 * dd + dd;  // embedding, untied head, final norm
  EXPECT_DOUBLE_EQ(c.parameter_count(), 3 * (at + 2 * dd + dense_mlp) + 58 * (at + 2 * dd + 257 * expert + router) + emb);
  EXPECT_DOUBLE_EQ(c.parameter_count(), 671026419200.0);  // model card: 671B in total
  EXPECT_NEAR(c.active_parameter_count() / 37e9, 1.0, 0.02);  // and 37B activated
}

TEST(SynthMoE, DeepSeekV3LatentAttentionShapesAndFlops) {
  const TransformerConfig c = deepseek_v3();
  const auto ks = synthesize_transformer(c, with_mode(Mode::infer, 1, 512));  // 4096 picks: 16 per expert
  auto shape = [&](const std::string& name) {
    const Kernel* k = find(ks, name);
    return k ? std::vector<int64_t>({k->batch, k->m, k->n, k->k, int64_t(k->count)}) : std::vector<int64_t>{};
  };
  EXPECT_EQ(shape("layer.attn.q_b_proj aten::mm"), std::vector<int64_t>({1, 512, 128 * 192, 1536, 58}));
  EXPECT_EQ(shape("layer.attn.kv_b_proj aten::mm"), std::vector<int64_t>({1, 512, 128 * 256, 512, 58}));
  EXPECT_EQ(shape("layer.attn.qk aten::bmm (QK^T)"), std::vector<int64_t>({128, 512, 512, 192, 58}));
  EXPECT_EQ(shape("layer.attn.pv aten::bmm (PV)"), std::vector<int64_t>({128, 512, 128, 512, 58}));
  EXPECT_EQ(shape("layer.attn.out_proj aten::mm"), std::vector<int64_t>({1, 512, 7168, 128 * 128, 58}));
  EXPECT_EQ(shape("dense_layer.mlp.down_proj aten::mm"), std::vector<int64_t>({1, 512, 7168, 18432, 3}));
  EXPECT_EQ(shape("layer.moe.experts.down_proj aten::mm"), std::vector<int64_t>({1, 16, 7168, 2048, 256 * 58}));
  EXPECT_EQ(shape("layer.moe.shared_experts.down_proj aten::mm"), std::vector<int64_t>({1, 512, 7168, 2048, 58}));
  EXPECT_EQ(find(ks, "layer.moe.shared_expert_gate aten::sigmoid"), nullptr);  // DeepSeek's is not gated
  EXPECT_NE(find(ks, "layer.moe.router aten::topk (groups)"), nullptr);
  // Projections: 2 x tokens x every weight a token passes through (norms, router bias, embedding out).
  const double dd = 7168, H = 128, T = 512;
  const double at = dd * 1536 + 1536 * H * 192 + dd * 576 + 512 * H * 256 + H * 128 * dd;
  const double per_token = 3 * (at + 3 * dd * 18432) + 58 * (at + 9 * 3 * dd * 2048 + dd * 256) + 129280 * dd;
  EXPECT_NEAR(projection_flops(ks) / (2 * T * per_token), 1.0, 1e-9);
  // Eager decoding keeps every head's k (192 wide) and v (128) in the cache, as HF's eager cache does.
  Footprint f;
  synthesize_transformer(c, with_mode(Mode::decode, 4, 1000), &f);
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, 61.0 * 4 * 1000 * 128 * (192 + 128) * 2);
  // One layer a stage: the critical stage holds an expert layer (the three dense ones lead, on the first).
  SynthOptions pp = with_mode(Mode::train, 2, 64);
  pp.pp = 61;
  pp.microbatches = 2;
  const auto staged = synthesize_transformer(c, pp);
  EXPECT_EQ(find(staged, "dense_layer.mlp.down_proj aten::mm"), nullptr);
  EXPECT_NE(find(staged, "layer.moe.gate aten::mm"), nullptr);
}

// Decoding with a fused kernel is the serving stacks' latent path: the cache holds one 576-wide
// [latent | rotary key] row per token for all 128 heads, kv_b never runs (its halves are absorbed
// into two per-head bmms), and attention is multi-query over the latent.
TEST(SynthMoE, DeepSeekV3FlashDecodeReadsTheLatentCache) {
  const TransformerConfig c = deepseek_v3();
  const double B = 32, S = 4096, H = 128, layers = 61;
  SynthOptions o = with_mode(Mode::decode, 32, 4096);
  o.attention = AttentionImpl::flash;
  Footprint eager_f, flash_f;
  synthesize_transformer(c, with_mode(Mode::decode, 32, 4096), &eager_f);
  const auto ks = synthesize_transformer(c, o, &flash_f);
  EXPECT_DOUBLE_EQ(flash_f.kv_cache_bytes, layers * B * S * (512 + 64) * 2);
  EXPECT_DOUBLE_EQ(flash_f.params, eager_f.params);  // kv_b is still held
  EXPECT_DOUBLE_EQ(flash_f.weight_bytes, eager_f.weight_bytes);  // BF16: the absorbed halves are views of it
  EXPECT_EQ(find(ks, "layer.attn.kv_b_proj aten::mm"), nullptr);
  const Kernel* att = find(ks, "layer.attn.mla_decode (latent cache)");
  ASSERT_NE(att, nullptr);
  EXPECT_EQ(att->cls, KernelClass::attention);
  EXPECT_DOUBLE_EQ(att->flops, 2 * B * H * S * (576 + 512));  // q.k over 576, p.v over 512
  EXPECT_GE(att->bytes, B * S * 576 * 2);                      // the cache, read once for all heads
  EXPECT_LT(att->bytes, 1.1 * B * S * 576 * 2);
  EXPECT_DOUBLE_EQ(att->count, 58);
  auto shape = [&](const std::string& name) {
    const Kernel* k = find(ks, name);
    return k ? std::vector<int64_t>({k->batch, k->m, k->n, k->k}) : std::vector<int64_t>{};
  };
  EXPECT_EQ(shape("layer.attn.absorb_k aten::bmm (q_nope x W_UK)"), std::vector<int64_t>({128, 32, 512, 128}));
  EXPECT_EQ(shape("layer.attn.absorb_v aten::bmm (o_latent x W_UV)"), std::vector<int64_t>({128, 32, 128, 512}));
  // FP8 serving keeps BF16 copies of kv_b's halves beside its FP8 weights: 61 x 512 x 128 x 256 x 2 bytes.
  o.dtype = DType::fp8;
  SynthOptions fp8_eager = with_mode(Mode::decode, 32, 4096);
  fp8_eager.dtype = DType::fp8;
  Footprint fp8_flash_f, fp8_eager_f;
  synthesize_transformer(c, o, &fp8_flash_f);
  synthesize_transformer(c, fp8_eager, &fp8_eager_f);
  EXPECT_DOUBLE_EQ(fp8_flash_f.weight_bytes - fp8_eager_f.weight_bytes, layers * 512 * H * 256 * 2);
  // Tensor parallelism splits the heads, not the latent: every GPU caches all of it.
  o.tp = 8;
  Footprint tp_f;
  const auto tp = synthesize_transformer(c, o, &tp_f);
  EXPECT_DOUBLE_EQ(tp_f.kv_cache_bytes, flash_f.kv_cache_bytes);
  ASSERT_NE(find(tp, "layer.attn.mla_decode (latent cache)"), nullptr);
  EXPECT_DOUBLE_EQ(find(tp, "layer.attn.mla_decode (latent cache)")->flops, att->flops / 8);
}

// Dense layers between the expert layers, as each family's HF code places them: only their number
// matters to the step (the rows carry counts), so each layout is counted.
TEST(SynthMoE, InterleavedDenseLayersAreCounted) {
  auto parse = [](const std::string& extra) {
    return parse_hf_config(R"({"hidden_size": 64, "num_hidden_layers": 12, "num_attention_heads": 2,
        "vocab_size": 10, "rms_norm_eps": 1e-6, "intermediate_size": 96, "num_experts_per_tok": 2, )" + extra + "}",
                           "moe.json");
  };
  // Qwen2-MoE: layer i routes iff (i + 1) % decoder_sparse_step == 0 and i is not in mlp_only_layers.
  EXPECT_EQ(parse(R"("num_experts": 8, "decoder_sparse_step": 2)").dense_layers, 6);
  EXPECT_EQ(parse(R"("num_experts": 8, "decoder_sparse_step": 3, "mlp_only_layers": [2, 4])").dense_layers, 9);
  // DeepSeek-V2: iff i >= first_k_dense_replace and i % moe_layer_freq == 0 (0, 2, ... 10 minus 0).
  const std::string v2 = R"("n_routed_experts": 8, "moe_intermediate_size": 8, "first_k_dense_replace": 1, )";
  EXPECT_EQ(parse(v2 + R"("moe_layer_freq": 2)").dense_layers, 7);
  // The dense layers' MLP is intermediate_size wide; 6 of each, the counts carried by the sections.
  const TransformerConfig c = parse(R"("num_experts": 8, "decoder_sparse_step": 2, "moe_intermediate_size": 32)");
  const auto ks = synthesize_transformer(c, with_mode(Mode::infer, 1, 16));
  const Kernel* dense = find(ks, "dense_layer.mlp.down_proj aten::mm");
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->k, 96);
  EXPECT_DOUBLE_EQ(dense->count, 6);
  ASSERT_NE(find(ks, "layer.moe.gate aten::mm"), nullptr);
  EXPECT_DOUBLE_EQ(find(ks, "layer.moe.gate aten::mm")->count, 6);
  const double d = 64, attn = 4 * d * d;
  const double experts = 8 * 3 * d * 32 + 8 * d;  // and the router
  EXPECT_DOUBLE_EQ(c.parameter_count(), 12 * (attn + 2 * d) + 6 * 3 * d * 96 + 6 * experts + 2 * 10 * d + d);
}

TEST(SynthMoE, UnsupportedLayoutsAreRefusedNamingTheKey) {
  auto err = [](const std::string& extra) {
    const std::string p = write_temp("bad_moe.json", R"({"hidden_size": 64, "num_hidden_layers": 2,
        "num_attention_heads": 2, "intermediate_size": 256, "vocab_size": 10, "rms_norm_eps": 1e-6, )" + extra + "}");
    const std::string e = input_error_of([&] { read_hf_config(p); });
    std::filesystem::remove(p);
    return e.find(p) == std::string::npos ? "(file not named) " + e : e;
  };
  EXPECT_NE(err(R"("n_routed_experts": 64)").find("missing key 'num_experts_per_tok'"), std::string::npos);
  EXPECT_NE(err(R"("kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
      "num_key_value_heads": 1)").find("latent attention gives every head its own k and v"),
            std::string::npos);
  EXPECT_NE(err(R"("num_experts": 8, "num_experts_per_tok": 2, "mlp_only_layers": [2])").find("'mlp_only_layers'"),
            std::string::npos);  // only 2 layers
  EXPECT_NE(err(R"("num_experts": 8, "num_experts_per_tok": 2, "mlp_only_layers": [0, 1])").find("no expert layer"),
            std::string::npos);
  EXPECT_NE(err(R"("num_experts": 8, "num_experts_per_tok": 9)").find("9 experts per token exceed the 8 experts"),
            std::string::npos);
  EXPECT_NE(err(R"("num_experts": "many", "num_experts_per_tok": 2)").find("key 'num_experts'"), std::string::npos);
  EXPECT_NE(err(R"("num_experts": 100000, "num_experts_per_tok": 2)").find("implausibly many"), std::string::npos);
  // A GPT-2 style (LayerNorm, GELU) model with experts is not built as a dense one.
  const std::string p = write_temp("gpt_moe.json", R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2,
      "n_head": 2, "vocab_size": 10, "num_experts": 8, "num_experts_per_tok": 2})");
  EXPECT_NE(input_error_of([&] { read_hf_config(p); }).find("llama-like"), std::string::npos);
  std::filesystem::remove(p);
  // One expert is a dense MLP.
  const std::string q = write_temp("one_expert.json", R"({"hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 2, "intermediate_size": 256, "vocab_size": 10, "rms_norm_eps": 1e-6,
      "num_local_experts": 1})");
  EXPECT_EQ(read_hf_config(q).experts, 0);
  std::filesystem::remove(q);
}

double class_total(const std::vector<Kernel>& ks, KernelClass cls, double Kernel::*field, const std::string& has) {
  double t = 0;
  for (const auto& k : ks)
    if (k.cls == cls && k.name.find(has) != std::string::npos) t += k.*field * k.count;
  return t;
}

TEST(SynthMoE, ExpertParallelSplitsExpertsAndExchangesTokens) {
  // 16 sequences of 1024 over 8 data-parallel GPUs: 2048 tokens, 4096 expert picks per GPU.
  SynthOptions o = with_mode(Mode::train, 16, 1024);
  o.attention = AttentionImpl::flash;
  o.dp = 8;
  const auto dense = synthesize("mixtral-8x7b", o);
  o.ep = 8;
  const auto ep = synthesize("mixtral-8x7b", o);
  // The same expert FLOPs per GPU, in one expert of 4096 tokens instead of eight of 512.
  EXPECT_NEAR(class_total(ep, KernelClass::gemm, &Kernel::flops, "moe.experts") /
                  class_total(dense, KernelClass::gemm, &Kernel::flops, "moe.experts"),
              1.0, 1e-12);
  const Kernel* down = find(ep, "layer.moe.experts.down_proj aten::mm");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->m, 4096);
  EXPECT_DOUBLE_EQ(down->count, L);
  // Four all-to-alls per layer (dispatch and combine, forward and backward), each sending 7/8 of
  // the 4096 picked tokens' bf16 hidden states.
  EXPECT_NEAR(class_total(ep, KernelClass::communication, &Kernel::bytes, "all_to_all"),
              4 * L * 4096 * d * 2 * 7.0 / 8, 1);
  EXPECT_EQ(class_total(dense, KernelClass::communication, &Kernel::bytes, "all_to_all"), 0);
  // The GPU updates its one expert per layer and every dense parameter; no expert gradient leaves
  // it (the eight GPUs hold different experts), the dense ones are all-reduced over all eight.
  const double dense_params = L * (attn + d * E + 2 * d) + 2 * V * d + d;
  const Kernel* lerp = find(ep, "optimizer.adam aten::_foreach_lerp_ (exp_avg)");
  ASSERT_NE(lerp, nullptr);
  EXPECT_NEAR(lerp->bytes * lerp->count / 6, dense_params + L * 3 * d * Fe, 1);
  EXPECT_EQ(find(ep, "dp.grad nccl:all_reduce (expert gradients, DistributedDataParallel bucket)"), nullptr);
  // With 16 replicas, each expert lives on two of them, which all-reduce its gradient.
  o.batch = 32;
  o.dp = 16;
  const auto ep2 = synthesize("mixtral-8x7b", o);
  const double expert_bytes = class_total(ep2, KernelClass::communication, &Kernel::bytes, "expert gradients");
  EXPECT_NEAR(expert_bytes / (2.0 * (2 - 1) / 2 * L * 3 * d * Fe * 2), 1.0, 1e-9);
}

// Megatron-Core's MoE parallel folding: 8 expert-parallel GPUs over tp 2 x dp 4 (more than the data-
// parallel replicas), expert tensor parallelism 1. Each GPU routes its sequence-parallel shard (1024
// of the 2048 tokens of its replica), holds one whole expert, and the block has no tensor-parallel
// gather or scatter; no other GPU holds its expert (tp x dp / ep = 1 replica), so no expert gradient
// is reduced.
TEST(SynthMoE, ExpertParallelFoldsOverTheTensorParallelRanks) {
  SynthOptions o = with_mode(Mode::train, 8, 1024);
  o.attention = AttentionImpl::flash;
  o.layers = 2;
  o.tp = 2;
  o.dp = 4;
  o.ep = 8;
  o.sequence_parallel = true;
  const auto ks = synthesize("mixtral-8x7b", o);
  const Kernel* down = find(ks, "layer.moe.experts.down_proj aten::mm");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->k, int64_t(Fe));          // a whole expert
  EXPECT_EQ(down->m, 2 * 1024);             // 1024 tokens x 2 picks, all to this GPU's expert
  EXPECT_EQ(find(ks, "layer.mlp.input nccl:all_gather (sequence parallel)"), nullptr);
  EXPECT_EQ(find(ks, "layer.mlp.down_proj nccl:reduce_scatter (sequence parallel)"), nullptr);
  EXPECT_NE(find(ks, "layer.attn.out_proj nccl:reduce_scatter (sequence parallel)"), nullptr);  // attention keeps TP
  EXPECT_NEAR(class_total(ks, KernelClass::communication, &Kernel::bytes, "all_to_all"),
              4 * 2 * (1024 * 2) * d * 2 * 7.0 / 8, 1);
  EXPECT_EQ(class_total(ks, KernelClass::communication, &Kernel::bytes, "expert gradients"), 0);
  // Not in serving: its expert parallelism is over attention data-parallel ranks.
  o.mode = Mode::infer;
  EXPECT_THROW(synthesize("mixtral-8x7b", o), InputError);
}

// Expert parallelism with pipeline stages: each stage's GPUs run the same expert GEMMs per layer and
// micro-batch as without stages (the same tokens per rank, the same local experts), over half the
// layers each: summed over the two stages, the step's expert FLOPs are expert parallelism's alone.
TEST(SynthMoE, PipelineStagesSplitTheExpertFlopsOfExpertParallelism) {
  SynthOptions o = with_mode(Mode::train, 16, 1024);
  o.attention = AttentionImpl::flash;
  o.dp = 8;
  o.ep = 8;
  o.microbatches = 2;
  const auto flat = synthesize("mixtral-8x7b", o);
  o.pp = 2;
  const auto staged = synthesize("mixtral-8x7b", o);
  const Kernel* a = find(flat, "layer.moe.experts.down_proj aten::mm");
  const Kernel* b = find(staged, "layer.moe.experts.down_proj aten::mm");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->flops, b->flops);  // one launch: the same tokens on the same expert
  // Launches per step: layers x micro-batches without stages; a stage's L/2 layers over the
  // schedule's m + pp - 1 micro-batch times on the critical path, of which m are its own.
  EXPECT_DOUBLE_EQ(a->count, L * 2);
  EXPECT_DOUBLE_EQ(b->count, L / 2 * (2 + 1));
  EXPECT_DOUBLE_EQ(2 * (b->count / (2 + 1) * 2), a->count);  // both stages' own launches
}

// Pipelines over mixed layers: DeepSeek-V3's three leading dense layers sit on the first stage, so
// the critical stage holds expert layers only; GPT-OSS's alternating sliding-window and full-attention
// layers are on every stage in the model's proportion.
TEST(SynthMoE, PipelineStagesOverMixedLayers) {
  SynthOptions o = with_mode(Mode::train, 8, 1024);
  o.attention = AttentionImpl::flash;
  o.pp = 4;
  o.microbatches = 8;
  o.dp = 1;
  o.layers = 16;
  Footprint f;
  const auto ds = synthesize("deepseek-v3", o, &f);
  EXPECT_EQ(find(ds, "dense_layer.mlp.down_proj aten::mm"), nullptr);
  ASSERT_NE(find(ds, "layer.moe.gate aten::mm"), nullptr);
  // 16 layers over 4 stages: 4 expert layers on the critical stage, run m + pp - 1 times.
  EXPECT_DOUBLE_EQ(find(ds, "layer.moe.gate aten::mm")->count, 4 * (8 + 3));
  bool noted = false;
  for (const auto& n : f.notes) noted |= n.find("sit on the first stage; the critical stage holds expert layers only") != std::string::npos;
  EXPECT_TRUE(noted);
  // GPT-OSS-20B: 24 layers, half of them sliding-window (128 keys); 6 a stage, 3 of each kind.
  o.layers = 0;
  o.seq = 4096;
  const auto oss = synthesize("gpt-oss-20b", o);
  const Kernel* local = find(oss, "local_layer.attn.q_proj aten::addmm");
  const Kernel* full = find(oss, "layer.attn.q_proj aten::addmm");
  ASSERT_NE(local, nullptr);
  ASSERT_NE(full, nullptr);
  EXPECT_DOUBLE_EQ(local->count, 3 * (8 + 3));
  EXPECT_DOUBLE_EQ(full->count, 3 * (8 + 3));
}

TEST(SynthMoE, ExpertParallelErrorsNameTheOption) {
  SynthOptions o = with_mode(Mode::train, 8, 128);
  o.ep = 4;
  o.dp = 2;  // ep GPUs are drawn from the data-parallel replicas
  EXPECT_NE(input_error_of([&] { synthesize("mixtral-8x7b", o); }).find("'--ep': 4 expert-parallel GPUs divide neither"),
            std::string::npos);
  // Folding over the tensor-parallel ranks routes each GPU's sequence-parallel shard: it needs it.
  o.tp = 2;
  EXPECT_NE(input_error_of([&] { synthesize("mixtral-8x7b", o); }).find("give --sequence-parallel"),
            std::string::npos);
  o.dp = 4;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--ep': llama3-8b has no experts"),
            std::string::npos);
  SynthOptions r;  // a CNN takes --dp only
  r.batch = r.dp = r.ep = 2;
  EXPECT_NE(input_error_of([&] { synthesize("resnet50", r); }).find("--ep"), std::string::npos);
  o.ep = 3;
  o.dp = 3;
  o.batch = 9;
  EXPECT_NE(input_error_of([&] { synthesize("mixtral-8x7b", o); }).find("do not divide the 8 experts"),
            std::string::npos);
}

}  // namespace
}  // namespace kcast::synth

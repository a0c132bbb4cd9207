// Megatron's selective recomputation by module (`--recompute-modules`, recompute_modules.h): each
// module named frees exactly what it alone kept for the backward (closed forms from the shapes of a
// small DeepSeek-V3-style model) and its forward rows, only those, run again before the backward.
// Megatron-Core's experts apply the routing weights inside the gated activation, so a mixture layer
// keeps no expert outputs.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "predict/synth/recompute_modules.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"
#include "tests/input_error_of.h"
#include "tests/synth/activation_layers.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::recomputed_rows;

// 4 layers (the first dense), latent attention (4 heads, q.k 32 + 16 wide, v 32), 8 experts of 64,
// `k` per token, one shared expert of 64; hidden 256.
TransformerConfig tiny_deepseek(int k = 2) {
  return parse_hf_config(R"({"model_type": "deepseek_v3", "hidden_size": 256, "num_hidden_layers": 4,
      "num_attention_heads": 4, "num_key_value_heads": 4, "q_lora_rank": 64, "kv_lora_rank": 32,
      "qk_nope_head_dim": 32, "qk_rope_head_dim": 16, "v_head_dim": 32, "intermediate_size": 512,
      "moe_intermediate_size": 64, "n_routed_experts": 8, "num_experts_per_tok": )" + std::to_string(k) + R"(,
      "n_shared_experts": 1, "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1, "scoring_func": "sigmoid",
      "norm_topk_prob": true, "routed_scaling_factor": 1.0, "vocab_size": 100, "rms_norm_eps": 1e-6,
      "max_position_embeddings": 1024, "hidden_act": "silu"})",
                         "tiny_deepseek.json");
}

SynthOptions megatron(unsigned modules = 0) {
  SynthOptions o;
  o.mode = Mode::train;
  o.batch = 1;
  o.seq = 128;
  o.dtype = DType::bf16;
  o.framework = Framework::megatron;
  o.attention = AttentionImpl::flash;
  o.recompute_modules = modules;
  return o;
}

double activations(const TransformerConfig& c, const SynthOptions& o) {
  Footprint fp;
  synthesize_transformer(c, o, &fp);
  return fp.activation_bytes;
}

// T = 128 tokens, 2 bytes an element; 3 expert layers and 1 dense.
constexpr double T = 128, e = 2, expert_layers = 3;

TEST(RecomputeModules, EachModuleFreesWhatItAloneKept) {
  const TransformerConfig c = tiny_deepseek();
  const double plain = activations(c, megatron());
  // mla_up_proj: q, k (4 heads of 48) and v (4 of 32) on every layer.
  EXPECT_DOUBLE_EQ(plain - activations(c, megatron(kRecomputeMlaUpProj)), 4 * T * 4 * (48 + 48 + 32) * e);
  // moe_act: the activation's output, fc2's input (2 picks a token, 64 wide).
  EXPECT_DOUBLE_EQ(plain - activations(c, megatron(kRecomputeMoeAct)), expert_layers * 2 * T * 64 * e);
  // shared_experts: gate's and up's outputs and the product (64 wide), and the gate's fp32 weights slot.
  EXPECT_DOUBLE_EQ(plain - activations(c, megatron(kRecomputeSharedExperts)),
                   expert_layers * (T * 64 * 3 * e + 4 * T));
  // mlp: the dense layer's gated MLP (512 wide).
  EXPECT_DOUBLE_EQ(plain - activations(c, megatron(kRecomputeMlp)), T * 512 * 3 * e);
  // layernorm: the expert layers' pre-MLP norm output.
  EXPECT_DOUBLE_EQ(plain - activations(c, megatron(kRecomputeLayernorm)), expert_layers * T * 256 * e);
  // Modules add up.
  EXPECT_DOUBLE_EQ(plain - activations(c, megatron(kRecomputeMlaUpProj | kRecomputeMoeAct)),
                   4 * T * 4 * 128 * e + expert_layers * 2 * T * 64 * e);
}

// Each routed pick keeps its gathered input, the expert's two gated outputs, fc2's input and its
// routing weight (fp32): not the expert's output, which Megatron's unpermutation does not need.
TEST(RecomputeModules, MegatronKeepsNoExpertOutputs) {
  const double two = activations(tiny_deepseek(2), megatron()), four = activations(tiny_deepseek(4), megatron());
  EXPECT_DOUBLE_EQ(four - two, expert_layers * 2 * T * (256 * e + 64 * 3 * e + 4));
}

TEST(RecomputeModules, OnlyTheModulesRowsRunAgain) {
  const TransformerConfig c = tiny_deepseek();
  const auto plain = synthesize_transformer(c, megatron());
  auto fragments = [&](unsigned modules) {
    std::set<std::string> out;
    for (const std::string& n : recomputed_rows(plain, synthesize_transformer(c, megatron(modules))))
      out.insert(n.substr(n.find('.') + 1, n.find(' ') - n.find('.') - 1));  // "attn.q_b_proj", ...
    return out;
  };
  EXPECT_EQ(fragments(kRecomputeMlaUpProj),
            (std::set<std::string>{"attn.q_b_proj", "attn.kv_b_proj", "attn.rotary_q", "attn.rotary_k", "attn.cat"}));
  EXPECT_EQ(fragments(kRecomputeMoeAct), (std::set<std::string>{"moe.experts.act"}));
  EXPECT_EQ(fragments(kRecomputeLayernorm), (std::set<std::string>{"post_attention_norm"}));
  const std::set<std::string> shared = fragments(kRecomputeSharedExperts);
  EXPECT_TRUE(shared.count("moe.shared_experts.act") && shared.count("moe.shared_experts.down_proj")) << shared.size();
  for (const std::string& f : shared) EXPECT_EQ(f.rfind("moe.shared_experts.", 0), 0u) << f;
  EXPECT_TRUE(fragments(0).empty());
}

TEST(RecomputeModules, NamesParseAndBadOnesAreRefused) {
  EXPECT_EQ(parse_recompute_modules("recompute-modules", "mla_up_proj,moe_act"), kRecomputeMlaUpProj | kRecomputeMoeAct);
  EXPECT_EQ(parse_recompute_modules("recompute-modules", "core_attn layernorm"), kRecomputeCoreAttn | kRecomputeLayernorm);
  EXPECT_EQ(recompute_modules_string(kRecomputeMoeAct | kRecomputeMlaUpProj), "mla_up_proj,moe_act");
  for (const char* bad : {"mla_up_projj", "moe", ""}) {
    const std::string err = input_error_of([&] { parse_recompute_modules("recompute-modules", bad); });
    EXPECT_EQ(err.rfind("option '--recompute-modules': ", 0), 0u) << bad << ": " << err;
  }
  // A module the model lacks, or outside Megatron's training, is refused naming the option.
  const TransformerConfig qwen = parse_hf_config(R"({"model_type": "qwen3_moe", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 32,
      "intermediate_size": 96, "moe_intermediate_size": 32, "num_experts": 4, "num_experts_per_tok": 2,
      "vocab_size": 10, "rms_norm_eps": 1e-6, "hidden_act": "silu"})",
                                                 "qwen.json");
  for (unsigned m : {unsigned(kRecomputeMlaUpProj), unsigned(kRecomputeSharedExperts), unsigned(kRecomputeMlp)}) {
    const std::string err = input_error_of([&] { synthesize_transformer(qwen, megatron(m)); });
    EXPECT_NE(err.find("option '--recompute-modules'"), std::string::npos) << m << ": " << err;
  }
  SynthOptions eager = megatron(kRecomputeMoeAct);
  eager.framework = Framework::eager;
  EXPECT_NE(input_error_of([&] { synthesize_transformer(qwen, eager); }).find("--framework megatron"), std::string::npos);
  SynthOptions full = megatron(kRecomputeMoeAct);
  full.recompute = true;
  EXPECT_NE(input_error_of([&] { synthesize_transformer(qwen, full); }).find("option '--recompute-modules'"),
            std::string::npos);
}

// Megatron's block method (--recompute-layers N): the first N layers of each chunk keep their inputs and
// run again, the rest keep everything. Llama 3 8B cut to 4 layers: each recomputed layer frees what a
// layer keeps less its input (the same amount for 1, 2 and 3 of them), all 4 are full recomputation
// (which keeps one layer's whole activations besides, while it runs again), and the recomputed rows are
// that share of the forward's.
TEST(RecomputeLayers, TheBlockMethodRecomputesTheFirstLayersOfEachChunk) {
  SynthOptions o = megatron();
  o.layers = 4;
  o.seq = 256;
  auto act = [&](bool full, int64_t n) {
    SynthOptions x = o;
    x.recompute = full, x.recompute_layers = n;
    Footprint fp;
    synthesize("llama3-8b", x, &fp);
    return fp.activation_bytes;
  };
  const double none = act(false, 0), input = 256 * 4096 * e;  // a layer's input: T x d, 16 bits
  const double one = none - act(true, 1);
  EXPECT_GT(one, input);
  EXPECT_DOUBLE_EQ(none - act(true, 2), 2 * one);
  EXPECT_DOUBLE_EQ(none - act(true, 3), 3 * one);
  EXPECT_DOUBLE_EQ(none - act(true, 0), 3 * one - input);  // 4 (W - I) less one whole layer W = 3W - 4I
  EXPECT_DOUBLE_EQ(act(true, 4), act(true, 0));

  SynthOptions x = o;
  const auto plain = synthesize("llama3-8b", x);
  x.recompute = true, x.recompute_layers = 1;
  const auto block = synthesize("llama3-8b", x);
  size_t rows = 0;
  for (const Kernel& k : block) {
    const auto at = k.name.find(" (recompute)");
    if (at == std::string::npos) continue;
    ++rows;
    const Kernel* fwd = testing::find(plain, k.name.substr(0, at));
    ASSERT_NE(fwd, nullptr) << k.name;
    EXPECT_DOUBLE_EQ(k.count, fwd->count / 4) << k.name;
  }
  EXPECT_GT(rows, 5u);
  x.recompute = false;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", x); }).find("option '--recompute-layers'"), std::string::npos);
}

}  // namespace
}  // namespace kcast::synth

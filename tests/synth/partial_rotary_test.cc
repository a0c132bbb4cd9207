// Partial rotary positions (HF partial_rotary_factor, MiniMax's rotary_dim) and the two families that
// use them with their own routers and norms: GLM-4.5 (glm4_moe) and MiniMax-M2 (minimax_m2).
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
using testing::with_mode;

// A small llama-like config; `extra` adds keys (",\"partial_rotary_factor\": 0.5").
std::string llama_like(const std::string& extra, const std::string& type = "llama") {
  return R"({"model_type": ")" + type + R"(", "hidden_size": 256, "num_hidden_layers": 2,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 512,
      "vocab_size": 1000, "rms_norm_eps": 1e-6)" + extra + "}";
}

TEST(PartialRotary, RotatesItsShareOfEachHeadAndCatsThePassedRest) {
  const SynthOptions o = with_mode(Mode::train, 2, 32);
  const auto full = synthesize_transformer(parse_hf_config(llama_like(""), "f.json"), o);
  const auto half =
      synthesize_transformer(parse_hf_config(llama_like(R"(, "partial_rotary_factor": 0.5)"), "h.json"), o);
  const double T = 2 * 32, q = T * 4 * 64, k = T * 2 * 64;  // q and k elements
  for (const auto& [name, elems] : {std::pair{"layer.attn.rotary_q", q}, std::pair{"layer.attn.rotary_k", k}}) {
    // The rotation's own rows run on half the elements...
    const Kernel* f = find(full, std::string(name) + " aten::add");
    const Kernel* h = find(half, std::string(name) + " aten::add");
    ASSERT_NE(f, nullptr);
    ASSERT_NE(h, nullptr);
    EXPECT_DOUBLE_EQ(f->flops, elems);
    EXPECT_DOUBLE_EQ(h->flops, elems / 2);
    // ...and one cat joins the rotated half and the passed half back into the whole head.
    const Kernel* cat = find(half, std::string(name) + " aten::cat (rotated | passed)");
    ASSERT_NE(cat, nullptr);
    EXPECT_DOUBLE_EQ(cat->bytes, 2 * elems * 2);  // bf16: read and write every element
    EXPECT_EQ(find(full, std::string(name) + " aten::cat (rotated | passed)"), nullptr);
    // Its backward: each part's gradient scattered into q's size, then added.
    EXPECT_NE(find(half, std::string(name) + " aten::slice_backward (rotated | passed)"), nullptr);
  }
  // The cos / sin table covers the 32 rotated dimensions: inv_freq of 16 against the positions.
  const Kernel* table = find(half, "embed.rotary aten::bmm (inv_freq x positions)");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->m, 16);
  EXPECT_EQ(find(full, "embed.rotary aten::bmm (inv_freq x positions)")->m, 32);
}

TEST(PartialRotary, ReadsEitherKeyAndRejectsWhatNoHeadCanRotate) {
  EXPECT_DOUBLE_EQ(parse_hf_config(llama_like(R"(, "rotary_dim": 16)"), "r.json").rotary_dim_fraction, 0.25);
  const std::string nested = R"(, "rope_parameters": {"partial_rotary_factor": 0.75})";
  EXPECT_DOUBLE_EQ(parse_hf_config(llama_like(nested), "p.json").rotary_dim_fraction, 0.75);
  EXPECT_DOUBLE_EQ(parse_hf_config(llama_like(""), "n.json").rotary_dim_fraction, 1.0);
  // Phi-4-mini's 0.75 (was refused before partial rotary was synthesized).
  EXPECT_DOUBLE_EQ(parse_hf_config(llama_like(R"(, "partial_rotary_factor": 0.75)", "phi3"), "phi.json")
                       .rotary_dim_fraction,
                   0.75);
  struct Bad {
    std::string extra, key;
  };
  for (const Bad& b : std::vector<Bad>{{R"(, "partial_rotary_factor": 0)", "'partial_rotary_factor'"},
                                       {R"(, "partial_rotary_factor": 1.5)", "'partial_rotary_factor'"},
                                       {R"(, "partial_rotary_factor": 0.3)", "positive even number"},
                                       {R"(, "rotary_dim": 96)", "exceeds the head dimension 64"},
                                       {R"(, "rotary_dim": 7)", "'rotary_dim'"}}) {
    const std::string err = input_error_of([&] { parse_hf_config(llama_like(b.extra), "bad.json"); });
    EXPECT_NE(err.find("bad.json"), std::string::npos) << b.extra << ": " << err;
    EXPECT_NE(err.find(b.key), std::string::npos) << b.extra << ": " << err;
  }
}

constexpr const char* kGlmMoe = R"(, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1,
    "moe_intermediate_size": 128, "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1,
    "norm_topk_prob": true, "attention_bias": true, "use_qk_norm": true, "partial_rotary_factor": 0.5)";

TEST(Glm4Moe, DeepSeekRoutingOverBiasedGqaWithPerHeadNorms) {
  const TransformerConfig c = parse_hf_config(llama_like(kGlmMoe, "glm4_moe"), "glm.json");
  EXPECT_TRUE(c.notes.empty());  // a family synth knows, not a look-alike
  EXPECT_EQ(c.router, TransformerConfig::Router::sigmoid);
  EXPECT_TRUE(c.router_bias);
  EXPECT_TRUE(c.qkv_bias);
  EXPECT_FALSE(c.bias);  // o_proj carries none
  EXPECT_EQ(c.qk_norm, TransformerConfig::QkNorm::per_head);
  EXPECT_EQ(c.dense_layers, 1);
  // Closed form: q (256 x 256) and k, v (256 x 128 each) with biases, o (256 x 256) without; q / k
  // norms of a head's 64; two RMSNorms a layer. Layer 0 a dense SwiGLU of 512; layer 1 eight routed
  // experts of 128, one shared of 128, a router of 8 with its correction bias. Untied head, final norm.
  const double d = 256, attn = d * 256 + 256 + 2 * (d * 128 + 128) + 256 * d + 2 * 64 + 2 * d;
  const double dense = 3 * d * 512, moe = 8 * 3 * d * 128 + 3 * d * 128 + d * 8 + 8;
  EXPECT_DOUBLE_EQ(c.parameter_count(), 2 * attn + dense + moe + 2 * 1000 * d + d);
  const auto ks = synthesize_transformer(c, with_mode(Mode::infer, 1, 16));
  EXPECT_NE(find(ks, "layer.moe.router aten::add (correction bias)"), nullptr);
  EXPECT_NE(find(ks, "layer.attn.rotary_q aten::cat (rotated | passed)"), nullptr);
}

TEST(MiniMaxM2, SigmoidRouterAndWholeProjectionNorms) {
  const std::string extra = R"(, "num_local_experts": 8, "num_experts_per_tok": 2, "scoring_func": "sigmoid",
      "use_routing_bias": true, "use_qk_norm": true, "qk_norm_type": "per_layer", "rotary_dim": 32)";
  const TransformerConfig c = parse_hf_config(llama_like(extra, "minimax_m2"), "mm.json");
  EXPECT_TRUE(c.notes.empty());
  EXPECT_EQ(c.router, TransformerConfig::Router::sigmoid);
  EXPECT_TRUE(c.router_bias);
  EXPECT_TRUE(c.norm_topk);
  EXPECT_EQ(c.qk_norm, TransformerConfig::QkNorm::whole);
  EXPECT_DOUBLE_EQ(c.rotary_dim_fraction, 0.5);
  // Experts of intermediate_size (512) in every layer; q / k norms over the 256 and 128 wide projections.
  const double d = 256, attn = 2 * d * 256 + 2 * d * 128 + 256 + 128 + 2 * d;
  EXPECT_DOUBLE_EQ(c.parameter_count(), 2 * (attn + 8 * 3 * d * 512 + d * 8 + 8) + 2 * 1000 * d + d);
}

}  // namespace
}  // namespace kcast::synth

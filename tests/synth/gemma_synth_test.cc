// Gemma 2 / 3 and sliding-window attention in `kcast synth`: the published parameter counts, the
// ops Gemma adds to a llama-like layer, and the window's effect on attention work and the KV cache,
// each in closed form from the configs' dimensions.
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

TEST(SynthGemma, ParameterCountsAreThePublishedOnes) {
  const TransformerConfig g2 = test_config("gemma-2-2b");
  EXPECT_TRUE(g2.embed_scale);
  EXPECT_TRUE(g2.sandwich_norm);
  EXPECT_TRUE(g2.tied_embeddings);  // Gemma's default: the config has no tie_word_embeddings key
  EXPECT_EQ(g2.act, Activation::gelu_tanh);
  EXPECT_DOUBLE_EQ(g2.attn_softcap, 50.0);
  EXPECT_DOUBLE_EQ(g2.final_softcap, 30.0);
  EXPECT_EQ(g2.sliding_window, 4096);
  EXPECT_EQ(g2.local_layers, 13);  // the even layers of 26
  // Written out: q (8 x 256), k and v (4 x 256), o, the GeGLU MLP, four norms per layer; the tied
  // embedding and the final norm.
  const double d = 2304, q = 8 * 256, kv = 4 * 256, F = 9216;
  const double layer = 2 * d * q + 2 * d * kv + 3 * d * F + 4 * d;
  EXPECT_DOUBLE_EQ(g2.parameter_count(), 26 * layer + 256000 * d + d);
  EXPECT_DOUBLE_EQ(g2.parameter_count(), 2614341888.0);  // model card: 2.61B

  const TransformerConfig g3 = test_config("gemma-3-1b");
  EXPECT_EQ(g3.qk_norm, TransformerConfig::QkNorm::per_head);
  EXPECT_DOUBLE_EQ(g3.attn_softcap, 0);  // null in Gemma 3
  EXPECT_EQ(g3.local_layers, 22);        // all but layers 5, 11, 17, 23 (sliding_window_pattern 6)
  EXPECT_DOUBLE_EQ(g3.parameter_count(), 999885952.0);  // 1B as published
}

TEST(SynthGemma, LayersCarryGemmasOps) {
  const TransformerConfig c = test_config("gemma-2-2b");
  const double B = 2, S = 1024, T = B * S;  // shorter than the window: every layer is a full one
  const auto ks = synthesize_transformer(c, with_mode(Mode::train, 2, 1024));
  EXPECT_EQ(find(ks, "local_layer.attn.qk aten::bmm (QK^T)"), nullptr);
  const Kernel* cap = find(ks, "layer.attn.softcap aten::tanh");
  ASSERT_NE(cap, nullptr);
  EXPECT_DOUBLE_EQ(cap->flops, 6 * B * 8 * S * S);  // on every score of the 8 heads
  EXPECT_DOUBLE_EQ(cap->count, 26);
  EXPECT_NE(find(ks, "layer.attn.softcap aten::tanh_backward"), nullptr);
  const Kernel* logits = find(ks, "head.lm_head.softcap aten::tanh");
  ASSERT_NE(logits, nullptr);
  EXPECT_DOUBLE_EQ(logits->flops, 6 * T * 256000);
  for (const char* n : {"layer.attn.output_norm aten::mean", "layer.mlp.output_norm aten::mean",
                        "layer.input_norm aten::mean", "layer.post_attention_norm aten::mean"})
    EXPECT_NE(find(ks, n), nullptr) << n;
  EXPECT_NE(find(ks, "embed.embed_tokens aten::mul (normalizer)"), nullptr);
  EXPECT_NE(find(ks, "layer.mlp.act aten::gelu (tanh)"), nullptr);
  EXPECT_EQ(find(ks, "layer.mlp.act aten::silu"), nullptr);
  // A training step's GEMMs: 3 x 2 x tokens x (block weights + the tied head), attention's aside.
  double gemm = 0;
  for (const auto& k : ks)
    if (k.cls == KernelClass::gemm && k.name.find("attn.qk") == std::string::npos &&
        k.name.find("attn.pv") == std::string::npos && k.name.find("rotary") == std::string::npos)
      gemm += k.flops * k.count;
  const double d = 2304, blocks = 26 * (2 * d * 2048 + 2 * d * 1024 + 3 * d * 9216);
  EXPECT_NEAR(gemm / (6 * T * (blocks + 256000 * d)), 1.0, 1e-9);
}

// Gemma 2 at 8192 tokens: 13 layers see a 4096-key window. Query i attends to min(i + 1, 4096)
// keys, S w - w^2 / 2 pairs against S^2 / 2 for a full causal layer.
TEST(SynthGemma, FlashAttentionSkipsKeysOutsideTheWindow) {
  const TransformerConfig c = test_config("gemma-2-2b");
  SynthOptions o = with_mode(Mode::infer, 1, 8192);
  o.attention = AttentionImpl::flash;
  const auto ks = synthesize_transformer(c, o);
  const Kernel* full = find(ks, "layer.attn.flash aten::_scaled_dot_product_flash_attention");
  const Kernel* local = find(ks, "local_layer.attn.flash aten::_scaled_dot_product_flash_attention");
  ASSERT_NE(full, nullptr);
  ASSERT_NE(local, nullptr);
  EXPECT_DOUBLE_EQ(full->count, 13);
  EXPECT_DOUBLE_EQ(local->count, 13);
  const double S = 8192, w = 4096, hd = 256, H = 8;
  EXPECT_DOUBLE_EQ(full->flops, 4 * H * S * S / 2 * hd);
  EXPECT_DOUBLE_EQ(local->flops, 4 * H * (S * w - w * w / 2) * hd);
  // Eager attention (HF) computes every score and masks the window: both layer kinds alike.
  o.attention = AttentionImpl::eager;
  const auto eager = synthesize_transformer(c, o);
  ASSERT_NE(find(eager, "local_layer.attn.qk aten::bmm (QK^T)"), nullptr);
  EXPECT_EQ(find(eager, "local_layer.attn.qk aten::bmm (QK^T)")->n, 8192);
  // Pipeline stages hold the two kinds in the model's proportion: 13 of each over 2 stages, 6.5 each
  // on the critical stage, run m + pp - 1 times.
  o.pp = 2;
  const auto staged = synthesize_transformer(c, o);
  ASSERT_NE(find(staged, "local_layer.attn.qk aten::bmm (QK^T)"), nullptr);
  EXPECT_DOUBLE_EQ(find(staged, "local_layer.attn.qk aten::bmm (QK^T)")->count, 6.5 * (o.microbatches + 1));
  o.seq = 4096;  // no layer's window is shorter than the sequence: all layers alike
  EXPECT_EQ(find(synthesize_transformer(c, o), "local_layer.attn.qk aten::bmm (QK^T)"), nullptr);
}

// Decoding, a sliding-window layer keeps and reads only its window (HF's HybridCache; paged caches).
TEST(SynthGemma, DecodeCachesOnlyTheWindowOfLocalLayers) {
  const TransformerConfig c = test_config("gemma-3-1b");
  Footprint f;
  const auto ks = synthesize_transformer(c, with_mode(Mode::decode, 4, 32768), &f);
  const double kv = 1 * 256 * 2;  // one KV head: k and v of 256
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, 4 * (4 * 32768.0 + 22 * 512.0) * kv * 2);
  const Kernel* qk = find(ks, "local_layer.attn.qk aten::bmm (QK^T)");
  ASSERT_NE(qk, nullptr);
  EXPECT_EQ(qk->n, 512);
  EXPECT_DOUBLE_EQ(qk->count, 22);
  ASSERT_NE(find(ks, "layer.attn.qk aten::bmm (QK^T)"), nullptr);
  EXPECT_EQ(find(ks, "layer.attn.qk aten::bmm (QK^T)")->n, 32768);
}

// Multimodal configs (Gemma 3 4B and up, Llama 4, ...) nest the language model in text_config; the
// encoders are left out and named.
TEST(SynthGemma, MultimodalConfigsSynthesizeTheirTextModel) {
  const std::string text = R"({"model_type": "gemma3_text", "hidden_size": 2560, "num_hidden_layers": 34,
      "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 10240,
      "vocab_size": 262208, "rms_norm_eps": 1e-6, "sliding_window": 1024})";
  const TransformerConfig flat = parse_hf_config(text, "t.json");
  const TransformerConfig nested = parse_hf_config(
      R"({"model_type": "gemma3", "vision_config": {"hidden_size": 1152}, "text_config": )" + text + "}", "m.json");
  EXPECT_DOUBLE_EQ(nested.parameter_count(), flat.parameter_count());
  EXPECT_EQ(nested.local_layers, flat.local_layers);
  EXPECT_EQ(nested.notes, std::vector<std::string>{"the language model only; not synthesized: vision_config"});
  EXPECT_TRUE(flat.notes.empty());
  Footprint f;
  synthesize_transformer(nested, with_mode(Mode::infer, 1, 64), &f);
  EXPECT_EQ(f.notes, nested.notes);
  const std::string e = input_error_of([] { parse_hf_config(R"({"text_config": {"hidden_size": 64}})", "m.json"); });
  EXPECT_NE(e.find("m.json: text_config: missing key 'num_hidden_layers'"), std::string::npos) << e;
}

// An architecture synth does not know by name is built from the fields it reads, and says so;
// encoder-decoder models are refused rather than built as a decoder.
TEST(SynthGemma, UnknownTypesAreNotedAndEncoderDecodersRefused) {
  const TransformerConfig neox = parse_hf_config(R"({"model_type": "gpt_neox", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10})", "neox.json");
  ASSERT_EQ(neox.notes.size(), 1u);
  EXPECT_NE(neox.notes[0].find("model_type 'gpt_neox' is not one synth knows by name: built as a GPT-2-like model"),
            std::string::npos);
  const std::string e = input_error_of([] {
    parse_hf_config(R"({"model_type": "t5", "d_model": 64, "num_layers": 2, "num_heads": 2, "vocab_size": 10,
        "is_encoder_decoder": true})", "t5.json");
  });
  EXPECT_NE(e.find("t5.json: key 'is_encoder_decoder'"), std::string::npos) << e;
}

TEST(SynthGemma, WindowLayoutsFromConfigs) {
  auto parse = [](const std::string& extra) {
    return parse_hf_config(R"({"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 2,
        "intermediate_size": 256, "vocab_size": 10, "rms_norm_eps": 1e-6, )" + extra + "}", "w.json");
  };
  // Mistral / Phi-3: every layer; layer_types where listed; Qwen2's unused window is no window.
  EXPECT_EQ(parse(R"("sliding_window": 16)").local_layers, 4);
  EXPECT_EQ(parse(R"("sliding_window": null)").local_layers, 0);
  EXPECT_EQ(parse(R"("sliding_window": 16, "layer_types": ["sliding_attention", "full_attention",
      "sliding_attention", "sliding_attention"])").local_layers, 3);
  EXPECT_EQ(parse(R"("model_type": "qwen2", "use_sliding_window": false, "sliding_window": 16)").local_layers, 0);
  auto err = [&](const std::string& extra) { return input_error_of([&] { parse(extra); }); };
  EXPECT_NE(err(R"("sliding_window": 16, "layer_types": ["sliding_attention"])").find("key 'layer_types'"),
            std::string::npos);
  EXPECT_NE(err(R"("sliding_window": 16, "layer_types": ["a", "b", "c", "d"])").find("unsupported \"a\""),
            std::string::npos);
  // Without a window too: a linear-attention layer is not built as a full-attention one.
  EXPECT_NE(err(R"("layer_types": ["linear_attention", "linear_attention", "linear_attention", "full_attention"])")
                .find("unsupported \"linear_attention\""),
            std::string::npos);
  EXPECT_NE(err(R"("layer_types": ["sliding_attention", "full_attention", "full_attention", "full_attention"])")
                .find("without a sliding_window"),
            std::string::npos);
  EXPECT_NE(err(R"("model_type": "qwen2", "use_sliding_window": true, "sliding_window": 16)")
                .find("'use_sliding_window'"),
            std::string::npos);
  EXPECT_NE(err(R"("model_type": "gemma2", "attn_logit_softcapping": -1)").find("'attn_logit_softcapping'"),
            std::string::npos);
  EXPECT_NE(err(R"("model_type": "gemma", "hidden_activation": "swish")").find("'hidden_activation'"),
            std::string::npos);
  // A gated MLP takes the config's activation (it was always SiLU before).
  const auto relu = synthesize_transformer(parse(R"("hidden_act": "relu")"), with_mode(Mode::infer, 1, 8));
  EXPECT_NE(find(relu, "layer.mlp.act aten::relu"), nullptr);
  EXPECT_NE(err(R"("hidden_act": "gelu_new")").find("gelu_new"), std::string::npos);
}

}  // namespace
}  // namespace kcast::synth

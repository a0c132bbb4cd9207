// The synth model zoo (data/synth/): every model synthesizes by name, and its parameter count is
// the one its model card or technical report publishes (exact where the publisher gives the
// number, else to the digits given).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::with_mode;

struct Published {
  double params;
  double rel_tol;  // 0: exact
};

// Gemma 3 4B / 12B / 27B publish totals with their SigLIP vision tower (416,866,032 parameters, the
// same in all three) and its projection into the language model (a 1152 x hidden matrix and a norm),
// which synth leaves out: the language model is the total less those.
constexpr double kGemma3Vision = 416866032;
constexpr double gemma3_text(double total, double hidden) { return total - kGemma3Vision - (1152 * hidden + 1152); }

// From the Hub model cards and reports (data/synth/README.md). Llama 4 Scout's 109B includes its
// vision encoder, which synth leaves out.
const std::map<std::string, Published> kPublished = {
    {"deepseek-v3", {671026419200.0, 0}},    {"deepseek-r1", {671026419200.0, 0}},    {"gemma-2-2b", {2614341888.0, 0}},
    {"gemma-2-9b", {9241705984.0, 0}},       {"gemma-2-27b", {27227128320.0, 0}},
    {"gemma-3-1b", {999885952.0, 0}},        {"gpt-oss-20b", {20914757184.0, 0}},
    {"gemma-3-4b", {gemma3_text(4300079472.0, 2560), 0}},
    {"gemma-3-12b", {gemma3_text(12187325040.0, 3840), 0}},
    {"gemma-3-27b", {gemma3_text(27432406640.0, 5376), 0}},
    {"gpt-oss-120b", {116829156672.0, 0}},   {"llama3-70b", {70553706496.0, 0}},
    {"llama3.1-8b", {8030261248.0, 0}},     {"llama3.1-70b", {70553706496.0, 0}},
    {"llama3.3-70b", {70553706496.0, 0}},    {"llama3.1-405b", {405853388800.0, 0}},  {"llama4-scout", {109e9, 0.015}},
    {"llama4-maverick", {400e9, 0.005}},     {"mistral-7b", {7241732096.0, 0}},
    {"qwen2.5-7b", {7.61e9, 0.001}},         {"qwen2.5-72b", {72706203648.0, 0}},
    {"qwen3-30b-a3b", {30.5e9, 0.005}},      {"qwen3-235b-a22b", {235093634560.0, 0}},
    {"llama3.2-1b", {1235814400.0, 0}},      {"llama3.2-3b", {3212749824.0, 0}},
    {"mixtral-8x22b", {141e9, 0.003}},       {"qwen3-8b", {8190735360.0, 0}},
    {"qwen3-32b", {32762123264.0, 0}},       {"phi-3-mini-4k", {3821079552.0, 0}},
    {"phi-4", {14.7e9, 0.005}},
    // Published to three digits ("106B", "355B", "230B" total); the checkpoints' multi-token-prediction
    // layers are not part of the HF model synth follows. Their "12B", "32B", "10B" active leave out
    // the embedding and LM-head matrices (tested below).
    {"glm-4.5-air", {106e9, 0.01}},          {"glm-4.5", {355e9, 0.01}},
    {"minimax-m2", {230e9, 0.01}},
    {"qwen3-next-80b-a3b", {80e9, 0.005}},  // "80B", 79.67B
    {"kimi-k2", {1e12, 0.03}},              // "1T" total (1,026.4B here), "32B" activated
};

TEST(SynthZoo, EveryModelHasItsPublishedParameterCount) {
  const std::vector<std::string> names = zoo_models();
  ASSERT_EQ(names.size(), kPublished.size());  // a new zoo model needs its published count here
  for (const std::string& name : names) {
    const auto it = kPublished.find(name);
    ASSERT_NE(it, kPublished.end()) << name;
    const double p = zoo_config(name).value().parameter_count();
    if (it->second.rel_tol == 0) EXPECT_DOUBLE_EQ(p, it->second.params) << name;
    else EXPECT_NEAR(p / it->second.params, 1.0, it->second.rel_tol) << name;
  }
}

TEST(SynthZoo, ModelsSynthesizeByNameAsTheirConfigReads) {
  // A decode step of each, by name (case-insensitive), with its memory line's parameter count.
  for (const std::string& name : zoo_models()) {
    Footprint f;
    const auto ks = synthesize(name == "llama3-70b" ? "LLaMA3-70B" : name, with_mode(Mode::decode, 2, 512), &f);
    EXPECT_FALSE(ks.empty()) << name;
    // (DeepSeek's router correction bias is a buffer, counted in the model's size but not a trained
    // parameter of the step: 14,848 of 671 billion.)
    EXPECT_NEAR(f.params / zoo_config(name)->parameter_count(), 1.0, 1e-7) << name;
  }
  EXPECT_FALSE(zoo_config("no-such-model").has_value());
  EXPECT_FALSE(zoo_config("../gpus").has_value());  // names never leave data/synth/
  EXPECT_NE(input_error_of([] { synthesize("no-such-model", with_mode(Mode::infer, 1, 8)); }).find("llama3-70b"),
            std::string::npos);  // the unknown-model error lists the zoo too
  // Llama 4's default sequence is one chunk of its chunked attention, not its 10M context.
  const auto scout = synthesize("llama4-scout", with_mode(Mode::infer, 1, 0));
  EXPECT_FALSE(scout.empty());
}

TEST(SynthZoo, RecentMixturesOfExpertsHaveTheirPublishedActiveCounts) {
  // Active, as their model cards count it: without the token embedding and the untied LM head.
  for (const auto& [name, active] : {std::pair{"glm-4.5-air", 12e9}, std::pair{"glm-4.5", 32e9},
                                     std::pair{"minimax-m2", 10e9}, std::pair{"qwen3-next-80b-a3b", 3e9}}) {
    const TransformerConfig c = zoo_config(name).value();
    const double embeddings = 2 * double(c.vocab) * double(c.hidden);
    // (Qwen3-Next's "3B" is one digit: 3.25B.)
    EXPECT_NEAR((c.active_parameter_count() - embeddings) / active, 1.0, active < 5e9 ? 0.1 : 0.03) << name;
  }
}

// A user's own config in $KCAST_DATA_DIR/synth/ is synthesized by its name like a zoo model.
TEST(SynthZoo, DataDirAddsModels) {
  const auto dir = std::filesystem::temp_directory_path() / ("kcast_zoo_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "synth");
  std::ofstream(dir / "synth" / "tiny.json") << R"({"_name_or_path": "me/tiny", "hidden_size": 64,
      "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 256, "vocab_size": 10,
      "rms_norm_eps": 1e-6})";
  ::setenv("KCAST_DATA_DIR", dir.c_str(), 1);
  const std::optional<TransformerConfig> c = zoo_config("tiny");
  const bool synthesized = !synthesize("tiny", with_mode(Mode::infer, 1, 8)).empty();
  ::unsetenv("KCAST_DATA_DIR");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->name, "tiny");
  EXPECT_EQ(c->source, "me/tiny");
  EXPECT_TRUE(synthesized);
}

// Phi-3 / Phi-4 project q, k, v in one GEMM and gate, up in one: the same FLOPs as the separate
// projections of the same model, fewer GEMMs, and no gradient accumulation of the shared input.
TEST(SynthZoo, PhiFusesItsProjections) {
  const TransformerConfig phi = zoo_config("phi-4").value();
  TransformerConfig split = phi;
  split.fused_qkv = split.fused_gate_up = false;
  auto gemms = [](const std::vector<Kernel>& ks, double* flops) {
    double n = 0;
    for (const auto& k : ks)
      if (k.cls == KernelClass::gemm) n += k.count, *flops += k.flops * k.count;
    return n;
  };
  const auto fused = synthesize_transformer(phi, with_mode(Mode::train, 1, 256));
  const auto separate = synthesize_transformer(split, with_mode(Mode::train, 1, 256));
  double f_fused = 0, f_separate = 0;
  const double n_fused = gemms(fused, &f_fused), n_separate = gemms(separate, &f_separate);
  EXPECT_DOUBLE_EQ(f_fused, f_separate);
  EXPECT_DOUBLE_EQ(n_separate - n_fused, 40 * 3 * (2 + 1));  // per layer 2 of q/k/v and 1 of gate/up, x3 with backward
  auto accumulates = [](const std::vector<Kernel>& ks, const std::string& what) {
    for (const auto& k : ks)
      if (k.name.find(what + " aten::add (grad accumulate)") != std::string::npos) return true;
    return false;
  };
  for (const char* input : {"attn.input", "mlp.input"}) {
    EXPECT_FALSE(accumulates(fused, input)) << input;
    EXPECT_TRUE(accumulates(separate, input)) << input;
  }
}

}  // namespace
}  // namespace kcast::synth

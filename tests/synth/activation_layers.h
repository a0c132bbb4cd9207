// Helpers of the activation-memory tests: the GPT layer Korthikanti et al. 2022 count (PyTorch's fused
// GELU), and one layer's activations as a two-layer step's less a one-layer step's, so the
// embeddings, head and loss drop out.
#pragma once
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth::testing {

inline TransformerConfig gpt_with_fused_gelu() {
  const std::string p = write_temp("gpt_fused_gelu.json", R"({"model_type": "gpt2", "n_embd": 2048, "n_layer": 24,
      "n_head": 16, "n_positions": 2048, "vocab_size": 50257, "activation_function": "gelu"})");
  TransformerConfig c = read_hf_config(p);
  std::remove(p.c_str());
  return c;
}

// The paper's setting: 16-bit training, 4 sequences of 2048 tokens.
inline SynthOptions gpt_training() {
  SynthOptions o;
  o.mode = Mode::train;
  o.batch = 4;
  o.seq = 2048;
  o.dtype = DType::fp16;
  return o;
}

inline double one_layer(const TransformerConfig& cfg, SynthOptions o) {
  Footprint two, one;
  o.layers = 2;
  synthesize_transformer(with_overrides(cfg, o), o, &two);
  o.layers = 1;
  synthesize_transformer(with_overrides(cfg, o), o, &one);
  return two.activation_bytes - one.activation_bytes;
}

// The rows of `re` named "(recompute)", by the forward row's name each repeats; each must carry that
// row's work and count in `plain` (the same step without recomputation).
inline std::vector<std::string> recomputed_rows(const std::vector<Kernel>& plain, const std::vector<Kernel>& re) {
  std::vector<std::string> names;
  for (const Kernel& k : re) {
    const auto at = k.name.find(" (recompute)");
    if (at == std::string::npos) continue;
    names.push_back(k.name.substr(0, at));
    const Kernel* fwd = find(plain, names.back());
    EXPECT_NE(fwd, nullptr) << k.name;
    if (!fwd) continue;
    EXPECT_EQ(fwd->flops, k.flops) << k.name;
    EXPECT_EQ(fwd->bytes, k.bytes) << k.name;
    EXPECT_EQ(fwd->count, k.count) << k.name;
  }
  return names;
}

}  // namespace kcast::synth::testing

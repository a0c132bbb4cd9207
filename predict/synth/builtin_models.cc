// The built-in models of `kcast synth` (published configurations: the tables below, and the config
// zoo of data/synth/) and the synthesis entry points.
#include <algorithm>
#include <cstdio>
#include <string_view>

#include "io/embedded_data.h"
#include "model/ascii_lower.h"
#include "model/error.h"
#include "predict/synth/generation.h"
#include "predict/synth/resnet_synth.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth {

namespace {

// What every family sets: the size of the model and its context.
TransformerConfig sized(std::string name, Family family, int64_t d, int64_t layers, int64_t heads, int64_t ffn,
                        int64_t vocab, int64_t ctx, Activation act) {
  TransformerConfig c;
  c.name = std::move(name);
  c.family = family;
  c.hidden = d;
  c.layers = layers;
  c.heads = c.kv_heads = heads;
  c.ffn = ffn;
  c.vocab = vocab;
  c.max_positions = ctx;
  c.act = act;
  return c;
}

TransformerConfig bert_like(std::string name, int64_t d, int64_t layers, int64_t heads, int64_t ffn, int64_t vocab) {
  TransformerConfig c = sized(std::move(name), Family::bert, d, layers, heads, ffn, vocab, 512, Activation::gelu);
  c.type_vocab = 2;
  c.causal = false;
  return c;
}

// HF GPT2LMHeadModel: learned positions, LayerNorm, gelu_new, biases, tied head. The GPT-3 models
// are this architecture at the GPT-3 paper's sizes with a 2048 context.
TransformerConfig gpt2_like(std::string name, int64_t d, int64_t layers, int64_t heads, int64_t ctx) {
  return sized(std::move(name), Family::gpt2, d, layers, heads, 4 * d, 50257, ctx, Activation::gelu_new);
}

TransformerConfig opt_like(std::string name, int64_t d, int64_t layers, int64_t heads, int64_t ffn) {
  TransformerConfig c = sized(std::move(name), Family::opt, d, layers, heads, ffn, 50272, 2048, Activation::relu);
  c.position_offset = 2;
  c.hidden_dropout = 0.1;
  c.attention_dropout = 0.0;
  return c;
}

TransformerConfig llama_like(std::string name, int64_t layers, int64_t heads, int64_t kv_heads, int64_t ffn,
                             int64_t vocab, int64_t ctx) {
  TransformerConfig c = sized(std::move(name), Family::llama, 4096, layers, heads, ffn, vocab, ctx, Activation::silu);
  c.kv_heads = kv_heads;
  c.gated_mlp = true;
  c.norm = NormKind::rms;
  c.positions = PositionKind::rotary;
  c.bias = false;
  c.tied_embeddings = false;
  c.hidden_dropout = c.attention_dropout = 0.0;
  c.default_dtype = DType::bf16;
  return c;
}

// Mixtral 8x7B (mistralai/Mixtral-8x7B-v0.1 config.json): Mistral-7B's attention, every MLP eight
// SwiGLU experts of 14336, two per token.
TransformerConfig mixtral_8x7b() {
  TransformerConfig c = llama_like("mixtral-8x7b", 32, 32, 8, 14336, 32000, 32768);
  c.experts = 8;
  c.experts_per_token = 2;
  c.expert_ffn = 14336;
  return c;
}

// A zoo model's line in `kcast synth --list`, from its parsed config.
std::string describe(const TransformerConfig& c) {
  auto billions = [](double n) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1fB", n / 1e9);
    return std::string(b);
  };
  std::string s = (c.source.empty() ? std::string("config") : c.source) + ": " + std::to_string(c.layers) +
                  " layers, d=" + std::to_string(c.hidden) + ", " + std::to_string(c.heads) + " heads";
  if (c.kv_heads != c.heads) s += " / " + std::to_string(c.kv_heads) + " KV";
  if (c.linear_layers > 0) s += " (" + std::to_string(c.linear_layers) + " layers linear attention)";
  if (c.experts > 0)
    s += ", " + std::to_string(c.experts) + " experts (" + std::to_string(c.experts_per_token) + " per token)";
  s += ", " + billions(c.parameter_count()) + " params";
  if (c.experts > 0) s += " (" + billions(c.active_parameter_count()) + " active)";
  return s + "; seq " + std::to_string(c.max_positions) + "; " + std::string(to_string(c.default_dtype));
}

}  // namespace

const std::vector<std::pair<TransformerConfig, std::string>>& builtin_transformers() {
  static const std::vector<std::pair<TransformerConfig, std::string>> kModels = {
      {bert_like("bert-large", 1024, 24, 16, 4096, 30522),
       "BERT-Large encoder, 24 layers, d=1024, 16 heads, 335M params; seq 512; fp32"},
      {gpt2_like("gpt2-large", 1280, 36, 20, 1024), "GPT-2 Large decoder, 36 layers, d=1280, 20 heads, 774M; seq 1024; fp32"},
      {gpt2_like("gpt3-xl", 2048, 24, 16, 2048), "GPT-3 XL (1.3B), 24 layers, d=2048, 16 heads; seq 2048; fp32"},
      {gpt2_like("gpt3-2.7b", 2560, 32, 32, 2048), "GPT-3 2.7B, 32 layers, d=2560, 32 heads; seq 2048; fp32"},
      {opt_like("opt-1.3b", 2048, 24, 32, 8192), "OPT-1.3B decoder, 24 layers, d=2048, 32 heads, ReLU; seq 2048; fp32"},
      {llama_like("llama2-7b", 32, 32, 32, 11008, 32000, 4096),
       "Llama 2 7B, 32 layers, d=4096, 32 heads, RMSNorm, SwiGLU, rotary; seq 4096; bf16"},
      {llama_like("llama3-8b", 32, 32, 8, 14336, 128256, 8192),
       "Llama 3 8B, 32 layers, d=4096, 32 heads / 8 KV heads (GQA); seq 8192; bf16"},
      {mixtral_8x7b(), "Mixtral 8x7B mixture of experts, 32 layers, 8 experts (2 per token), 46.7B params "
                       "(12.9B active); seq 32768; bf16"},
  };
  return kModels;
}

const TransformerConfig* find_builtin_transformer(const std::string& name) {
  const std::string n = ascii_lower(name);
  for (const auto& [cfg, desc] : builtin_transformers())
    if (cfg.name == n) return &cfg;
  return nullptr;
}

std::vector<BuiltinModel> builtin_models() {
  std::vector<BuiltinModel> out;
  for (const auto& [cfg, desc] : builtin_transformers()) out.push_back({cfg.name, desc, true});
  for (const auto& r : builtin_resnets()) out.push_back({r.name, r.description, false});
  for (const std::string& name : zoo_models()) out.push_back({name, describe(*zoo_config(name)), true});
  return out;
}

std::vector<Kernel> synthesize(const std::string& model, const SynthOptions& opt, Footprint* fp) {
  if (opt.mode == Mode::generate) {
    if (find_builtin_resnet(ascii_lower(model)))
      throw InputError("option '--mode': generate produces tokens with a decoder; " + model +
                       " is a CNN (infer or train)");
    return synthesize_generation([&](const SynthOptions& o, Footprint* f) { return synthesize(model, o, f); }, opt, fp);
  }
  if (const ResNetConfig* r = find_builtin_resnet(ascii_lower(model))) return synthesize_resnet(*r, opt, fp);
  const TransformerConfig* cfg = find_builtin_transformer(model);
  if (!cfg) {
    if (std::optional<TransformerConfig> zoo = zoo_config(ascii_lower(model)))
      return synthesize_transformer(with_overrides(*zoo, opt), opt, fp);
    std::string names;
    for (const auto& m : builtin_models()) names += (names.empty() ? "" : ", ") + m.name;
    throw InputError("unknown model '" + model + "' (built-in: " + names + "; or --config FILE.json)");
  }
  return synthesize_transformer(with_overrides(*cfg, opt), opt, fp);
}

std::vector<Kernel> synthesize_config_file(const std::string& path, const SynthOptions& opt, Footprint* fp) {
  if (opt.mode == Mode::generate)
    return synthesize_generation(
        [&](const SynthOptions& o, Footprint* f) { return synthesize_config_file(path, o, f); }, opt, fp);
  return synthesize_transformer(with_overrides(read_hf_config(path), opt), opt, fp);
}

// The zoo: published configs embedded from data/synth/, by file stem.
std::optional<TransformerConfig> zoo_config(const std::string& name) {
  // Names are file stems: nothing that could leave data/synth/.
  if (name.empty() || name.find_first_of("/\\") != std::string::npos || name[0] == '.') return std::nullopt;
  std::string text;
  try {
    text = data_file("synth/" + name + ".json");
  } catch (const InputError&) {
    return std::nullopt;
  }
  TransformerConfig c = parse_hf_config(text, "data/synth/" + name + ".json");
  c.name = name;
  return c;
}

std::vector<std::string> zoo_models() {
  std::vector<std::string> names;
  const std::string prefix = "synth/", suffix = ".json";
  for (std::string_view p : embedded_paths())
    if (p.size() > prefix.size() + suffix.size() && p.substr(0, prefix.size()) == prefix &&
        p.substr(p.size() - suffix.size()) == suffix)
      names.emplace_back(p.substr(prefix.size(), p.size() - prefix.size() - suffix.size()));
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace kcast::synth

// Reading a Hugging Face config.json into a TransformerConfig: the fields every model has (sizes,
// family, activation, head size, dropout), a multimodal config's language model, and the
// family- and feature-specific fields through hf_config_families.cc. Errors name the file and key.
#include <set>
#include <string>
#include <utility>

#include "io/atomic_file.h"
#include "model/error.h"
#include "predict/synth/hf_config_families.h"
#include "predict/synth/hf_config_reader.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth {

namespace {

using hf::json;
using hf::Reader;

// Family: from model_type; unknown types fall back on the features the config shows, and say so.
Family family_of(const Reader& r, const std::string& type, bool has_rms) {
  if (type == "bert" || type == "roberta" || type == "deberta" || type == "electra" || type == "albert")
    return Family::bert;
  if (type == "opt") return Family::opt;
  if (type == "gpt2" || type == "gpt_neo" || type == "gptj" || type == "gpt_bigcode") return Family::gpt2;
  if (has_rms) return Family::llama;  // llama, mistral, qwen2, ... (RMSNorm, rotary, SwiGLU)
  if (r.boolean("is_decoder", true) == false || r.j.contains("type_vocab_size")) return Family::bert;
  return Family::gpt2;
}

Activation activation_of(const Reader& r, Family family) {
  const bool llama = family == Family::llama;
  std::string act_key;
  std::string act = r.string({"hidden_act", "activation_function"}, &act_key);
  if (act.empty()) act = llama ? "silu" : family == Family::opt ? "relu" : family == Family::gpt2 ? "gelu_new" : "gelu";
  if (act == "gelu") return Activation::gelu;
  if (act == "gelu_new" || act == "gelu_fast" || act == "gelu_python") return Activation::gelu_new;
  if (act == "gelu_pytorch_tanh" || act == "gelu_tanh") return Activation::gelu_tanh;
  if (act == "relu") return Activation::relu;
  if (act == "silu" || act == "swish") return Activation::silu;
  throw InputError(r.file + ": key '" + act_key + "': unsupported activation '" + act +
                   "' (expected gelu, gelu_new, gelu_pytorch_tanh, relu or silu)");
}

// The sizes and the family's defaults every config has.
void sizes_from_hf(const Reader& r, bool has_rms, TransformerConfig& c) {
  c.hidden = r.integer({"hidden_size", "n_embd", "d_model"}, 0, true);
  c.layers = r.integer({"num_hidden_layers", "n_layer", "num_layers"}, 0, true);
  // Checked here, not only in validate(): the layer layouts below walk the layers.
  if (c.layers > kMaxDimension)
    throw InputError(r.file + ": number of layers " + std::to_string(c.layers) + " is implausibly large");
  c.heads = r.integer({"num_attention_heads", "n_head", "num_heads"}, 0, true);
  c.kv_heads = r.integer({"num_key_value_heads"}, c.heads, false);
  c.vocab = r.integer({"vocab_size"}, 0, true);
  c.max_positions = r.integer({"max_position_embeddings", "n_positions", "n_ctx"}, 2048, false);

  const bool llama = c.family == Family::llama;
  c.causal = c.family != Family::bert;
  c.norm = llama || has_rms ? NormKind::rms : NormKind::layer;
  c.positions = llama ? PositionKind::rotary : PositionKind::learned;
  c.position_offset = c.family == Family::opt ? 2 : 0;
  c.type_vocab = c.family == Family::bert ? r.integer({"type_vocab_size"}, 2, false) : 0;
  c.gated_mlp = llama;
  c.bias = llama ? r.boolean("attention_bias", false) : true;
  c.tied_embeddings = r.boolean("tie_word_embeddings", !llama);
  c.default_dtype = llama ? DType::bf16 : DType::fp32;
  c.act = activation_of(r, c.family);
}

// head_dim, where it is given (latent attention has its own head sizes).
void head_size_from_hf(const Reader& r, TransformerConfig& c) {
  const json* v = r.find({"head_dim"});
  if (!v || c.mla()) return;
  // Llama-like attention takes any head size (q/k/v project to heads x head_dim, o back to the
  // hidden size); the other families' HF code splits the hidden size itself.
  if (!v->is_number_integer() || v->get<int64_t>() <= 0)
    throw InputError(r.file + ": key 'head_dim': expected a positive integer, got " + v->dump());
  if (v->get<int64_t>() * c.heads != c.hidden) {
    if (c.family != Family::llama)
      throw InputError(r.file + ": key 'head_dim': " + v->dump() + " x " + std::to_string(c.heads) +
                       " heads differs from the hidden size " + std::to_string(c.hidden) +
                       " (supported for llama-like models only)");
    c.head_size = v->get<int64_t>();
  }
}

// The MLP size. A config without it is an error naming the key, except where Transformers' own config
// class for the model_type has a default (then that, said in a note), and for GPT-2's family, whose
// modeling code reads a null n_inner as 4 x n_embd. (Guessing 4 x hidden turned a Llama 3 70B config
// without intermediate_size into 78.6B parameters.)
int64_t mlp_size_from_hf(const Reader& r, const std::string& type, TransformerConfig& c) {
  if (r.find({"intermediate_size", "n_inner", "ffn_dim"})) return r.integer({"intermediate_size", "n_inner", "ffn_dim"}, 0, true);
  if (c.family == Family::gpt2) return 4 * c.hidden;
  // transformers' configuration_<type>.py defaults.
  static const std::pair<const char*, std::pair<const char*, int64_t>> kDefaults[] = {
      {"llama", {"LlamaConfig", 11008}}, {"mistral", {"MistralConfig", 14336}}, {"mixtral", {"MixtralConfig", 14336}},
      {"qwen2", {"Qwen2Config", 22016}},  {"bert", {"BertConfig", 3072}},       {"opt", {"OPTConfig", 3072}}};
  for (const auto& [t, d] : kDefaults)
    if (type == t) {
      c.notes.push_back("key 'intermediate_size' missing: " + std::string(d.first) + "'s default " +
                        std::to_string(d.second) + " used");
      return d.second;
    }
  throw InputError(r.file + ": missing key 'intermediate_size' (the MLP size" +
                   (type.empty() ? std::string("") : "; Transformers has no default for model_type '" + type + "'") + ")");
}

// The attention, MLP and family-specific fields, after the sizes.
void architecture_from_hf(const Reader& r, const std::string& type, TransformerConfig& c) {
  const bool llama = c.family == Family::llama;
  hf::mla_from_hf(r, c);
  head_size_from_hf(r, c);
  // Qwen2's q/k/v carry biases (its o_proj and MLP do not); Qwen3 and OLMoE normalize q and k.
  if (type == "qwen2" || type == "qwen2_moe") c.qkv_bias = true;
  if (type == "qwen3" || type == "qwen3_moe") c.qk_norm = TransformerConfig::QkNorm::per_head;
  if (type == "olmoe" || type == "olmo2") c.qk_norm = TransformerConfig::QkNorm::whole;

  c.ffn = mlp_size_from_hf(r, type, c);
  hf::moe_from_hf(r, type, c);
  if (llama && hf::is_gemma(type)) hf::gemma_from_hf(r, type, c);
  if (llama && hf::is_llama4(type)) hf::llama4_attention_from_hf(r, c);
  if (llama && type == "phi3") c.fused_qkv = c.fused_gate_up = true;
  if (llama && !c.mla()) hf::partial_rotary_from_hf(r, c);
  if (type == "glm4_moe") hf::glm4_moe_from_hf(r, c);
  if (type == "minimax_m2") hf::minimax_m2_from_hf(r, c);
  if (llama) hf::linear_attention_from_hf(r, type, c);
  if (c.family != Family::bert) hf::sliding_window_from_hf(r, type, c);
}

void dropout_from_hf(const Reader& r, TransformerConfig& c) {
  if (c.family == Family::bert) {
    c.hidden_dropout = r.number({"hidden_dropout_prob"}, 0.1);
    c.attention_dropout = r.number({"attention_probs_dropout_prob"}, 0.1);
  } else if (c.family == Family::gpt2) {
    c.hidden_dropout = r.number({"resid_pdrop"}, 0.1);
    c.attention_dropout = r.number({"attn_pdrop"}, 0.1);
  } else if (c.family == Family::opt) {
    c.hidden_dropout = r.number({"dropout"}, 0.1);
    c.attention_dropout = r.number({"attention_dropout"}, 0.0);
  } else {
    c.hidden_dropout = 0.0;
    c.attention_dropout = r.number({"attention_dropout"}, 0.0);
  }
}

// Types whose HF implementation is the family's own op pattern (or an exact relative of it); any
// other is built from the fields synth reads, and the note says which pattern stands in for it.
void note_unknown_type(const std::string& type, TransformerConfig& c) {
  static const std::set<std::string> as_implemented = {
      "", "bert", "roberta", "gpt2", "opt", "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
      "qwen3_moe", "olmoe", "olmo2", "deepseek_v2", "deepseek_v3", "kimi_k2", "gemma", "gemma2", "gemma3", "gemma3_text",
      "llama4", "llama4_text", "gpt_oss", "phi3", "glm4_moe", "minimax_m2", "qwen3_next", "qwen3_5",
      "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"};
  if (as_implemented.count(type)) return;
  const char* family = c.family == Family::bert ? "BERT" : c.family == Family::opt ? "OPT"
                       : c.family == Family::gpt2 ? "GPT-2" : "LLaMA";
  c.notes.push_back("model_type '" + type + "' is not one synth knows by name: built as a " + family +
                    "-like model from the fields synth reads (what else its architecture does is not modelled)");
}

}  // namespace

TransformerConfig parse_hf_config(const std::string& text, const std::string& file) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // syntax errors and number overflows alike
    throw InputError(file + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(file + ": expected a JSON object (a Hugging Face config.json)");
  // A multimodal model (Gemma 3, Llama 4, Mistral 3, ...) nests its language model's config in
  // text_config; its encoders (vision_config, audio_config) are not synthesized, and are named so.
  std::string left_out;
  for (const char* enc : {"vision_config", "audio_config"})
    if (j.contains(enc) && !j[enc].is_null()) left_out += std::string(left_out.empty() ? "" : ", ") + enc;
  std::string where = file;
  const json j0_name = j.contains("_name_or_path") ? j["_name_or_path"] : json();
  if (!j.contains("hidden_size") && !j.contains("n_embd") && !j.contains("d_model") && j.contains("text_config")) {
    if (!j["text_config"].is_object())
      throw InputError(file + ": key 'text_config': expected an object, got " + j["text_config"].dump());
    json text_config = j["text_config"];
    j = std::move(text_config);
    where = file + ": text_config";
  }
  Reader r{j, where};
  TransformerConfig c;
  c.name = file;
  if (!left_out.empty()) c.notes.push_back("the language model only; not synthesized: " + left_out);
  if (j0_name.is_string()) c.source = j0_name.get<std::string>();

  const std::string type = r.string({"model_type"});
  if (r.boolean("is_encoder_decoder", false))
    throw InputError(where + ": key 'is_encoder_decoder': encoder-decoder models (" +
                     (type.empty() ? std::string("T5, BART, Whisper, ...") : "'" + type + "'") +
                     ") are not synthesized; synth builds encoders (BERT-like) and decoders");
  const bool has_rms = j.contains("rms_norm_eps");
  c.family = family_of(r, type, has_rms);
  sizes_from_hf(r, has_rms, c);
  architecture_from_hf(r, type, c);
  dropout_from_hf(r, c);
  note_unknown_type(type, c);
  c.validate(where);
  return c;
}

TransformerConfig read_hf_config(const std::string& path) {
  return parse_hf_config(read_file(path, kMaxDocumentBytes), path);
}

}  // namespace kcast::synth

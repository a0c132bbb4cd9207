// Transformer configs: parameter counts, Hugging Face config.json reading, option overrides.
// The built-in table lives in builtin_models.cc.
#include "predict/synth/transformer_config.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibrate/atomic_file.h"
#include "calibrate/embedded_data.h"
#include "model/error.h"

namespace kcast::synth {

namespace {
constexpr int64_t kMaxDimension = int64_t(1) << 24;  // far above any real model's sizes
}  // namespace

double TransformerConfig::parameter_count() const {
  const double d = double(hidden), kvd = double(kv_heads) * double(head_dim()), F = double(ffn), qd = double(q_width());
  const double b = bias ? 1.0 : 0.0;
  double emb = double(vocab) * d;
  if (positions == PositionKind::learned) emb += double(max_positions + position_offset) * d;
  emb += double(type_vocab) * d;
  const double nrm = norm == NormKind::layer ? 2 * d : d;  // weight (+ bias for LayerNorm)
  if (family == Family::bert) emb += nrm;                   // embedding LayerNorm
  const double qkv_b = bias || qkv_bias ? 1.0 : 0.0;
  const double qk_norm_w = qk_norm == QkNorm::per_head ? 2.0 * double(head_dim()) : qk_norm == QkNorm::whole ? qd + kvd : 0;
  double attn = 2 * d * qd + 2 * d * kvd + qkv_b * (qd + 2 * kvd) + b * d + qk_norm_w +
                (attention_sinks ? double(heads) : 0) + (attn_output_gate ? d * qd : 0);
  if (mla()) {
    const double H = double(heads), ql = double(q_lora_rank), kvl = double(kv_lora_rank);
    const double qk = double(qk_nope_dim + qk_rope_dim), nope_v = double(qk_nope_dim + v_head_dim);
    const double q = q_lora_rank > 0 ? d * ql + ql + ql * H * qk : d * H * qk;  // (with its norm)
    attn = q + d * (kvl + double(qk_rope_dim)) + kvl + kvl * H * nope_v + H * double(v_head_dim) * d;
  }
  const double dense_mlp = gated_mlp ? 3 * d * F + b * (2 * F + d) : 2 * d * F + b * (F + d);
  // Experts carry no biases (Mixtral, Qwen2-MoE); the router is d x experts, the shared expert's gate d x 1.
  const double shared =
      shared_expert_ffn > 0 ? 3 * d * double(shared_expert_ffn) + (shared_expert_gated ? d : 0) : 0;
  const double router = d * double(experts) + (router_bias || gate_bias ? double(experts) : 0);
  const double expert_b = expert_bias ? 2 * double(expert_ffn) + d : 0;
  const double moe = double(experts) * (3 * d * double(expert_ffn) + expert_b) + router + shared;
  const double moe_layers = experts > 0 ? double(layers - dense_layers) : 0;
  const double norms = sandwich_norm ? 4 : 2;  // per layer
  // A linear-attention layer's mixer: in_proj_qkvz, in_proj_ba, the depthwise conv (no bias), dt_bias
  // and A_log per value head, the gated norm's weight (one head wide), out_proj.
  const double lin_kd = double(lin_key_width()), lin_vd = double(lin_value_width()), lin_h = double(lin_v_heads);
  const double linear = d * (2 * lin_kd + 2 * lin_vd) + d * 2 * lin_h + double(lin_conv_width()) * double(lin_conv) +
                        2 * lin_h + double(lin_v_dim) + lin_vd * d;
  double total = emb + double(layers - linear_layers) * attn + double(linear_layers) * linear +
                 double(layers) * norms * nrm + moe_layers * moe + (double(layers) - moe_layers) * dense_mlp;
  if (family == Family::bert) total += d * d + d;  // pooler
  else total += nrm;                              // final norm of pre-norm decoders
  if (!tied_embeddings) total += double(vocab) * d;
  return total;
}

double TransformerConfig::active_parameter_count() const {
  const double bias = expert_bias ? 2 * double(expert_ffn) + double(hidden) : 0;
  const double per_expert = 3 * double(hidden) * double(expert_ffn) + bias;
  const double idle = double(experts - experts_per_token) * per_expert;
  return parameter_count() - (experts > 0 ? double(layers - dense_layers) * idle : 0);
}

void TransformerConfig::validate(const std::string& where) const {
  auto positive = [&](int64_t v, const char* what) {
    if (v <= 0) throw InputError(where + ": " + what + " must be positive (got " + std::to_string(v) + ")");
    // Bounds far above any real model keep every product of dimensions inside int64.
    if (v > kMaxDimension)
      throw InputError(where + ": " + what + " " + std::to_string(v) + " is implausibly large");
  };
  positive(hidden, "hidden size");
  positive(layers, "number of layers");
  positive(heads, "number of attention heads");
  positive(kv_heads, "number of key/value heads");
  positive(ffn, "intermediate (MLP) size");
  positive(vocab, "vocabulary size");
  positive(max_positions, "maximum positions");
  if (head_size != 0) positive(head_size, "head size");
  if (head_size == 0 && hidden % heads != 0)
    throw InputError(where + ": hidden size " + std::to_string(hidden) + " is not a multiple of the " +
                     std::to_string(heads) + " attention heads");
  if (experts > 0) {
    // Far above any published mixture (DeepSeek-V3: 256); every expert's weights are tensors of the tape.
    if (experts > (int64_t(1) << 16))
      throw InputError(where + ": " + std::to_string(experts) + " experts is implausibly many");
    positive(expert_ffn, "expert intermediate size");
    positive(experts_per_token, "number of experts per token");
    if (experts_per_token > experts)
      throw InputError(where + ": " + std::to_string(experts_per_token) + " experts per token exceed the " +
                       std::to_string(experts) + " experts");
    if (!gated_mlp) throw InputError(where + ": mixture of experts is synthesized for SwiGLU (llama-like) models");
    if (dense_layers < 0 || dense_layers >= layers)
      throw InputError(where + ": " + std::to_string(dense_layers) + " dense layers leave no expert layer of " +
                       std::to_string(layers));
    if (expert_groups < 1 || topk_groups < 1 || topk_groups > expert_groups || experts % expert_groups != 0)
      throw InputError(where + ": the experts' " + std::to_string(expert_groups) + " groups (top " +
                       std::to_string(topk_groups) + ") do not split " + std::to_string(experts) + " experts");
  }
  if (mla()) {
    if (q_lora_rank < 0) throw InputError(where + ": q_lora_rank must not be negative");
    positive(kv_lora_rank, "kv_lora_rank");
    positive(qk_nope_dim, "qk_nope_head_dim");
    positive(qk_rope_dim, "qk_rope_head_dim");
    positive(v_head_dim, "v_head_dim");
    if (qk_rope_dim % 2 != 0) throw InputError(where + ": qk_rope_head_dim must be even (rotary pairs)");
    if (kv_heads != heads)
      throw InputError(where + ": latent attention gives every head its own k and v (num_key_value_heads " +
                       std::to_string(kv_heads) + " != " + std::to_string(heads) + " heads)");
  }
  if (heads % kv_heads != 0)
    throw InputError(where + ": " + std::to_string(heads) + " attention heads are not a multiple of the " +
                     std::to_string(kv_heads) + " key/value heads");
  if (gated_mlp && act == Activation::gelu_new)
    throw InputError(where + ": a gated MLP with gelu_new is not synthesized (gelu, gelu_pytorch_tanh, relu or silu)");
  if (sliding_window < 0 || local_layers < 0 || local_layers > layers || (local_layers > 0 && sliding_window == 0))
    throw InputError(where + ": " + std::to_string(local_layers) + " sliding-window layers (window " +
                     std::to_string(sliding_window) + ") do not fit " + std::to_string(layers) + " layers");
  if (local_layers > 0 && dense_layers > 0)
    throw InputError(where + ": sliding-window attention in a mixture with dense layers is not synthesized");
  if (linear_layers > 0) {
    if (linear_layers > layers)
      throw InputError(where + ": " + std::to_string(linear_layers) + " linear-attention layers exceed the " +
                       std::to_string(layers) + " layers");
    positive(lin_k_heads, "linear_num_key_heads");
    positive(lin_v_heads, "linear_num_value_heads");
    positive(lin_k_dim, "linear_key_head_dim");
    positive(lin_v_dim, "linear_value_head_dim");
    positive(lin_conv, "linear_conv_kernel_dim");
    if (lin_v_heads % lin_k_heads != 0)
      throw InputError(where + ": " + std::to_string(lin_v_heads) + " linear value heads are not a multiple of the " +
                       std::to_string(lin_k_heads) + " key heads");
    if (local_layers > 0 || (experts > 0 && dense_layers > 0) || mla())
      throw InputError(where + ": linear attention beside sliding-window, latent attention or a mixture's dense "
                       "layers is not synthesized");
  }
}

namespace {

using nlohmann::json;

struct Reader {
  const json& j;
  const std::string& file;

  const json* find(std::initializer_list<const char*> keys, std::string* found = nullptr) const {
    for (const char* k : keys) {
      auto it = j.find(k);
      if (it != j.end() && !it->is_null()) {
        if (found) *found = k;
        return &*it;
      }
    }
    return nullptr;
  }
  static std::string names(std::initializer_list<const char*> keys) {
    std::string s;
    for (const char* k : keys) s += std::string(s.empty() ? "'" : ", '") + k + "'";
    return s;
  }
  int64_t integer(std::initializer_list<const char*> keys, int64_t dflt, bool required) const {
    std::string key;
    const json* v = find(keys, &key);
    if (!v) {
      if (required) throw InputError(file + ": missing key " + names(keys));
      return dflt;
    }
    if (!v->is_number_integer() || v->get<int64_t>() <= 0)
      throw InputError(file + ": key '" + key + "': expected a positive integer, got " + v->dump());
    return v->get<int64_t>();
  }
  // A positive real (a soft cap), 0 where absent or null.
  double positive_real(const char* key) const {
    const json* v = find({key});
    if (!v) return 0;
    if (!v->is_number() || v->get<double>() <= 0)
      throw InputError(file + ": key '" + key + "': expected a positive number, got " + v->dump());
    return v->get<double>();
  }
  double number(std::initializer_list<const char*> keys, double dflt) const {
    std::string key;
    const json* v = find(keys, &key);
    if (!v) return dflt;
    if (!v->is_number() || v->get<double>() < 0 || v->get<double>() >= 1)
      throw InputError(file + ": key '" + key + "': expected a probability in [0, 1), got " + v->dump());
    return v->get<double>();
  }
  std::string string(std::initializer_list<const char*> keys, std::string* found = nullptr) const {
    std::string key;
    const json* v = find(keys, &key);
    if (found) *found = key;
    if (!v) return "";
    if (!v->is_string()) throw InputError(file + ": key '" + key + "': expected a string, got " + v->dump());
    return v->get<std::string>();
  }
  bool boolean(const char* key, bool dflt) const {
    const json* v = find({key});
    if (!v) return dflt;
    if (!v->is_boolean()) throw InputError(file + ": key '" + key + "': expected true or false, got " + v->dump());
    return v->get<bool>();
  }
};

bool is_gemma(const std::string& type) {
  return type == "gemma" || type == "gemma2" || type == "gemma3" || type == "gemma3_text";
}
bool is_llama4(const std::string& type) { return type == "llama4" || type == "llama4_text"; }

// Sliding-window attention (sliding_window, unless use_sliding_window says false): which layers
// use it, from `layer_types` where the config lists them, else the family's layout (HF's Gemma 2:
// the even layers; Gemma 3: all but every sliding_window_pattern-th; the others: every layer).
void sliding_window_from_hf(const Reader& r, const std::string& type, TransformerConfig& c) {
  // layer_types, where a config lists them, must name attention synth builds, window or not: a
  // linear-attention layer (Qwen3-Next, ...) is not a full-attention one.
  int64_t listed_sliding = -1;
  if (const json* lt = r.find({"layer_types"})) {
    if (!lt->is_array() || lt->size() != size_t(c.layers))
      throw InputError(r.file + ": key 'layer_types': expected a list of " + std::to_string(c.layers) +
                       " layer types, got " + lt->dump());
    listed_sliding = 0;
    for (const json& t : *lt) {
      if (t == "sliding_attention") ++listed_sliding;
      else if (t == "linear_attention" && c.lin_v_heads > 0) continue;  // Gated DeltaNet (linear_attention_from_hf)
      else if (t != "full_attention")
        throw InputError(r.file + ": key 'layer_types': unsupported " + t.dump() +
                         " (expected sliding_attention or full_attention" +
                         (t == "linear_attention" ? "; linear_attention needs the linear_* head fields)" : ")"));
    }
  }
  if (!r.find({"sliding_window"}) || (r.find({"use_sliding_window"}) && !r.boolean("use_sliding_window", false))) {
    if (listed_sliding > 0)
      throw InputError(r.file + ": key 'layer_types': sliding_attention layers without a sliding_window");
    return;
  }
  if (type.rfind("qwen", 0) == 0)  // Qwen2's window starts at max_window_layers, a layout synth lacks
    throw InputError(r.file + ": key 'use_sliding_window': Qwen's sliding-window layout is not supported by synth");
  c.sliding_window = r.integer({"sliding_window"}, 0, true);
  if (listed_sliding >= 0) c.local_layers = listed_sliding;
  else if (type == "gemma2") c.local_layers = (c.layers + 1) / 2;
  else if (type == "gemma3" || type == "gemma3_text")
    c.local_layers = c.layers - c.layers / r.integer({"sliding_window_pattern"}, 6, false);
  else c.local_layers = c.layers;
}

bool is_gated_delta_hybrid(const std::string& type) {
  return type == "qwen3_next" || type == "qwen3_5" || type == "qwen3_5_text" || type == "qwen3_5_moe" ||
         type == "qwen3_5_moe_text";
}

// Gated DeltaNet layers (Qwen3-Next, Qwen3.5): the linear_* head fields, which layers are linear
// (layer_types, else all but every full_attention_interval-th), the recurrent state's dtype
// (mamba_ssm_dtype, default float32 as the kernels keep it); the full-attention layers gate their
// output and RMS-normalize each head of q and k.
void linear_attention_from_hf(const Reader& r, const std::string& type, TransformerConfig& c) {
  if (!r.find({"linear_num_value_heads"})) {
    if (is_gated_delta_hybrid(type))
      throw InputError(r.file + ": key 'linear_num_value_heads': missing; " + type +
                       " interleaves linear-attention layers, whose heads it names");
    return;
  }
  c.lin_k_heads = r.integer({"linear_num_key_heads"}, 0, true);
  c.lin_v_heads = r.integer({"linear_num_value_heads"}, 0, true);
  c.lin_k_dim = r.integer({"linear_key_head_dim"}, 0, true);
  c.lin_v_dim = r.integer({"linear_value_head_dim"}, 0, true);
  c.lin_conv = r.integer({"linear_conv_kernel_dim"}, 4, false);
  const std::string state = r.string({"mamba_ssm_dtype"});
  if (state == "bfloat16" || state == "float16") c.lin_state_bytes = 2;
  else if (!state.empty() && state != "float32")
    throw InputError(r.file + ": key 'mamba_ssm_dtype': unsupported '" + state +
                     "' (expected float32, bfloat16 or float16)");
  if (const json* lt = r.find({"layer_types"}); lt && lt->is_array()) {
    c.linear_layers = 0;
    for (const json& t : *lt) c.linear_layers += t == "linear_attention";
  } else {
    const int64_t every = r.integer({"full_attention_interval"}, 4, false);
    c.linear_layers = c.layers - c.layers / every;  // layer i is full iff (i + 1) % every == 0
  }
  c.attn_output_gate = r.boolean("attn_output_gate", true);
  c.qk_norm = TransformerConfig::QkNorm::per_head;
}

// Gemma 1/2/3 as HF runs them: embeddings scaled by sqrt(hidden), GeGLU (hidden_activation, else
// gelu_pytorch_tanh), tied LM head; Gemma 2/3 add the sandwich norms and the soft caps, Gemma 3 the
// per-head q/k norms.
void gemma_from_hf(const Reader& r, const std::string& type, TransformerConfig& c) {
  c.embed_scale = true;
  c.tied_embeddings = r.boolean("tie_word_embeddings", true);
  std::string key;
  const std::string act = r.string({"hidden_activation"}, &key);
  c.act = act.empty() || act == "gelu_pytorch_tanh" || act == "gelu_tanh" ? Activation::gelu_tanh
          : act == "gelu"                                                 ? Activation::gelu
          : throw InputError(r.file + ": key 'hidden_activation': unsupported activation '" + act +
                             "' (expected gelu_pytorch_tanh or gelu)");
  if (type == "gemma") return;
  c.sandwich_norm = true;
  c.attn_softcap = r.positive_real("attn_logit_softcapping");
  c.final_softcap = r.positive_real("final_logit_softcapping");
  if (type != "gemma2") c.qk_norm = TransformerConfig::QkNorm::per_head;
}

// Llama 4's text model (model_type llama4_text, or the text_config of llama4): experts every
// interleave_moe_layer_step-th layer (HF: layers step - 1, 2 step - 1, ...), the others a dense
// MLP of intermediate_size_mlp; one shared expert of intermediate_size beside the routed ones.
void llama4_from_hf(const Reader& r, TransformerConfig& c) {
  c.expert_ffn = r.integer({"intermediate_size"}, 0, true);
  c.ffn = r.integer({"intermediate_size_mlp"}, c.expert_ffn, false);
  c.shared_expert_ffn = c.expert_ffn;
  c.shared_expert_gated = false;
  c.norm_topk = false;
  c.router = TransformerConfig::Router::topk_sigmoid;
  c.eager_experts = TransformerConfig::EagerExperts::all;
  int64_t moe = 0;
  if (const json* m = r.find({"moe_layers"})) {
    if (!m->is_array())
      throw InputError(r.file + ": key 'moe_layers': expected a list of layer indices, got " + m->dump());
    moe = int64_t(m->size());
  } else {
    moe = c.layers / r.integer({"interleave_moe_layer_step"}, 1, false);
  }
  c.dense_layers = c.layers - moe;
}

// Llama 4's attention: rotary on the layers no_rope_layers marks (default: all but every fourth),
// L2-normed q and k there (use_qk_norm), temperature-tuned queries on the others, chunked.
void llama4_attention_from_hf(const Reader& r, TransformerConfig& c) {
  // no_rope_layers: 1 where a layer uses rotary (HF's name); by default every fourth layer is NoPE.
  int64_t rope = 0;
  if (const json* nr = r.find({"no_rope_layers"}); nr && !(nr->is_array() && nr->empty())) {
    if (!nr->is_array() || nr->size() != size_t(c.layers))
      throw InputError(r.file + ": key 'no_rope_layers': expected one 0/1 per layer (" + std::to_string(c.layers) +
                       "), got " + nr->dump());
    for (const json& v : *nr) rope += v == 1 || v == true;
  } else {
    const int64_t interval = r.integer({"no_rope_layer_interval"}, 4, false);
    for (int64_t i = 0; i < c.layers; ++i) rope += (i + 1) % interval != 0;
  }
  c.rope_fraction = double(rope) / double(c.layers);
  c.complex_rotary = true;  // view_as_complex, a complex multiply, view_as_real
  c.fp32_softmax = false;
  c.qk_l2_norm = r.boolean("use_qk_norm", false);
  // Published configs write it as true or as a number (nonzero: on).
  const json* tt = r.find({"attn_temperature_tuning"});
  c.temperature_tuning = !tt || (tt->is_number() ? tt->get<double>() != 0 : r.boolean("attn_temperature_tuning", true));
  c.attention_chunk = r.integer({"attention_chunk_size"}, 0, false);
}

// GPT-OSS (model_type gpt_oss): 32 or 128 experts of intermediate_size in every layer, with biases
// like the router's; top-k of the logits, softmax over the chosen; the clamped gated activation;
// a sink logit per attention head; HF's eager experts loop in training, run all at inference.
void gpt_oss_from_hf(TransformerConfig& c) {
  c.expert_ffn = c.ffn;
  c.norm_topk = false;
  c.router = TransformerConfig::Router::topk_softmax;
  c.gate_bias = c.expert_bias = true;
  c.eager_experts = TransformerConfig::EagerExperts::all_in_inference;
  c.clamped_swiglu = c.attention_sinks = true;
}

// DeepSeek-V2/V3's multi-head latent attention (kv_lora_rank).
void mla_from_hf(const Reader& r, TransformerConfig& c) {
  if (!r.find({"kv_lora_rank"})) return;
  if (c.family != Family::llama)
    throw InputError(r.file + ": key 'kv_lora_rank': latent attention is synthesized for llama-like models only");
  c.kv_lora_rank = r.integer({"kv_lora_rank"}, 0, true);
  c.q_lora_rank = r.integer({"q_lora_rank"}, 0, false);  // null (V2-Lite): one q projection
  c.qk_nope_dim = r.integer({"qk_nope_head_dim"}, 0, true);
  c.qk_rope_dim = r.integer({"qk_rope_head_dim"}, 0, true);
  c.v_head_dim = r.integer({"v_head_dim"}, 0, true);
}

// DeepSeek-V2/V3 (n_routed_experts): shared experts without a gate, dense first layers, a sigmoid
// or softmax router with group-limited top-k.
// How a router scores and chooses experts: scoring_func (softmax or sigmoid) and topk_method (greedy,
// group_limited_greedy, noaux_tc: a per-expert choice bias; the grouped methods choose within the best
// topk_group of n_group groups), each the family's default where the config names none.
void router_from_hf(const Reader& r, TransformerConfig& c, const std::string& scoring_default,
                    const std::string& method_default) {
  std::string scoring = r.string({"scoring_func"});
  if (scoring.empty()) scoring = scoring_default;
  if (scoring != "" && scoring != "softmax" && scoring != "sigmoid")
    throw InputError(r.file + ": key 'scoring_func': unsupported '" + scoring + "' (expected softmax or sigmoid)");
  if (scoring == "sigmoid") c.router = TransformerConfig::Router::sigmoid;
  std::string method = r.string({"topk_method"});
  if (method.empty()) method = method_default;
  if (method != "" && method != "greedy" && method != "group_limited_greedy" && method != "noaux_tc")
    throw InputError(r.file + ": key 'topk_method': unsupported '" + method +
                     "' (expected greedy, group_limited_greedy or noaux_tc)");
  c.router_bias = method == "noaux_tc";  // e_score_correction_bias
  if (method == "group_limited_greedy" || method == "noaux_tc") {
    c.expert_groups = r.integer({"n_group"}, 1, false);
    c.topk_groups = r.integer({"topk_group"}, 1, false);
  }
}

void deepseek_moe_from_hf(const Reader& r, const std::string& type, TransformerConfig& c) {
  c.experts = r.integer({"n_routed_experts"}, 0, true);
  c.experts_per_token = r.integer({"num_experts_per_tok"}, 0, true);
  c.expert_ffn = r.integer({"moe_intermediate_size"}, 0, true);
  if (r.find({"n_shared_experts"})) c.shared_expert_ffn = r.integer({"n_shared_experts"}, 0, false) * c.expert_ffn;
  c.shared_expert_gated = false;
  // HF DeepseekV2/V3: layer i routes iff i >= first_k_dense_replace and i % moe_layer_freq == 0.
  const int64_t first = r.find({"first_k_dense_replace"}) ? r.integer({"first_k_dense_replace"}, 0, false) : 0;
  const int64_t freq = r.integer({"moe_layer_freq"}, 1, false);
  c.dense_layers = 0;
  for (int64_t i = 0; i < c.layers; ++i) c.dense_layers += i < first || i % freq != 0;
  // GLM-4.5's config names neither: HF's Glm4MoeTopkRouter always scores by sigmoid with DeepSeek-V3's
  // choice bias and groups.
  const bool glm = type == "glm4_moe";
  router_from_hf(r, c, glm ? "sigmoid" : "", glm ? "noaux_tc" : "");
  c.norm_topk = r.boolean("norm_topk_prob", false);
}

// Mixtral (num_local_experts), Qwen2-MoE / Qwen3-MoE / OLMoE (num_experts), Llama 4, GPT-OSS and
// DeepSeek (n_routed_experts): the experts, the router, and which layers keep a dense MLP.
void moe_from_hf(const Reader& r, const std::string& type, TransformerConfig& c) {
  if (r.find({"n_routed_experts"}) && r.integer({"n_routed_experts"}, 0, true) > 1) {
    if (c.family != Family::llama)
      throw InputError(r.file + ": key 'n_routed_experts': mixtures of experts are synthesized for llama-like "
                       "(RMSNorm, SwiGLU) models only");
    return deepseek_moe_from_hf(r, type, c);
  }
  std::string key;
  const json* v = r.find({"num_local_experts", "num_experts"}, &key);
  if (!v) return;
  if (!v->is_number_integer() || v->get<int64_t>() < 0)
    throw InputError(r.file + ": key '" + key + "': expected a non-negative integer, got " + v->dump());
  if (v->get<int64_t>() <= 1) return;  // one expert is a dense MLP
  if (c.family != Family::llama)
    throw InputError(r.file + ": key '" + key + "': mixtures of experts are synthesized for llama-like "
                     "(RMSNorm, SwiGLU) models only");
  c.experts = v->get<int64_t>();
  c.experts_per_token = r.integer({"num_experts_per_tok", "experts_per_token"}, 0, true);
  if (is_llama4(type)) return llama4_from_hf(r, c);
  if (type == "gpt_oss") return gpt_oss_from_hf(c);
  c.expert_ffn = r.integer({"moe_intermediate_size"}, c.ffn, false);
  if (r.find({"shared_expert_intermediate_size"}))
    c.shared_expert_ffn = r.integer({"shared_expert_intermediate_size"}, 0, false);
  // Mixtral always renormalizes the chosen experts' weights; the others say so (default false).
  c.norm_topk = r.boolean("norm_topk_prob", type == "mixtral");
  // HF Qwen2-MoE / Qwen3-MoE: layer i routes iff it is not in mlp_only_layers and (i + 1) is a
  // multiple of decoder_sparse_step; the others keep a dense MLP of intermediate_size.
  const int64_t step = r.integer({"decoder_sparse_step"}, 1, false);
  std::vector<bool> dense(size_t(c.layers), false);
  if (const json* d = r.find({"mlp_only_layers"})) {
    if (!d->is_array())
      throw InputError(r.file + ": key 'mlp_only_layers': expected a list of layer indices, got " + d->dump());
    for (const json& i : *d) {
      if (!i.is_number_integer() || i.get<int64_t>() < 0 || i.get<int64_t>() >= c.layers)
        throw InputError(r.file + ": key 'mlp_only_layers': " + i.dump() + " is not a layer index below " +
                         std::to_string(c.layers));
      dense[size_t(i.get<int64_t>())] = true;
    }
  }
  c.dense_layers = 0;
  for (int64_t i = 0; i < c.layers; ++i) c.dense_layers += dense[size_t(i)] || (i + 1) % step != 0;
}

// Partial rotary: partial_rotary_factor (top level, or in newer configs' rope_parameters), else
// MiniMax's rotary_dim; the rotated width must be a positive, even number of a head's dimensions.
void partial_rotary_from_hf(const Reader& r, TransformerConfig& c) {
  const int64_t hd = c.head_dim();
  const json* rope = r.find({"rope_parameters"});
  std::string key = "partial_rotary_factor";
  const json* f = r.find({"partial_rotary_factor"});
  if (!f && rope && rope->is_object() && rope->contains("partial_rotary_factor") &&
      !(*rope)["partial_rotary_factor"].is_null()) {
    f = &(*rope)["partial_rotary_factor"];
    key = "rope_parameters.partial_rotary_factor";
  }
  double fraction = 1;
  if (f) {
    if (!f->is_number() || f->get<double>() <= 0 || f->get<double>() > 1)
      throw InputError(r.file + ": key '" + key + "': expected a number in (0, 1], got " + f->dump());
    fraction = f->get<double>();
  } else if (r.find({"rotary_dim"})) {
    key = "rotary_dim";
    const int64_t d = r.integer({"rotary_dim"}, hd, false);
    if (d > hd)
      throw InputError(r.file + ": key 'rotary_dim': " + std::to_string(d) + " exceeds the head dimension " +
                       std::to_string(hd));
    fraction = double(d) / double(hd);
  }
  const double rotated = fraction * double(hd);
  if (rotated < 2 || rotated != std::floor(rotated) || int64_t(rotated) % 2 != 0)
    throw InputError(r.file + ": key '" + key + "': rotates " + std::to_string(rotated) + " of a head's " +
                     std::to_string(hd) + " dimensions; expected a positive even number");
  c.rotary_dim_fraction = fraction;
}

// GLM-4.5 / 4.6 (HF Glm4MoeForCausalLM): DeepSeek-V3's MoE (sigmoid scores with a per-expert choice
// bias, n_group / topk_group, shared experts, first_k_dense_replace) over GQA attention whose q, k and
// v (not o) carry biases with attention_bias, per-head q / k RMSNorms with use_qk_norm, and partial
// rotary (its router: deepseek_moe_from_hf's, with GLM's defaults).
void glm4_moe_from_hf(const Reader& r, TransformerConfig& c) {
  c.qkv_bias = r.boolean("attention_bias", false);
  c.bias = false;
  if (r.boolean("use_qk_norm", false)) c.qk_norm = TransformerConfig::QkNorm::per_head;
}

// MiniMax-M2 (HF MiniMaxM2ForCausalLM): num_local_experts SwiGLU experts of intermediate_size behind
// a sigmoid router with a per-expert choice bias (use_routing_bias), the chosen weights renormalized;
// q and k RMSNormed over the whole projection (qk_norm_type per_layer) or per head; partial rotary
// (rotary_dim). Its multi-token-prediction modules are not part of the HF model.
void minimax_m2_from_hf(const Reader& r, TransformerConfig& c) {
  if (c.experts > 0) {
    router_from_hf(r, c, "", "");
    c.router_bias = r.boolean("use_routing_bias", false);
    c.norm_topk = true;
  }
  if (r.boolean("use_qk_norm", false))
    c.qk_norm = r.string({"qk_norm_type"}) == "per_head" ? TransformerConfig::QkNorm::per_head
                                                         : TransformerConfig::QkNorm::whole;
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
    json text = j["text_config"];
    j = std::move(text);
    where = file + ": text_config";
  }
  Reader r{j, where};
  TransformerConfig c;
  c.name = file;
  if (!left_out.empty()) c.notes.push_back("the language model only; not synthesized: " + left_out);
  if (j0_name.is_string()) c.source = j0_name.get<std::string>();

  // Family: from model_type; unknown types fall back on the features the config shows, and say so.
  const std::string type = r.string({"model_type"});
  if (r.boolean("is_encoder_decoder", false))
    throw InputError(where + ": key 'is_encoder_decoder': encoder-decoder models (" +
                     (type.empty() ? std::string("T5, BART, Whisper, ...") : "'" + type + "'") +
                     ") are not synthesized; synth builds encoders (BERT-like) and decoders");

  const bool has_rms = j.contains("rms_norm_eps");
  if (type == "bert" || type == "roberta" || type == "deberta" || type == "electra" || type == "albert")
    c.family = Family::bert;
  else if (type == "opt")
    c.family = Family::opt;
  else if (type == "gpt2" || type == "gpt_neo" || type == "gptj" || type == "gpt_bigcode")
    c.family = Family::gpt2;
  else if (has_rms)
    c.family = Family::llama;  // llama, mistral, qwen2, ... (RMSNorm, rotary, SwiGLU)
  else if (r.boolean("is_decoder", true) == false || j.contains("type_vocab_size"))
    c.family = Family::bert;
  else
    c.family = Family::gpt2;

  c.hidden = r.integer({"hidden_size", "n_embd", "d_model"}, 0, true);
  c.layers = r.integer({"num_hidden_layers", "n_layer", "num_layers"}, 0, true);
  // Checked here, not only in validate(): the layer layouts below walk the layers.
  if (c.layers > kMaxDimension)
    throw InputError(where + ": number of layers " + std::to_string(c.layers) + " is implausibly large");
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

  std::string act_key;
  std::string act = r.string({"hidden_act", "activation_function"}, &act_key);
  if (act.empty()) act = llama ? "silu" : c.family == Family::opt ? "relu" : c.family == Family::gpt2 ? "gelu_new" : "gelu";
  if (act == "gelu") c.act = Activation::gelu;
  else if (act == "gelu_new" || act == "gelu_fast" || act == "gelu_python") c.act = Activation::gelu_new;
  else if (act == "gelu_pytorch_tanh" || act == "gelu_tanh") c.act = Activation::gelu_tanh;
  else if (act == "relu") c.act = Activation::relu;
  else if (act == "silu" || act == "swish") c.act = Activation::silu;
  else
    throw InputError(where + ": key '" + act_key + "': unsupported activation '" + act +
                     "' (expected gelu, gelu_new, gelu_pytorch_tanh, relu or silu)");

  mla_from_hf(r, c);
  if (const json* v = r.find({"head_dim"}); v && !c.mla()) {
    // Llama-like attention takes any head size (q/k/v project to heads x head_dim, o back to the
    // hidden size); the other families' HF code splits the hidden size itself.
    if (!v->is_number_integer() || v->get<int64_t>() <= 0)
      throw InputError(where + ": key 'head_dim': expected a positive integer, got " + v->dump());
    if (v->get<int64_t>() * c.heads != c.hidden) {
      if (!llama)
        throw InputError(where + ": key 'head_dim': " + v->dump() + " x " + std::to_string(c.heads) +
                         " heads differs from the hidden size " + std::to_string(c.hidden) +
                         " (supported for llama-like models only)");
      c.head_size = v->get<int64_t>();
    }
  }
  // Qwen2's q/k/v carry biases (its o_proj and MLP do not); Qwen3 and OLMoE normalize q and k.
  if (type == "qwen2" || type == "qwen2_moe") c.qkv_bias = true;
  if (type == "qwen3" || type == "qwen3_moe") c.qk_norm = TransformerConfig::QkNorm::per_head;
  if (type == "olmoe" || type == "olmo2") c.qk_norm = TransformerConfig::QkNorm::whole;

  // n_inner may be null in GPT-2 configs: 4 * hidden.
  c.ffn = r.integer({"intermediate_size", "n_inner", "ffn_dim"}, 4 * c.hidden, false);
  moe_from_hf(r, type, c);
  if (llama && is_gemma(type)) gemma_from_hf(r, type, c);
  if (llama && is_llama4(type)) llama4_attention_from_hf(r, c);
  if (llama && type == "phi3") c.fused_qkv = c.fused_gate_up = true;
  if (llama && !c.mla()) partial_rotary_from_hf(r, c);
  if (type == "glm4_moe") glm4_moe_from_hf(r, c);
  if (type == "minimax_m2") minimax_m2_from_hf(r, c);
  if (llama) linear_attention_from_hf(r, type, c);
  if (c.family != Family::bert) sliding_window_from_hf(r, type, c);

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
  // Types whose HF implementation is the family's own op pattern (or an exact relative of it); any
  // other is built from the fields synth reads, and the note says which pattern stands in for it.
  static const std::set<std::string> as_implemented = {
      "", "bert", "roberta", "gpt2", "opt", "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
      "qwen3_moe", "olmoe", "olmo2", "deepseek_v2", "deepseek_v3", "gemma", "gemma2", "gemma3", "gemma3_text",
      "llama4", "llama4_text", "gpt_oss", "phi3", "glm4_moe", "minimax_m2", "qwen3_next", "qwen3_5",
      "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"};
  if (!as_implemented.count(type)) {
    const char* family = c.family == Family::bert ? "BERT" : c.family == Family::opt ? "OPT"
                         : c.family == Family::gpt2 ? "GPT-2" : "LLaMA";
    c.notes.push_back("model_type '" + type + "' is not one synth knows by name: built as a " + family +
                      "-like model from the fields synth reads (what else its architecture does is not modelled)");
  }
  c.validate(where);
  return c;
}

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

TransformerConfig read_hf_config(const std::string& path) {
  return parse_hf_config(read_file(path, kMaxDocumentBytes), path);
}

TransformerConfig with_overrides(TransformerConfig c, const SynthOptions& o) {
  std::string given;  // the overrides, to name them if the result is inconsistent
  for (const auto& [opt, v] : {std::pair<const char*, int64_t>{"--layers", o.layers}, {"--hidden", o.hidden},
                               {"--heads", o.heads}, {"--kv-heads", o.kv_heads}, {"--ffn", o.ffn}, {"--vocab", o.vocab}})
    if (v) given += std::string(given.empty() ? " with " : " ") + opt + " " + std::to_string(v);
  if (o.layers) c.layers = o.layers;
  if (o.hidden) c.hidden = o.hidden;
  if (o.heads) {
    // Keep multi-head attention multi-head unless the KV heads are given too.
    if (c.kv_heads == c.heads) c.kv_heads = o.heads;
    c.heads = o.heads;
  }
  if (o.kv_heads) c.kv_heads = o.kv_heads;
  if (o.ffn) (c.experts > 0 ? c.expert_ffn : c.ffn) = o.ffn;  // a mixture's MLP size is its experts'
  if (o.vocab) c.vocab = o.vocab;
  c.validate(c.name + given);
  return c;
}

}  // namespace kcast::synth

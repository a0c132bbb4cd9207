// The fields of a Hugging Face config.json that belong to one architecture family or feature:
// sliding windows and layer types, Gated DeltaNet linear attention, Gemma, Llama 4, GPT-OSS,
// DeepSeek's latent attention and routers, mixtures of experts, partial rotary, GLM-4.5 and
// MiniMax-M2. hf_config.cc reads the fields every model has and calls these by model_type.
#include "predict/synth/hf_config_families.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/error.h"

namespace kcast::synth::hf {

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
// a sink logit per attention head; HF's eager experts loop in training, run all at inference. Its
// checkpoints are MXFP4 in the experts alone, so narrow inference keeps the rest 16-bit.
void gpt_oss_from_hf(TransformerConfig& c) {
  c.quantized_experts_only = true;
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
  c.leading_dense_layers = freq == 1 ? std::min(first, c.layers) : 0;
  // GLM-4.5's config names neither: HF's Glm4MoeTopkRouter always scores by sigmoid with DeepSeek-V3's
  // choice bias and groups.
  const bool glm = type == "glm4_moe";
  router_from_hf(r, c, glm ? "sigmoid" : "", glm ? "noaux_tc" : "");
  c.norm_topk = r.boolean("norm_topk_prob", false);
}

// A quantized checkpoint's config that keeps attention out of the quantization
// (quantization_config.modules_to_not_convert naming self_attn, as Hugging Face's MXFP4 configs do).
static bool attention_left_unquantized(const Reader& r) {
  const json* q = r.find({"quantization_config"});
  if (!q || !q->is_object() || !q->contains("modules_to_not_convert")) return false;
  const json& m = (*q)["modules_to_not_convert"];
  if (!m.is_array()) return false;
  for (const json& name : m)
    if (name.is_string() && name.get<std::string>().find("self_attn") != std::string::npos) return true;
  return false;
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
  c.quantized_experts_only = attention_left_unquantized(r);
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
  if (rotated < 2 || rotated != std::floor(rotated) || int64_t(rotated) % 2 != 0) {
    // Without a partial rotary key the whole head rotates: its size is what is wrong.
    if (!f && key == "partial_rotary_factor")
      throw InputError(r.file + ": " +
                       (r.find({"head_dim"}) ? std::string("key 'head_dim'")
                                             : std::string("keys 'hidden_size' / 'num_attention_heads'")) +
                       ": a head of " + std::to_string(hd) +
                       " dimensions cannot rotate whole (rotary embeddings need an even number)");
    throw InputError(r.file + ": key '" + key + "': rotates " + std::to_string(rotated) + " of a head's " +
                     std::to_string(hd) + " dimensions; expected a positive even number");
  }
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


}  // namespace kcast::synth::hf

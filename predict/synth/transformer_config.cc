// Transformer configs: parameter counts and command-line overrides. Reading a Hugging Face
// config.json is hf_config.cc (family fields in hf_config_families.cc), the checks every config
// passes config_validate.cc, the built-in table and the zoo builtin_models.cc.
#include "predict/synth/transformer_config.h"

#include <string>
#include <utility>

namespace kcast::synth {

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

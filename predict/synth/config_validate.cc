// TransformerConfig::validate: the checks every transformer config passes, built in, read from a
// config.json or overridden on the command line, before anything is synthesized from it. Each error
// names where the config came from and the field.
#include <string>

#include "model/error.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth {

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

}  // namespace kcast::synth

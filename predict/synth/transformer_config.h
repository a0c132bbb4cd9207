// TransformerConfig: the architecture of a transformer as synthesis needs it, from a built-in table
// or a Hugging Face config.json. `family` selects the eager op pattern of the HF implementation
// (where masks and scaling sit, how heads are split), since that decides which kernels launch.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/dtype.h"
#include "predict/synth/synth.h"

namespace kcast::synth {

// Far above any real model's sizes: a config dimension beyond it is an input error, not a model.
constexpr int64_t kMaxDimension = int64_t(1) << 24;

enum class Family { bert, gpt2, opt, llama };
enum class NormKind { layer, rms };
// gelu: one erf-GELU kernel; gelu_tanh: one fused tanh-GELU kernel (gelu_pytorch_tanh);
// gelu_new: HF's NewGELU written in Python ops (8 elementwise kernels, as GPT-2 runs it);
// relu; silu: SwiGLU when the MLP is gated.
enum class Activation { gelu, gelu_tanh, gelu_new, relu, silu };
enum class PositionKind { learned, rotary };

struct TransformerConfig {
  std::string name;  // built-in name or the config file
  Family family = Family::gpt2;
  int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0;
  int64_t max_positions = 0;  // context length; default sequence
  int64_t type_vocab = 0;     // BERT token-type embeddings
  bool causal = true;         // decoder (causal) or encoder (bidirectional)
  bool gated_mlp = false;     // SwiGLU-style gate/up/down
  Activation act = Activation::gelu;
  NormKind norm = NormKind::layer;
  PositionKind positions = PositionKind::learned;
  int64_t position_offset = 0;  // OPT's learned positions start at 2
  bool bias = true;             // linear layers carry bias (addmm) or not (mm)
  bool qkv_bias = false;        // q/k/v carry a bias even where `bias` is false (Qwen2)
  // RMSNorm of the queries and keys before rotary (Qwen3: over each head, width head_dim; OLMoE:
  // over the whole projection). Each has a weight of its width.
  enum class QkNorm { none, per_head, whole } qk_norm = QkNorm::none;
  int64_t head_size = 0;        // 0: hidden / heads; else heads x head_size need not be hidden (Qwen3, Mistral-Nemo)
  bool tied_embeddings = true;  // LM head shares the word-embedding matrix
  double hidden_dropout = 0.1, attention_dropout = 0.1;
  int64_t num_labels = 2;  // classifier head
  DType default_dtype = DType::fp32;
  // Mixture of experts (0 experts: a dense MLP). Every layer's MLP is a router over `experts`
  // SwiGLU experts of `expert_ffn`, each token through `experts_per_token` of them (top-k, its
  // weights renormalized to sum 1 where `norm_topk`), plus, where `shared_expert_ffn` > 0, an
  // always-on shared expert behind a sigmoid gate (Qwen2-MoE).
  int64_t experts = 0, experts_per_token = 0, expert_ffn = 0, shared_expert_ffn = 0;
  bool norm_topk = true;
  bool shared_expert_gated = true;  // Qwen2-MoE's sigmoid gate; DeepSeek's shared experts have none
  // Layers whose MLP stays dense, of `ffn`, wherever they sit (DeepSeek's first_k_dense_replace and
  // moe_layer_freq, Qwen's decoder_sparse_step and mlp_only_layers, Llama 4's interleaving).
  int64_t dense_layers = 0;
  // Of those, the ones before the first expert layer (DeepSeek-V3's and GLM-4.5's first k): under
  // pipeline stages they sit on the first stage, and the other stages hold expert layers only.
  int64_t leading_dense_layers = 0;
  // How a token's experts and their weights are chosen: softmax over all experts, then top-k
  // (Mixtral, Qwen); sigmoid scores, then top-k (DeepSeek-V3); top-k of the logits, then a sigmoid
  // of the chosen ones (Llama 4) or a softmax over them (GPT-OSS).
  enum class Router { softmax_topk, sigmoid, topk_sigmoid, topk_softmax } router = Router::softmax_topk;
  // DeepSeek: a per-expert bias for the choice (noaux_tc), the experts chosen within the best
  // `topk_groups` of `expert_groups` groups. GPT-OSS: the router's linear layer and every expert's
  // two projections carry biases.
  bool router_bias = false, gate_bias = false, expert_bias = false;
  int64_t expert_groups = 1, topk_groups = 1;
  // HF's eager experts: a loop over the chosen experts (Mixtral, Qwen, DeepSeek), every expert on
  // every token as batched GEMMs over all experts, their scores zeroing the unchosen (Llama 4), or
  // that only when not training (GPT-OSS, which loops in training).
  enum class EagerExperts { loop, all, all_in_inference } eager_experts = EagerExperts::loop;
  // GPT-OSS: the gated activation clamps gate and up, gate * sigmoid(1.702 gate) * (up + 1); and
  // attention adds a learned sink logit per head to each softmax row.
  bool clamped_swiglu = false, attention_sinks = false;
  // Narrow inference (--dtype fp8 / fp4) quantizes only a mixture's experts, the checkpoint's other
  // projections staying 16-bit: GPT-OSS's published MXFP4 checkpoints (quantization_config
  // modules_to_not_convert: self_attn, mlp.router, embed_tokens, lm_head), or a config that says so.
  bool quantized_experts_only = false;
  // Phi-3 / Phi-4: q, k and v as one projection (qkv_proj) and gate and up as one (gate_up_proj),
  // split by views: one GEMM each, and no gradient accumulation of their shared input.
  bool fused_qkv = false, fused_gate_up = false;
  // Multi-head latent attention (DeepSeek-V2/V3; kv_lora_rank > 0): q through a rank-q_lora_rank
  // bottleneck (0: one projection), every head's k and v from a rank-kv_lora_rank latent, plus one
  // rotary key of qk_rope_dim shared by the heads; q.k over qk_nope_dim + qk_rope_dim, v of v_head_dim.
  int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_dim = 0, qk_rope_dim = 0, v_head_dim = 0;
  bool mla() const { return kv_lora_rank > 0; }
  // Gemma: the embedding scaled by sqrt(hidden); Gemma 2/3 norm each sub-block's output too
  // ("sandwich": four RMSNorms per layer) and may soft-cap attention scores and the final logits
  // (cap * tanh(x / cap); 0: none).
  bool embed_scale = false, sandwich_norm = false;
  double attn_softcap = 0, final_softcap = 0;
  // Sliding-window attention: `local_layers` of the layers attend to the last `sliding_window` keys
  // only (0: none; Mistral, Phi-3: every layer; Gemma 2: every other; Gemma 3: five of six).
  int64_t sliding_window = 0, local_layers = 0;
  std::vector<std::string> notes;  // the scope notes Footprint::notes passes on (left-out encoders, look-alikes)
  std::string source;              // the config's `_name_or_path` (the Hub repository it came from), if any
  // Llama 4 (HF Llama4TextModel): rotary through complex multiplication (fp32 casts around it), on
  // `rope_fraction` of the layers (the others NoPE, whose queries get the temperature scaling where
  // `temperature_tuning`); an L2 norm (no weight) of q and k on the rotary layers where `qk_l2_norm`;
  // softmax in the model's dtype (no fp32 upcast). Chunked attention: layers attend within
  // `attention_chunk` tokens (longer sequences are refused).
  bool complex_rotary = false, temperature_tuning = false, qk_l2_norm = false, fp32_softmax = true;
  double rope_fraction = 1;
  int64_t attention_chunk = 0;
  // Partial rotary (HF's partial_rotary_factor, MiniMax's rotary_dim): the positions rotate only the
  // first rotary_dim_fraction x head_dim dimensions of each q and k head; the rest pass through and
  // a cat joins the two (GLM-4.5, MiniMax-M2, Phi-4-mini).
  double rotary_dim_fraction = 1;
  // Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5: layer_types' linear_attention, else all but
  // every full_attention_interval-th layer): `linear_layers` of the layers replace softmax attention
  // by in_proj_qkvz / in_proj_ba, a depthwise causal conv of `lin_conv` taps over q|k|v, the chunked
  // delta rule over lin_v_heads heads (q and k of lin_k_dim from lin_k_heads, repeated to them; v of
  // lin_v_dim), a gated RMSNorm and out_proj; a recurrent state of lin_k_dim x lin_v_dim per head
  // (`lin_state_bytes` an element) instead of a KV cache. The full-attention layers of these models
  // gate their output (`attn_output_gate`: q_proj twice as wide, out * sigmoid(gate)).
  int64_t linear_layers = 0, lin_k_heads = 0, lin_v_heads = 0, lin_k_dim = 0, lin_v_dim = 0, lin_conv = 4;
  double lin_state_bytes = 4;
  bool attn_output_gate = false;
  int64_t lin_key_width() const { return lin_k_heads * lin_k_dim; }
  int64_t lin_value_width() const { return lin_v_heads * lin_v_dim; }
  int64_t lin_conv_width() const { return 2 * lin_key_width() + lin_value_width(); }  // q | k | v

  int64_t head_dim() const { return head_size ? head_size : hidden / heads; }
  int64_t q_width() const { return heads * head_dim(); }  // the query projection's output, attention's width
  // Parameters of the model as published: embeddings, layers, final norm, the BERT pooler, and an
  // untied LM head for decoders (tied heads share the embedding and are not counted twice).
  double parameter_count() const;
  // Parameters one token runs through (differs from parameter_count for mixtures of experts):
  // every expert but the chosen experts_per_token left out.
  double active_parameter_count() const;
  // Checks the numbers are positive and consistent; `where` names the source in errors.
  void validate(const std::string& where) const;
};

// Built-in transformer configs by name (bert-large, gpt2-large, gpt3-xl, gpt3-2.7b, opt-1.3b,
// llama2-7b, llama3-8b); nullptr when not a built-in transformer.
const TransformerConfig* find_builtin_transformer(const std::string& name);
const std::vector<std::pair<TransformerConfig, std::string>>& builtin_transformers();

// The config zoo: Hugging Face config.json files of published models, data/synth/NAME.json
// (embedded; $KCAST_DATA_DIR/synth/NAME.json takes precedence or adds models), synthesized by NAME.
// nullptr-like empty optional when NAME has no file.
std::optional<TransformerConfig> zoo_config(const std::string& name);
// The embedded zoo's model names, sorted.
std::vector<std::string> zoo_models();

// Reads a Hugging Face-style config.json. Errors name the file and the key.
TransformerConfig read_hf_config(const std::string& path);
TransformerConfig parse_hf_config(const std::string& json_text, const std::string& file);

// Applies the architecture overrides of `opt` (layers, hidden, ...) and validates.
TransformerConfig with_overrides(TransformerConfig cfg, const SynthOptions& opt);

std::vector<Kernel> synthesize_transformer(const TransformerConfig& cfg, const SynthOptions& opt,
                                           Footprint* footprint = nullptr);

}  // namespace kcast::synth

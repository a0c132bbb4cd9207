// ActivationMemory (activation_memory.h): the activation terms of synth's memory line.
#include "predict/synth/activation_memory.h"

#include <algorithm>

#include "predict/synth/recompute_modules.h"

namespace kcast::synth {

// ---- activation memory (training) ------------------------------------------------------
// What autograd keeps from the forward for the backward, for one micro-batch on this GPU (the
// last pipeline stage's layers and head: 1F1B runs one micro-batch there at a time), counted as
// Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models") count
// it, tensor by tensor, for the ops synth emits: every GEMM's activation input, the inputs or
// outputs each non-GEMM op's backward reads, one byte per element of a dropout mask. A GPT layer
// with fused GELU in 16 bits gives their 34 s b h + 5 a s^2 b (plus the norms' fp32 statistics,
// which they leave out); tensor parallelism splits what they split (10 s b h + 24 s b h / t + ...).
// Not counted: allocator fragmentation, workspaces, transient forward buffers.
//
// Fused kernels keep less (--framework megatron, --compile): a fused RMSNorm its input and fp32 rstd,
// fused RoPE nothing (its backward needs only the angles), a fused SwiGLU its two inputs (the gate's
// and up's outputs), recomputing the rest; under a recipe Transformer Engine's linears keep their
// input's narrow column-wise copy for the weight gradient instead of the BF16 tensor, and its
// cross-entropy computes the gradient in the fp32 softmax it saved. Llama 3 8B, 8192 tokens: 0.99 GB
// a layer with FP8 against 1.81 GB counted op by op as eager PyTorch keeps it.
bool ActivationMemory::fused() const { return o_.framework == Framework::megatron || o_.compile; }

double ActivationMemory::gemm_input_bytes() const {
  if (o_.framework != Framework::megatron) return s_.e;
  switch (o_.recipe) {
    case Recipe::delayed:
    case Recipe::current: return 1.0;
    case Recipe::mxfp8: return 1.0 + 1.0 / 32;   // an E8M0 scale per 32 values
    case Recipe::block: return 1.0 + 4.0 / 128;  // an fp32 scale per 128 values
    case Recipe::nvfp4: return 0.5 + 1.0 / 16;   // an E4M3 scale per 16 values
    case Recipe::none: break;
  }
  return s_.e;
}

double ActivationMemory::norm_saved(double rows, double width) const {
  // LayerNorm: its input and fp32 mean / rstd. HF's eager RMSNorm: x in fp32 (pow and mul), rstd,
  // and the normalized x that the weight multiplies; a fused one: x and rstd.
  if (c_.norm == NormKind::layer) return rows * width * s_.e + 8 * rows;
  if (fused()) return rows * width * s_.e + 4 * rows;
  return rows * width * (4 + s_.e) + 4 * rows;
}

double ActivationMemory::attention_saved() const {
  const double T = s_.T, d = double(s_.d), H = double(s_.H), Hkv = double(s_.Hkv);
  const double kv_heads = s_.flash ? Hkv : H;  // eager attention repeats k and v to every head
  const double q_w = H * double(s_.qkhd), k_w = kv_heads * double(s_.qkhd), v_w = kv_heads * double(s_.vhd);
  // The input norm and the projections' input (its output; under sequence parallelism the shard,
  // gathered again in backward); both on Tn tokens, like the dropout masks and sandwich norms.
  const double Tn = s_.Tn, g = gemm_input_bytes();
  double a = norm_saved(Tn, d) + Tn * d * g;
  if (c_.mla()) {  // the latent path: q_a / kv_a outputs through their norms into q_b / kv_b
    if (c_.q_lora_rank > 0) a += norm_saved(T, double(c_.q_lora_rank)) + T * double(c_.q_lora_rank) * s_.e;
    a += norm_saved(T, double(c_.kv_lora_rank)) + T * double(c_.kv_lora_rank) * s_.e;
  }
  if (c_.qk_norm != TransformerConfig::QkNorm::none)
    a += norm_saved(T, double(s_.qd)) + norm_saved(T, Hkv * double(s_.hd));
  // Rotary (q cos + rotate_half(q) sin): its two products keep q and rotate_half(q), likewise k,
  // over the rotary width (latent attention: each head's rope part of q, one shared rope key).
  const double rotary_k = c_.mla() ? double(s_.hd) : Hkv * double(s_.hd);
  if (c_.positions == PositionKind::rotary && !fused())
    a += 2 * T * (H * double(s_.hd) + rotary_k) * c_.rope_fraction * s_.e;
  // q, k and v as attention reads them; Megatron's mla_up_proj recomputes them from the latents kept above.
  if (!(c_.mla() && o_.recomputes(kRecomputeMlaUpProj))) a += T * (q_w + k_w + v_w) * s_.e;
  const double P = double(s_.B) * H * double(s_.S) * double(s_.Sk);  // eager: every score is materialized
  if (s_.flash) {
    a += T * double(s_.od) * s_.e + double(s_.B) * H * double(s_.S) * 4;  // its output and log-sum-exp
    if (g != s_.e) a += T * double(s_.od) * g;  // out_proj's narrow copy of that output
  } else {
    const bool upcast = s_.softmax_upcast;
    const bool drop = c_.attention_dropout > 0;
    // Selective recomputation keeps none of the scores (q, k and v above are its inputs).
    const double kept = o_.selective_recompute ? 0 : P;
    if (c_.attn_softcap > 0) a += kept * s_.e;       // tanh keeps its output
    a += kept * (upcast ? 4 : s_.e);                 // softmax keeps its output
    if (upcast || drop) a += kept * s_.e;            // the probabilities p.v reads (cast, dropped out)
    if (drop) a += kept;                           // dropout's mask
    a += T * double(s_.od) * s_.e;                     // out_proj's input
  }
  if (c_.hidden_dropout > 0) a += Tn * d;       // the residual dropout's mask
  if (c_.sandwich_norm) a += norm_saved(Tn, d);
  return a;
}

// A gated MLP of width F over `rows` tokens: gate's output (the activation's input), the activation
// and up outputs (the product's inputs), the product (down's input). Fused: the gate's and up's
// outputs, and the product as down keeps it.
double ActivationMemory::gated_saved(double rows, double F) const {
  if (fused()) return rows * F * (2 * s_.e + gemm_input_bytes());
  return 4 * rows * F * s_.e;
}

// Megatron's --recompute-modules (recompute_modules.h) free what a module alone kept: moe_act the
// activation's output (fc2's input), layernorm a mixture layer's pre-MLP norm output, shared_experts
// and mlp everything past their input.
double ActivationMemory::mlp_saved(bool dense_mlp) const {
  const double T = s_.T, d = double(s_.d);
  const double Tn = s_.Tn, g = gemm_input_bytes();
  const bool mixture = c_.experts > 0 && !dense_mlp;
  // the post-attention norm and the MLP's input
  double a = norm_saved(Tn, d) + (mixture && o_.recomputes(kRecomputeLayernorm) ? 0 : Tn * d * g);
  if (mixture) {
    const double E = double(c_.experts), Fe = double(c_.expert_ffn / s_.etp), Tm = s_.Tmoe;
    using X = TransformerConfig::EagerExperts;
    const bool all = c_.eager_experts == X::all;  // every expert on every token
    const double Tk = all ? Tm * E : Tm * double(c_.experts_per_token);
    a += Tm * E * 4;  // the router's fp32 probabilities
    a += Tk * d * g;  // each routed token's gathered input
    a += o_.recomputes(kRecomputeMoeAct) ? Tk * Fe * 2 * s_.e : gated_saved(Tk, Fe);  // its expert
    // The expert outputs the routing weights multiply, for the weights' gradient; Megatron-Core applies
    // the weights inside the gated activation instead (weighted_bias_swiglu_impl, TEGroupedMLP), which
    // keeps them (fp32), and its unpermutation keeps nothing.
    a += o_.framework == Framework::megatron ? Tk * 4 : Tk * d * s_.e;
    if (c_.shared_expert_ffn > 0 && !o_.recomputes(kRecomputeSharedExperts))
      a += gated_saved(Tm, double(c_.shared_expert_ffn / s_.etp)) + 4 * Tm;
  } else if (o_.recomputes(kRecomputeMlp)) {
    // the dense MLP runs again from its input (counted above)
  } else if (c_.gated_mlp) {
    a += gated_saved(T, double(s_.F));
  } else {
    // fc1's output (the activation's input) and the activation's output (fc2's input); HF's
    // op-by-op gelu_new keeps x, tanh's output, 0.5 x and 1 + tanh (four tensors) and writes a fifth.
    a += T * double(s_.F) * s_.e * (c_.act == Activation::gelu_new ? 5 : 2);
  }
  if (c_.hidden_dropout > 0) a += Tn * d;
  if (c_.sandwich_norm) a += norm_saved(Tn, d);
  return a;
}

// torchtitan's per-op policy (transformer_synth.cc, torchtitan_op_sac): the layer's input, the outputs
// of q, v, gate and down (every other matmul) and of the fused attention with its log-sum-exp. Llama 3
// 8B at 2 x 8192 tokens: 1.04 GB a layer, against 3.6 GB without checkpointing.
double ActivationMemory::op_sac_saved() const {
  const double T = s_.T, Tn = s_.Tn, d = double(s_.d), e = s_.e;
  const double q = T * double(s_.H) * double(s_.qkhd), v = T * double(s_.Hkv) * double(s_.vhd);
  const double attention = T * double(s_.od) + double(s_.B) * double(s_.H) * double(s_.S) * 4 / e;
  return (Tn * d + q + v + T * double(s_.F) + Tn * d + attention) * e;
}

// One micro-batch's layers on this stage (with full recomputation: their inputs, plus the whole
// activations of the one layer being recomputed; torchtitan's per-op policy likewise, keeping more).
// Megatron's block method (--recompute-layers N) recomputes the first N layers of each of the stage's
// chunks: they keep their inputs, the rest everything (the backward reaches the recomputed ones after the
// others have freed theirs, so no layer's whole activations come on top).
double ActivationMemory::layer_activation_bytes() const {
  return kept_layer_bytes() + recompute_transient_bytes();
}

double ActivationMemory::recomputed_layers() const {
  if (!o_.recompute) return 0;
  const double L = s_.stage_layers;
  return o_.recompute_layers > 0 ? std::min(L, double(o_.recompute_layers * o_.virtual_stages)) : L;
}

// (Sliding-window layers keep the same tensors: eager attention materializes every score.)
double ActivationMemory::stage_layers_saved() const {
  const double dense = s_.stage_dense_layers, L = s_.stage_layers;
  return (L - dense) * (attention_saved() + mlp_saved(false)) + dense * (attention_saved() + mlp_saved(true));
}

double ActivationMemory::kept_layer_bytes() const {
  const double L = s_.stage_layers;
  if (o_.torchtitan_op_sac()) return L * op_sac_saved();
  const double r = recomputed_layers();
  // Offloading's layers leave the GPU once copied (recomputation and offloading exclude each other).
  const double offloaded = std::min(L, double(o_.cpu_offload_layers));
  return (L > 0 ? (L - r - offloaded) / L * stage_layers_saved() : 0) + r * s_.Tn * double(s_.d) * s_.e;
}

double ActivationMemory::offloaded_layer_bytes() const {
  return s_.stage_layers > 0 ? stage_layers_saved() / s_.stage_layers : 0;
}

double ActivationMemory::recompute_transient_bytes() const {
  // Only while every layer of the stage is recomputed (the block method's others keep theirs anyway).
  if (!o_.torchtitan_op_sac() && (!o_.recompute || recomputed_layers() < s_.stage_layers)) return 0;
  return attention_saved() + mlp_saved(s_.stage_dense_layers >= s_.stage_layers);
}

// Embeddings: BERT's LayerNorm, the embedding dropout's mask (GPT-2, BERT).
double ActivationMemory::embedding_activation_bytes() const {
  double a = 0;
  if (c_.family == Family::bert) a += norm_saved(s_.Tn, double(s_.d));
  if (c_.hidden_dropout > 0 && (c_.family == Family::bert || c_.family == Family::gpt2)) a += s_.Tn * double(s_.d);
  return a;
}

// Head: the final norm, the LM head's (or MLM decoder's) input, and the loss's fp32 log-probabilities.
double ActivationMemory::head_activation_bytes() const {
  const double T = s_.T, d = double(s_.d), V = double(s_.V);
  double a = c_.family != Family::bert ? norm_saved(s_.Tn, d) : 0;
  if (s_.head == HeadKind::lm) {
    a += T * d * s_.e;
    if (c_.final_softcap > 0) a += T * V * s_.e;
  } else if (s_.head == HeadKind::pretraining) {
    a += 3 * T * d * s_.e + norm_saved(T, d);  // transform dense and GELU inputs, decoder input; its LayerNorm
  }
  // The loss keeps fp32 log-probabilities; Megatron's fused cross-entropy (Transformer Engine's,
  // cross_entropy_loss_fusion as the recipes set it) computes the gradient in its forward and writes
  // it over the 16-bit logits instead, which is all it keeps.
  if (o_.loss && (s_.head == HeadKind::lm || s_.head == HeadKind::pretraining))
    a += T * V * (o_.framework == Framework::megatron ? s_.e : 4);
  return a;
}

// The loss's backward over the vocabulary: nll_loss's gradient of the fp32 log-probabilities and
// log_softmax's gradient of the fp32 logits, both [tokens, vocabulary] and alive together beside
// the kept log-probabilities (head_activation_bytes): 8 bytes per logit. (The cast of that gradient
// back to 16 bits comes after the first is freed: 6.)
// Megatron's fused cross-entropy wrote that gradient in its forward over the logits it keeps
// (head_activation_bytes): nothing new.
double ActivationMemory::loss_transient_bytes() const {
  if (!o_.loss || (s_.head != HeadKind::lm && s_.head != HeadKind::pretraining)) return 0;
  if (o_.framework == Framework::megatron) return 0;
  return 8 * s_.T * double(s_.V);
}

// This GPU's figure: with pipeline stages the last one's (its layers and the head; 1F1B runs one
// micro-batch there at a time).
double ActivationMemory::activation_bytes() const {
  return layer_activation_bytes() + head_activation_bytes() + (o_.pp > 1 ? 0 : embedding_activation_bytes());
}

// The micro-batches whose activations the first of several pipeline stages holds at once: 1F1B
// starts min(micro-batches, stages) forwards there before the first backward returns; interleaved,
// Megatron-LM's warm-up starts (v pp + pp - 1) chunk forwards (Korthikanti et al. 2022: 1 + (pp - 1)
// / (pp v) times the pp micro-batches of plain 1F1B).
double ActivationMemory::first_stage_microbatches() const {
  const double v = double(o_.virtual_stages), m = double(o_.microbatches), pp = double(o_.pp);
  return v > 1 ? std::min(m * v, v * pp + pp - 1) / v : std::min(m, pp);
}

// The first of several pipeline stages: those micro-batches' layers, and it holds the embeddings.
double ActivationMemory::first_stage_activation_bytes() const {
  if (o_.pp <= 1) return 0;
  const double in_flight = first_stage_microbatches();
  // Checkpointed: each micro-batch keeps what the policy saves; one layer's whole activations at a time.
  return in_flight * (kept_layer_bytes() + embedding_activation_bytes()) + recompute_transient_bytes();
}

// ---- transient memory (inference) -------------------------------------------------------
// Without autograd PyTorch frees each tensor with its last reference, so a forward's activations
// are what one layer holds at its busiest op, not a sum over layers: the residual stream and the
// norm's output beside the largest of eager attention at its softmax (q, k, v — k and v copied to
// every head where GQA shares them, HF's repeat_kv — and the scores in and out, HF's fp32 copy and
// result where it upcasts), a fused attention's output, the MLP at its product (act(gate), up and
// the product; fc1's and the activation's outputs, GELU-new's op-by-op temporaries; a mixture's
// routed tokens as the fused MoE kernels' intermediate buffers hold them), an eager RMSNorm's fp32
// copies, and the head's logits. Decoding, k and v come from the cache (counted apart) and only
// their per-head copies are new. An estimate: the caching allocator's fragmentation and cuBLAS /
// attention workspaces are not counted.
double ActivationMemory::inference_peak_bytes() const {
  const double T = s_.T, d = double(s_.d), H = double(s_.H), Hkv = double(s_.Hkv), e = s_.e;
  const double keys = double(s_.B) * double(s_.Sk), kv_w = double(s_.qkhd + s_.vhd);
  const double stream = 2 * T * d * e;
  double kv = s_.decode ? 0 : keys * Hkv * kv_w * e;          // the k and v projections' outputs
  if (!s_.flash && H != Hkv) kv += keys * H * kv_w * e;       // repeat_kv's per-head copies
  const double q = T * H * double(s_.qkhd) * e;
  const double P = double(s_.B) * H * double(s_.S) * double(s_.Sk);
  const double attention = q + kv + (s_.flash ? T * double(s_.od) * e : P * (s_.softmax_upcast ? e + 8 : 2 * e));
  double mlp = 0;
  if (c_.experts > 0) {
    // HF's eager code runs some mixtures' every expert on every token at inference (GPT-OSS, Llama 4);
    // the fused kernels (vLLM's fused_moe, TensorRT-LLM's) hold the routed rows only.
    const bool every_expert = !s_.fused_experts && c_.eager_experts != TransformerConfig::EagerExperts::loop;
    const double Tk = T * double(every_expert ? c_.experts : c_.experts_per_token);
    mlp = T * double(c_.experts) * 4 + Tk * d * e + 3 * Tk * double(c_.expert_ffn / s_.tp) * e;
  }
  const double dense_act = c_.gated_mlp ? 3 : c_.act == Activation::gelu_new ? 3 : 2;
  if (c_.experts == 0 || c_.dense_layers > 0) mlp = std::max(mlp, dense_act * T * double(s_.F) * e);
  // HF's eager RMSNorm holds fp32 copies; a serving stack's fused norm none.
  const double norm = c_.norm == NormKind::layer || s_.serving ? 0 : 8 * T * d;
  // Logits: every token's in eager, the sampled tokens' in serving (a prompt's last), beside the
  // sampler's fp32 copy and probabilities.
  const double logit_rows = s_.serving && !s_.decode ? double(s_.B) : T;
  const double head = s_.head == HeadKind::lm
                          ? logit_rows * double(s_.V) * (e * (c_.final_softcap > 0 ? 2 : 1) + (s_.serving ? 8 : 0))
                          : 0;
  return stream + std::max({attention, mlp, norm, head});
}

}  // namespace kcast::synth

// Transformer kernel lists as PyTorch eager runs the Hugging Face implementations (BERT, GPT-2,
// OPT, LLaMA families). One layer's rows carry count = layers. Choices, checked against the
// NeuSight torch.fx graphs (per-node latencies of the HF models, PyTorch 2.1):
// This file walks one layer (attention, MLP or experts, norms and residuals: the other files of
// this folder) and assembles the step: embeddings, the repeated layer sections, the head and
// loss, and the pipeline schedule's critical path; and the step's memory footprint.
//  - Pipeline parallelism: layers / pp per stage; with m micro-batches the last stage (which holds
//    the head) is busy (m + pp - 1) micro-batch times of its layers — the schedule's fill and
//    drain — plus m of the head and loss, and the critical path crosses a stage boundary
//    pp + m - 2 times each way (point-to-point activation and gradient sends). With v virtual
//    stages (interleaved 1F1B) the path is m v + pp - 1 chunk times of layers / (pp v) layers, and
//    m v + pp - 2 crossings (Narayanan et al. 2021).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/error.h"
#include "predict/synth/pipeline_layout.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer/option_checks.h"
#include "predict/synth/transformer/transformer_synth.h"
#include "predict/synth/transformer/moe_dispatch.h"

namespace kcast::synth {

namespace transformer {

TransformerSynth::TransformerSynth(const TransformerConfig& c, const SynthOptions& o)
    : c_(c), o_(o), train_(o.mode == Mode::train), decode_(o.mode == Mode::decode) {
  dt_ = o.dtype.value_or(c.default_dtype);
  // FP8 / FP4 serving (vLLM/sglang FP8 checkpoints, NVFP4 ModelOpt ones): the blocks' projections
  // run scaled GEMMs on narrow weights, each after quantizing its BF16 input; everything else
  // stays BF16.
  // Training with FP8 / FP4 runs the block projections' GEMMs by a recipe (recipe.h), the rest BF16.
  if (train_ && o.recipe != Recipe::none) recipe_ = recipe_kernels(o.recipe);
  if (!train_ && dt_ == DType::fp8) quant_ = &kFp8Kernels;
  if (!train_ && dt_ == DType::fp4) quant_ = &kFp4Kernels;
  if (quant_ || recipe_) dt_ = DType::bf16;
  megatron_ = o.framework == Framework::megatron;
  stage_layers_ = double(critical_stage_layers(pipeline_layout(c, o), o.pp));
  fused_ = megatron_ || o.compile;
  e_ = dtype_bytes(dt_);
  kv_e_ = o.kv_cache_dtype ? dtype_bytes(*o.kv_cache_dtype) : e_;
  tp_ = o.tp;
  B_ = (o.batch ? o.batch : 1) / (o.dp * o.microbatches);  // one micro-batch of one replica
  // Keys each query attends to; by default the context (one chunk of chunked attention).
  Sk_ = o.seq ? o.seq : c.attention_chunk > 0 ? std::min(c.max_positions, c.attention_chunk) : c.max_positions;
  S_ = decode_ ? o.decode_tokens : Sk_ / o.cp;  // queries (new tokens) per sequence on this GPU
  T_ = double(B_) * double(S_);
  Tn_ = o.sequence_parallel ? T_ / double(o.tp) : T_;
  if (o.sequence_parallel && std::fmod(T_, double(o.tp)) != 0)
    throw InputError("option '--sequence-parallel': the " + std::to_string(int64_t(T_)) +
                     " tokens of a micro-batch do not split over the " + std::to_string(o.tp) +
                     " tensor-parallel GPUs");
  d_ = c.hidden;
  qd_ = c.q_width() / tp_;
  H_ = c.heads / tp_;
  // Serving stacks replicate the key/value heads when the tensor-parallel GPUs outnumber them (vLLM:
  // each GPU holds one; the check below allows it outside training).
  Hkv_ = c.kv_heads >= tp_ ? c.kv_heads / tp_ : 1;
  hd_ = c.head_dim();
  qkhd_ = vhd_ = hd_;
  od_ = qd_;
  if (c.mla()) {
    // Per head: q.k over the non-rotary and rotary parts, v apart; the rotary table is qk_rope wide.
    qkhd_ = c.qk_nope_dim + c.qk_rope_dim;
    vhd_ = c.v_head_dim;
    hd_ = c.qk_rope_dim;
    qd_ = H_ * qkhd_;
    od_ = H_ * vhd_;
  }
  F_ = c.ffn / tp_;
  V_ = (c.vocab + tp_ - 1) / tp_;
  head_ = o.head;
  if (head_ == HeadKind::automatic) {
    head_ = c.family == Family::bert ? (train_ ? HeadKind::pretraining : HeadKind::classifier) : HeadKind::lm;
  }
  serving_ = o.runtime == Runtime::serving;
  flash_ = o.attention == AttentionImpl::flash || serving_;  // serving stacks always fuse attention
  latent_decode_ = c.mla() && decode_ && flash_;
  // The dimensions of a head the positions rotate (latent attention: its whole rotary part).
  rot_ = c.mla() ? hd_ : int64_t(double(hd_) * c.rotary_dim_fraction);
}

std::vector<Kernel> TransformerSynth::run() {
  const double pp = double(o_.pp), m = double(o_.microbatches), stage_layers = this->stage_layers();
  Section& embed = tape_.section("embed.", 1);
  embeddings(embed);
  // A mixture's dense layers (DeepSeek's first, Qwen's or Llama 4's between), then the expert
  // layers (single stage only).
  const double dense = dense_stage_layers();
  Section* dense_layers = nullptr;
  if (dense > 0) {
    dense_layers = &layer_section(kDenseLayerSection, dense);
    layer(*dense_layers, /*dense_mlp=*/true);
  }
  // Sliding-window layers get their own section where the window is shorter than the keys (else
  // they are full-attention layers); with pipeline stages only where every layer has the window.
  const double local = local_stage_layers(), linear = double(c_.linear_layers);
  const double full = stage_layers - dense - local - linear;
  Section* layers = full > 0 ? &layer_section(kLayerSection, full) : nullptr;
  if (layers) layer(*layers);
  Section* local_layers = local > 0 ? &layer_section(kLocalLayerSection, local) : nullptr;
  if (local_layers) layer(*local_layers, false, c_.sliding_window);
  // (Linear attention is synthesized for one stage's inference: no schedule to follow.)
  Section* linear_layers = linear > 0 ? &layer_section(kLinearLayerSection, linear) : nullptr;
  if (linear_layers) layer(*linear_layers, false, 0, /*linear=*/true);
  const double v = double(o_.virtual_stages);
  if (o_.cpu_offload_layers > 0) cpu_offload(tape_.section("offload.", double(o_.cpu_offload_layers) * m));
  if (o_.pp > 1) stage_sends(tape_.section("pp.", m * v + pp - 2));
  Section& out = tape_.section("head.", 1);
  head(out);
  Section* ce = train_ && o_.loss ? &tape_.section("loss.", 1) : nullptr;
  if (ce) loss(*ce);
  // Multi-token prediction on the last stage: each depth's block and layer, then its head and loss.
  const double mtp = train_ ? double(o_.mtp_layers) : 0;
  Section* mtp_layers = mtp > 0 ? &layer_section(kMtpSection, mtp) : nullptr;
  if (mtp_layers) {
    mtp_depth(*mtp_layers);
    layer(*mtp_layers, /*dense_mlp=*/c_.experts == 0);
  }
  Section* mtp_out = mtp > 0 ? &tape_.section("mtp_head.", mtp) : nullptr;
  if (mtp_out) mtp_head(*mtp_out);
  // The schedule's critical path (header comment). The step's parameters are the last stage's:
  // with pipeline stages the embedding lives on the first, and its first micro-batch's lookup is
  // all of it on the path.
  if (layers) layers->count = full / v * (m * v + pp - 1);
  if (local_layers) local_layers->count = local / v * (m * v + pp - 1);
  if (dense_layers) dense_layers->count = dense / v * (m * v + pp - 1);
  out.count = m;
  if (ce) ce->count = m;
  // Off the critical path (a stage with fewer layers holds them) their rows run no launch on it; their
  // weights still count on the last stage.
  const double mtp_runs = mtp_on_critical_path(c_, o_) ? mtp * m : 0;
  if (mtp_layers) mtp_layers->count = mtp_runs;
  if (mtp_out) mtp_out->count = mtp_runs;
  embed.count = o_.pp > 1 ? 1 : m;
  if (o_.pp > 1) embed.weights = 0;
  recipe_weights();
  return tape_.assemble(o_, dt_);
}

// Megatron-LM's CPU activation offloading (Transformer Engine's offload context): in each offloaded
// layer's forward what it keeps for the backward goes to host memory, a copy over the host link on
// its own stream; in the backward it comes back, prefetched a layer ahead. One run per offloaded layer
// and micro-batch; synth_step_parts.cc hides them behind the layers' compute.
void TransformerSynth::cpu_offload(Section& s) {
  s.weights = 0;
  const double bytes = ActivationMemory(c_, o_, shape()).offloaded_layer_bytes();
  s.op(work(std::string(kCpuOffloadName) + " [CUDA memcpy Device-to-Host]", KernelClass::memcpy, dt_, 0, bytes),
       {work(std::string(kCpuOffloadName) + " reload [CUDA memcpy Host-to-Device]", KernelClass::memcpy, dt_, 0, bytes)});
}

// Eager attention's softmax runs in fp32 on 16-bit scores (HF's Llama family; OPT in fp16), then
// casts back.
bool TransformerSynth::softmax_upcast() const {
  return e_ != 4 &&
         ((c_.family == Family::llama && c_.fp32_softmax) || (c_.family == Family::opt && dt_ == DType::fp16));
}

// A section of repeated layers: with --recompute full, its forward runs again before its backward;
// with --recompute-layers N, that of the first N layers of each pipeline chunk, taken in the same share
// from every kind of layer the stage holds.
Section& TransformerSynth::layer_section(const char* prefix, double count) {
  Section& s = tape_.section(prefix, count);
  s.recompute = o_.recompute;
  if (o_.recompute && o_.recompute_layers > 0 && stage_layers_ > 0)
    s.recompute_share = std::min(1.0, double(o_.recompute_layers * o_.virtual_stages) / stage_layers_);
  return s;
}

Footprint TransformerSynth::footprint() const {
  Footprint f = tape_.footprint(o_, dt_, quant_params_, quant_ ? quant_->dtype : dt_);
  // Every decoding sequence's K and V for its seq keys, in each of this GPU's layers.
  // Latent decoding caches one [latent | rotary key] row per token, shared by the heads (and so
  // whole on every tensor-parallel GPU).
  const double per_token = latent_decode_ ? double(c_.kv_lora_rank + c_.qk_rope_dim) : double(Hkv_ * (qkhd_ + vhd_));
  // Sliding-window layers keep only the window (HF's HybridCache, serving stacks' paged caches).
  const double local = local_stage_layers();
  const double linear = double(c_.linear_layers);
  const double cached_keys = (stage_layers() - local - linear) * double(Sk_) + local * double(c_.sliding_window);
  if (decode_) f.kv_cache_bytes = double(B_) * double(o_.microbatches) * cached_keys * per_token * kv_e_;
  // Linear-attention layers keep, per sequence, each head's recurrent state and the conv's last taps.
  if (decode_ && linear > 0)
    f.kv_cache_bytes += double(B_) * double(o_.microbatches) * linear * linear_state_bytes_per_sequence();
  f.batch_sequences = double(B_);
  f.step_tokens = double(B_) * double(o_.microbatches) * double(o_.dp) * double(decode_ ? S_ : Sk_);
  f.weight_bytes += absorbed_copy_bytes_;
  f.layers = stage_layers();
  if (c_.attention_chunk > 0) {
    f.attention_chunk = c_.attention_chunk;
    f.chunked_attention_share = c_.complex_rotary ? c_.rope_fraction : 1.0;  // Llama 4: its rotary layers
  }
  if (train_) {
    f.forward_rows = tape_.forward_rows();
    f.model_flops_per_token = model_flops_per_token();
    // Megatron's get_hidden_bytes: the hidden width at no less than 2 bytes an element.
    if (c_.experts > 0) f.dispatch_buffer_bytes = dispatch_buffer_bytes(o_.moe_dispatcher, o_.ep, double(d_) * std::max(e_, 2.0));
  }
  // A recipe keeps the narrow row- and column-wise copies of the block weights beside the BF16 ones
  // (TE's cached FP8 / FP4 weights); with FP8 parameters (--fp8-param-gather) instead of them: the
  // module holds the narrow copies only, the fp32 master copy in the optimizer. Fully sharded
  // (--zero 3) a layer's weights exist whole only while gathered, and so do their narrow copies: two
  // layers' worth at a time, as the gathered weights themselves (Tape::footprint).
  if (recipe_) {
    const double narrow = o_.zero >= 3 ? 2 * recipe_layer_elems_ : recipe_weight_elems_;
    f.weight_bytes += narrow * (recipe_->stored_bytes_per_elem - (o_.fp8_param_gather ? e_ : 0.0));
  }
  const ActivationMemory activations(c_, o_, shape());
  if (!train_) {
    f.activation_bytes = activations.inference_peak_bytes();
    f.activations_transient = true;
  }
  if (train_) {
    f.activation_bytes = activations.activation_bytes();
    f.offloaded_activation_bytes = double(o_.cpu_offload_layers) * activations.offloaded_layer_bytes();
    f.first_stage_activation_bytes = activations.first_stage_activation_bytes();
    f.loss_transient_bytes = activations.loss_transient_bytes();
    if (o_.pp > 1) f.first_stage_microbatches = activations.first_stage_microbatches();
  }
  return f;
}

// Megatron-LM's model FLOPs of one trained token (Footprint::model_flops_per_token): forward and
// backward (3 x 2 FLOPs a weight) through every projection a token passes (routed experts only; the LM
// head, not the embedding lookup), and causal attention's q.k and p.v over half the sequence on
// average (bidirectional encoders: all of it). Checked against Megatron-Bridge's published model
// TFLOP/s per GPU over tokens/s per GPU: Llama 3 8B 1.000, 70B 0.999, 3.1 405B 0.999 (training.csv).
double TransformerSynth::model_flops_per_token() const {
  const double V = double(c_.vocab), d = double(c_.hidden);
  const double positions = c_.positions == PositionKind::learned ? double(c_.max_positions + c_.position_offset) : 0;
  const double lookups = (V + positions + double(c_.type_vocab)) * d;  // tables a token reads, not multiplies
  const double projections = c_.active_parameter_count() - lookups + (c_.tied_embeddings ? V * d : 0);
  const double seq = double(Sk_), keys = c_.causal ? seq / 2 : seq;
  const double qk_width = double(c_.heads) * double(qkhd_ + vhd_) / 2;  // (q.k + p.v) / 2 per head
  return 6 * projections + 12 * double(c_.layers) * keys * qk_width;
}

double TransformerSynth::dense_stage_layers() const {
  if (c_.experts == 0 || c_.dense_layers == 0) return 0;
  if (o_.pp == 1) return double(c_.dense_layers);
  if (c_.leading_dense_layers == c_.dense_layers) return 0;
  return stage_layers() * double(c_.dense_layers) / double(c_.layers);
}

// This GPU's shapes, for the activation estimates (activation_memory.h).
StepShape TransformerSynth::shape() const {
  StepShape s;
  s.B = B_, s.S = S_, s.Sk = Sk_, s.T = T_, s.Tn = Tn_, s.tp = tp_, s.d = d_;
  s.qd = qd_, s.H = H_, s.Hkv = Hkv_, s.hd = hd_, s.qkhd = qkhd_, s.vhd = vhd_, s.od = od_, s.F = F_, s.V = V_;
  s.e = e_, s.flash = flash_, s.decode = decode_, s.softmax_upcast = softmax_upcast(), s.head = head_;
  s.serving = serving_;
  s.fused_experts = quant_ || serving_;  // as mlp_moe.cc emits them
  s.stage_layers = stage_layers();
  s.stage_dense_layers = dense_stage_layers();
  s.Tmoe = moe_tokens();
  s.etp = expert_tp();
  return s;
}

// `dense_mlp`: one of a mixture's dense layers; `window`: a sliding-window layer's.
void TransformerSynth::layer(Section& s, bool dense_mlp, int64_t window, bool linear) {
  if (c_.family == Family::bert) {  // post-norm
    attention(s);
    residual_add(s, "attn.residual");
    norm(s, "attn.LayerNorm", Tn_);
    mlp(s, dense_mlp);
    residual_add(s, "mlp.residual");
    norm(s, "mlp.LayerNorm", Tn_);
    return;
  }
  pre_norm(s, "input_norm");
  if (linear) linear_attention(s);
  else attention(s, window);
  if (c_.sandwich_norm) norm(s, "attn.output_norm", Tn_);  // Gemma 2/3: each sub-block's output normed too
  residual_add(s, "attn.residual");
  const size_t post_norm = s.fwd.size();
  pre_norm(s, "post_attention_norm");
  if (c_.experts > 0 && !dense_mlp) recompute_from(s, post_norm, kRecomputeLayernorm);  // a mixture layer's
  mlp(s, dense_mlp);
  if (c_.sandwich_norm) norm(s, "mlp.output_norm", Tn_);
  residual_add(s, "mlp.residual");
  if (o_.torchtitan_op_sac()) torchtitan_op_sac(s);
}

// torchtitan's `selective_ac_option = "op"` (torchtitan/models/llama3/infra/parallelize.py,
// _apply_ac_to_transformer_block): each layer is checkpointed with a policy that saves the outputs of
// matmuls and of the fused attention, except every second matmul of the layer (its mm counter even:
// k, out_proj, up of q, k, v, out, gate, up, down), and recomputes everything else in backward: the
// norms, rotary, SiLU and product, and those matmuls. Collectives are not run again here.
void TransformerSynth::torchtitan_op_sac(Section& s) const {
  s.recompute_ops.clear();
  s.recompute_rows.clear();
  int64_t mm = 0;  // matmuls launched so far in this layer's forward
  for (size_t i = 0; i < s.fwd.size(); ++i) {
    const Kernel& k = s.fwd[i];
    if (k.cls == KernelClass::attention || k.cls == KernelClass::communication) continue;
    if (k.cls != KernelClass::gemm) {
      s.recompute_ops.push_back(i);
      continue;
    }
    // A row of n launches (k|v, gate|up): those whose count in the layer is even run again.
    const int64_t n = std::max<int64_t>(1, int64_t(std::llround(k.count)));
    int64_t again = 0;
    for (int64_t j = 1; j <= n; ++j) again += (mm + j) % 2 == 0;
    mm += n;
    if (again == n) s.recompute_ops.push_back(i);
    else if (again > 0) s.recompute_rows.push_back(times(k, double(again) / double(n)));
  }
}

}  // namespace transformer

std::vector<Kernel> synthesize_transformer(const TransformerConfig& cfg, const SynthOptions& opt, Footprint* footprint) {
  transformer::check_options(cfg, opt);
  // A serving stack merges q|k|v and gate|up into one projection each.
  TransformerConfig merged = cfg;
  // So do Megatron-LM's linear_qkv and linear_fc1.
  if (opt.runtime == Runtime::serving || opt.framework == Framework::megatron)
    merged.fused_qkv = merged.fused_gate_up = true;
  transformer::TransformerSynth s(merged, opt);
  std::vector<Kernel> out = s.run();
  if (footprint) {
    *footprint = s.footprint();
    footprint->notes = cfg.notes;
    if (const std::string note = pipeline_layout_note(cfg, opt); !note.empty()) footprint->notes.push_back(note);
    // Pipelines over mixed layers: what the critical stage holds (transformer_synth.h).
    if (opt.pp > 1 && cfg.experts > 0 && cfg.dense_layers > 0)
      footprint->notes.push_back(
          cfg.leading_dense_layers == cfg.dense_layers
              ? "pipeline stages: the dense layers (the first " + std::to_string(cfg.dense_layers) + ") sit on the "
                "first stage; the critical stage holds expert layers only (--mtp-layers puts multi-token prediction on the "
                "last stage, with the head)"
              : "pipeline stages: the critical stage holds dense and expert layers in the model's proportion (" +
                    std::to_string(cfg.dense_layers) + " of " + std::to_string(cfg.layers) + " dense)");
    if (opt.mode == Mode::train && opt.mtp_layers > 0 && opt.pp > 1)
      footprint->notes.push_back(
          "multi-token prediction: " + std::to_string(opt.mtp_layers) + " depth(s) on pipeline chunk " +
          std::to_string(opt.pp_layout_mtp_chunk >= 0 ? opt.pp_layout_mtp_chunk : opt.pp * opt.virtual_stages - 1) +
          (mtp_on_critical_path(cfg, opt) ? ", whose stage they make the slowest: on the step's critical path"
                                          : ", whose stage holds fewer layers: off the step's critical path"));
    if (opt.pp > 1 && cfg.local_layers > 0 && cfg.local_layers < cfg.layers &&
        cfg.sliding_window < (opt.seq ? opt.seq : cfg.max_positions))  // where the window bites
      footprint->notes.push_back("pipeline stages: the critical stage holds sliding-window and full-attention layers "
                                 "in the model's proportion (" + std::to_string(cfg.local_layers) + " of " +
                                 std::to_string(cfg.layers) + " sliding)");
    if (opt.torchtitan_op_sac())
      footprint->notes.push_back("--recompute selective: torchtitan's per-op policy keeps each layer's input and the "
                                 "outputs of its fused attention and of every other matmul (q, v, gate, down); the "
                                 "norms, rotary, SiLU and the other matmuls run again in backward");
    else if (opt.selective_recompute && opt.attention == AttentionImpl::flash)
      footprint->notes.push_back("--recompute selective: the fused attention kernel keeps no scores (its backward "
                                 "recomputes them), so nothing is recomputed");
  }
  return out;
}

}  // namespace kcast::synth

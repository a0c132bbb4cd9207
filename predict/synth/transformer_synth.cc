// Transformer kernel lists as PyTorch eager runs the Hugging Face implementations (BERT, GPT-2,
// OPT, LLaMA families). One layer's rows carry count = layers. Choices, checked against the
// NeuSight torch.fx graphs (per-node latencies of the HF models, PyTorch 2.1):
//  - Linear layers are one GEMM with m = batch*seq (addmm with bias fused, mm without); backward is
//    dgrad (m=T, n=in, k=out), wgrad (m=out, n=in, k=T) and a bias-sum reduction.
//  - Eager attention: head split copies (reshape of permuted views inside matmul/view), QK^T bmm,
//    the family's scale (BERT/GPT-2 truediv, LLaMA mul, OPT scales q before), mask (BERT additive
//    [B,1,1,S], GPT-2 torch.where on the causal buffer, OPT additive [B,1,S,S] + clamp max, LLaMA
//    additive [B,1,S,S]), softmax (LLaMA in fp32 + cast back for 16-bit), dropout (training, p>0),
//    PV bmm, merge-heads copy. Flash attention replaces QK^T..PV with one `attention` row.
//  - GPT-2's gelu_new is 8 Python-level elementwise kernels (the graphs show mul, pow, mul, add,
//    mul, tanh, add, mul); BERT's GELU is one erf kernel; OPT uses ReLU; LLaMA SwiGLU = silu + mul.
//  - LLaMA's RMSNorm is HF's Python composite (cast, pow, mean, add, rsqrt, mul, cast, mul).
//  - Dropout launches nothing in inference (the graphs show ~0 ms nodes) nor when p = 0.
//  - Backward: one kernel per differentiable elementwise input, reading grad and saved operand;
//    a gradient-accumulation add wherever a tensor feeds several consumers (residual stream,
//    separate q/k/v projections, gate/up); embedding backward zero-fills the table gradient.
//  - Tensor parallelism as Megatron-LM (Shoeybi et al. 2019): q/k/v and the first MLP projection
//    split their outputs (column parallel), the attention output and the second MLP projection
//    their inputs (row parallel), each GPU holding heads / tp and ffn / tp; after each row-parallel
//    projection an all-reduce of the activations, in backward one before each column-parallel
//    input's gradient leaves the block; norms, residuals and dropout on the hidden state run whole
//    on every GPU. The word embedding and the LM head split the vocabulary (an all-reduce after the
//    lookup; the cross-entropy all-reduces each token's max, target logit and sum).
//  - Decode (one generation step): each of B sequences adds one token (query length 1) attending to
//    the seq keys of its KV cache, which the step writes in place (a static or paged cache, as
//    serving stacks and HF's StaticCache keep it; HF's default DynamicCache re-concatenates it every
//    step, not modelled). K and V are read from the cache: no head-split copies of them, and
//    LLaMA's repeat_kv expands the whole cache. Every projection is a GEMM with m = B.
//  - Pipeline parallelism: layers / pp per stage; with m micro-batches the last stage (which holds
//    the head) is busy (m + pp - 1) micro-batch times of its layers — the schedule's fill and
//    drain — plus m of the head and loss, and the critical path crosses a stage boundary
//    pp + m - 2 times each way (point-to-point activation and gradient sends). With v virtual
//    stages (interleaved 1F1B) the path is m v + pp - 1 chunk times of layers / (pp v) layers, and
//    m v + pp - 2 crossings (Narayanan et al. 2021).
#include <algorithm>
#include <cmath>
#include <string>

#include "model/error.h"
#include "predict/synth/activation_memory.h"
#include "predict/synth/emitter.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth {

namespace {

constexpr KernelClass EW = KernelClass::elementwise;
constexpr const char* kLayerSection = "layer.";  // the repeated block (one layer, count = layers)
constexpr const char* kDenseLayerSection = "dense_layer.";  // a mixture's dense layers, wherever they sit
constexpr const char* kLocalLayerSection = "local_layer.";  // sliding-window layers, where the window bites
constexpr const char* kLinearLayerSection = "linear_layer.";  // Gated DeltaNet layers (Qwen3-Next, Qwen3.5)
bool in_block(const Section& s) {
  return s.prefix == kLayerSection || s.prefix == kDenseLayerSection || s.prefix == kLocalLayerSection ||
         s.prefix == kLinearLayerSection;
}

// Quantized serving (`--dtype fp8` / `fp4`, inference): the kernels a serving stack runs for a
// projection whose weights are stored narrow, and what quantizing its BF16 input costs.
struct QuantKernels {
  DType dtype;
  const char* quantize;  // the activation's quantization kernel
  const char* gemm;      // the scaled GEMM (BF16 C)
  const char* grouped;   // the mixture's grouped expert GEMM
  // Bytes per input element the quantization moves: FP8 reads the BF16 row twice (amax, then scale
  // and cast) and writes FP8; FP4 finds each 16-value block's scale in registers: one read, the 4-bit
  // values and their 8-bit block scales written.
  double bytes_per_elem;
  double bytes_per_row;  // FP8's one FP32 scale per token
};
// FP8: sgl_per_token_quant_fp8 / vLLM's per-token dynamic quant, fp8_scaled_mm, Triton fused_moe.
constexpr QuantKernels kFp8Kernels{DType::fp8, "per_token_quant_fp8", "fp8_scaled_mm", "fused_moe_kernel",
                                   2 + 2 + 1, 4};
// NVFP4 (vLLM's ModelOpt FP4 path on Blackwell): scaled_fp4_quant, cutlass_scaled_fp4_mm and the
// CUTLASS FP4 grouped GEMM of its fused MoE.
constexpr QuantKernels kFp4Kernels{DType::fp4, "scaled_fp4_quant", "cutlass_scaled_fp4_mm", "cutlass_fp4_group_mm",
                                   2 + 0.5 + 1.0 / 16, 0};

Kernel quantize_input(const QuantKernels& q, const std::string& name, double rows, double width,
                      const std::string& what = "") {
  return work(name + " " + q.quantize + what, EW, DType::bf16, 3 * rows * width,
              rows * width * q.bytes_per_elem + q.bytes_per_row * rows);
}

class TransformerSynth {
 public:
  TransformerSynth(const TransformerConfig& c, const SynthOptions& o)
      : c_(c), o_(o), train_(o.mode == Mode::train), decode_(o.mode == Mode::decode) {
    dt_ = o.dtype.value_or(c.default_dtype);
    // FP8 / FP4 serving (vLLM/sglang FP8 checkpoints, NVFP4 ModelOpt ones): the blocks' projections
    // run scaled GEMMs on narrow weights, each after quantizing its BF16 input; everything else
    // stays BF16.
    if (dt_ == DType::fp8) quant_ = &kFp8Kernels;
    if (dt_ == DType::fp4) quant_ = &kFp4Kernels;
    if (quant_) dt_ = DType::bf16;
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

  std::vector<Kernel> run() {
    const double pp = double(o_.pp), m = double(o_.microbatches), stage_layers = this->stage_layers();
    Section& embed = tape_.section("embed.", 1);
    embeddings(embed);
    // A mixture's dense layers (DeepSeek's first, Qwen's or Llama 4's between), then the expert
    // layers (single stage only).
    const double dense = c_.experts > 0 ? double(c_.dense_layers) : 0;
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
    if (o_.pp > 1) stage_sends(tape_.section("pp.", m * v + pp - 2));
    Section& out = tape_.section("head.", 1);
    head(out);
    Section* ce = train_ && o_.loss ? &tape_.section("loss.", 1) : nullptr;
    if (ce) loss(*ce);
    // The schedule's critical path (header comment). The step's parameters are the last stage's:
    // with pipeline stages the embedding lives on the first, and its first micro-batch's lookup is
    // all of it on the path.
    if (layers) layers->count = full / v * (m * v + pp - 1);
    if (local_layers) local_layers->count = local / v * (m * v + pp - 1);
    if (dense_layers) dense_layers->count = dense * m;
    out.count = m;
    if (ce) ce->count = m;
    embed.count = o_.pp > 1 ? 1 : m;
    if (o_.pp > 1) embed.weights = 0;
    return tape_.assemble(o_, dt_);
  }

 private:
  const TransformerConfig& c_;
  const SynthOptions& o_;
  bool train_, decode_;
  DType dt_;
  double e_;
  double kv_e_;  // bytes per element of the KV cache a decode step reads (e_ unless --kv-cache-dtype)
  int64_t B_, S_, Sk_;
  int64_t rot_;  // rotated dimensions of a head (partial rotary: fewer than hd_)
  double T_;
  double Tn_;  // tokens of the ops outside the tensor-parallel regions (T_ / tp under sequence parallelism)
  int64_t tp_;
  int64_t d_, qd_, H_, Hkv_, hd_, F_, V_;  // qd_, H_, Hkv_, F_, V_: this GPU's share under tensor parallelism
  int64_t qkhd_, vhd_, od_;  // per-head q.k and v widths, attention's output width (hd_, hd_, qd_ but for MLA)
  HeadKind head_;
  bool flash_;
  bool serving_ = false;  // Runtime::serving: a serving stack's kernels (synth.h)
  // --dtype fp8 / fp4 (inference only): the blocks' projections run narrow; null: none.
  const QuantKernels* quant_ = nullptr;
  double quant_params_ = 0;  // the narrow weights this GPU holds (quant_)
  // Latent attention decoding with a fused kernel (--attention flash): the serving stacks' MLA path
  // (latent cache, absorbed up-projections; latent_decode_attention below).
  bool latent_decode_ = false;
  double absorbed_copy_bytes_ = 0;  // the BF16 copies of kv_b's halves that FP8 serving keeps for it
  Tape tape_;

  double stage_layers() const { return double(c_.layers) / double(o_.pp); }  // layers this GPU holds
  // Eager attention's softmax runs in fp32 on 16-bit scores (HF's Llama family; OPT in fp16), then
  // casts back.
  bool softmax_upcast() const {
    return e_ != 4 &&
           ((c_.family == Family::llama && c_.fp32_softmax) || (c_.family == Family::opt && dt_ == DType::fp16));
  }
  // A section of repeated layers: with --recompute full, its forward runs again before its backward.
  Section& layer_section(const char* prefix, double count) {
    Section& s = tape_.section(prefix, count);
    s.recompute = o_.recompute;
    return s;
  }
  // Whether a sliding window is shorter than the keys a query sees (prefill: the sequence; decode:
  // the cache).
  bool window_bites() const { return c_.sliding_window > 0 && c_.local_layers > 0 && c_.sliding_window < Sk_; }
  // The sliding-window layers this GPU holds as their own section (0 where the window does not bite).
  double local_stage_layers() const { return window_bites() ? double(c_.local_layers) / double(o_.pp) : 0; }

 public:
  Footprint footprint() const {
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
    const ActivationMemory activations(c_, o_, shape());
    if (!train_) {
      f.activation_bytes = activations.inference_peak_bytes();
      f.activations_transient = true;
    }
    if (train_) {
      f.activation_bytes = activations.activation_bytes();
      f.first_stage_activation_bytes = activations.first_stage_activation_bytes();
      f.loss_transient_bytes = activations.loss_transient_bytes();
      if (o_.pp > 1) f.first_stage_microbatches = activations.first_stage_microbatches();
    }
    return f;
  }

 private:
  // This GPU's shapes, for the activation estimates (activation_memory.h).
  StepShape shape() const {
    StepShape s;
    s.B = B_, s.S = S_, s.Sk = Sk_, s.T = T_, s.Tn = Tn_, s.tp = tp_, s.d = d_;
    s.qd = qd_, s.H = H_, s.Hkv = Hkv_, s.hd = hd_, s.qkhd = qkhd_, s.vhd = vhd_, s.od = od_, s.F = F_, s.V = V_;
    s.e = e_, s.flash = flash_, s.decode = decode_, s.softmax_upcast = softmax_upcast(), s.head = head_;
    s.serving = serving_;
    s.stage_layers = stage_layers();
    return s;
  }

  // ---- building blocks -------------------------------------------------------------------

  // y[rows, out] = x[rows, in] W^T (+ b); `times` identical projections (q/k/v, gate/up).
  // `quantizable`: FP8 / FP4 serving runs it narrow (not the MoE router, which serving stacks keep BF16).
  void linear(Section& s, const std::string& name, double rows, int64_t in, int64_t out, bool bias,
              double n = 1, bool register_params = true, bool quantizable = true) {
    const int64_t r = int64_t(rows);
    if (register_params)
      for (double i = 0; i < n; ++i) {
        s.param(in * out);
        if (bias) s.param(out);
      }
    // Only the repeated block's projections: quantized serving keeps embeddings and heads BF16.
    if (quant_ && quantizable && in_block(s)) {
      quant_params_ += s.weights * n * double(in) * double(out);
      // The input quantized, then the scaled narrow GEMM (BF16 C).
      s.op(times(quantize_input(*quant_, name, rows, double(in)), n));
      s.op(times(gemm(name + " " + quant_->gemm, quant_->dtype, 1, r, out, in), n));
      return;
    }
    std::vector<Kernel> bwd{times(gemm(name + " aten::mm (dgrad)", dt_, 1, r, in, out), n),
                            times(gemm(name + " aten::mm (wgrad)", dt_, 1, out, in, r), n)};
    if (bias)
      bwd.push_back(times(work(name + " aten::sum (bias grad)", KernelClass::reduction, dt_, rows * double(out),
                               (rows * double(out) + double(out)) * e_),
                          n));
    s.op(times(gemm(name + (bias ? " aten::addmm" : " aten::mm"), dt_, 1, r, out, in), n), std::move(bwd));
  }

  // Expert parallelism's exchange of `rows` token activations (forward; their gradients in
  // backward): each GPU sends the (ep - 1) / ep of them whose experts live elsewhere.
  void all_to_all(Section& s, const std::string& name, double rows) {
    if (o_.ep <= 1) return;
    const double bytes = rows * double(d_) * e_ * double(o_.ep - 1) / double(o_.ep);
    const double net = all_to_all_net_share(o_.ep, tp_, o_.gpus_per_node);  // experts tp ranks apart
    s.op(over_network(collective(name + " nccl:all_to_all (expert parallel)", dt_, bytes), net),
         {over_network(collective(name + " nccl:all_to_all (expert parallel, backward)", dt_, bytes), net)});
  }

  // The share of a tensor-parallel collective's bytes that leaves the node (adjacent ranks).
  double tp_net_share() const { return ring_net_share(tp_, 1, o_.gpus_per_node); }

  // The all-reduce of a [tokens, hidden] activation (or its gradient) over the tensor-parallel group.
  // `forward`: the all-reduce of a row-parallel output (forward); else of a column-parallel input's
  // gradient (backward). Under sequence parallelism a region's input is all-gathered (forward; its
  // gradient reduce-scattered, and the input gathered again for the weight gradients, Megatron-LM
  // keeping only its shard) and its output reduce-scattered (its gradient all-gathered).
  void tp_all_reduce(Section& s, const std::string& name, bool forward) {
    if (tp_ <= 1) return;
    const double net = tp_net_share();
    if (!o_.sequence_parallel) {
      Kernel k = over_network(all_reduce(name + " nccl:all_reduce (tensor parallel)", dt_, T_ * d_, tp_), net);
      if (forward) s.op(std::move(k));
      else s.backward_only({std::move(k)});
      return;
    }
    const double bus = double(tp_ - 1) / double(tp_) * T_ * d_ * e_;
    auto c = [&](const char* op) {
      return over_network(collective(name + " nccl:" + op + " (sequence parallel)", dt_, bus), net);
    };
    if (forward) s.op(c("reduce_scatter"), {c("all_gather")});
    else s.op(c("all_gather"), {c("reduce_scatter"), c("all_gather (input again)")});
  }

  // One stage boundary crossed by a micro-batch: its activations forward, their gradient back.
  void stage_sends(Section& s) {
    s.weights = 0;
    // Neighbouring stages sit tp x cp x dp ranks apart.
    const double net = stage_boundary_net_share(o_.pp, tp_ * o_.cp * o_.dp, o_.gpus_per_node);
    s.op(over_network(collective("send_recv nccl:send (pipeline activations)", dt_, T_ * d_ * e_), net),
         {over_network(collective("send_recv nccl:send (pipeline gradients)", dt_, T_ * d_ * e_), net)});
  }

  Kernel accumulate(const std::string& name, double elems, double n = 1) {
    return times(pointwise(name + " aten::add (grad accumulate)", dt_, elems, 3, 1), n);
  }

  // A unary pointwise op: forward reads x writes y; backward reads grad and the saved tensor.
  void unary(Section& s, const std::string& name, const std::string& op, const std::string& bwd_op,
             double elems, double flops) {
    s.op(pointwise(name + " " + op, dt_, elems, 2, flops), {pointwise(name + " " + bwd_op, dt_, elems, 3, flops)});
  }

  void dropout(Section& s, const std::string& name, double elems, double p) {
    if (!train_ || p <= 0) return;
    // native_dropout writes the output and a bool mask; the backward multiplies by the mask.
    s.op(work(name + " aten::native_dropout", EW, dt_, elems * 4, elems * (2 * e_ + 1)),
         {work(name + " aten::native_dropout_backward", EW, dt_, elems, elems * (2 * e_ + 1))});
  }

  // A layout copy; either direction may be free where PyTorch can view instead (batch 1).
  void copy(Section& s, const std::string& name, double elems, double n = 1, bool fwd = true, bool bwd = true) {
    std::vector<Kernel> b;
    if (bwd) b.push_back(times(pointwise(name + " aten::copy_ (backward)", dt_, elems, 2, 0), n));
    if (fwd) s.op(times(pointwise(name + " aten::copy_", dt_, elems, 2, 0), n), std::move(b));
    else if (bwd) s.backward_only(std::move(b));
  }

  // A serving stack adds the residual inside the norm that follows (residual_norm): no kernel of its own.
  void residual_add(Section& s, const std::string& name) {
    if (serving_) return;
    s.op(pointwise(name + " aten::add", dt_, Tn_ * d_, 3, 1), {accumulate(name, Tn_ * d_)});
  }

  // `vocab_parallel`: the word embedding, whose table tensor parallelism splits (V_ rows here) and
  // whose lookups the group all-reduces.
  void embedding(Section& s, const std::string& name, double rows, int64_t table, bool vocab_parallel = false) {
    if (vocab_parallel) table = V_;
    const double out = rows * double(d_);
    s.op(work(name + " aten::embedding", KernelClass::embedding, dt_, 0, rows * 8 + 2 * out * e_),
         {pointwise(name + " aten::zero_ (embedding grad)", dt_, double(table) * d_, 1, 0),
          work(name + " aten::embedding_dense_backward", KernelClass::embedding, dt_, out,
               rows * 8 * 4 + 2 * out * e_)});
    s.param(table * d_);
    if (vocab_parallel) tp_all_reduce(s, name, true);
  }

  // Over `rows` of `width` (default: the hidden size).
  void norm(Section& s, const std::string& name, double rows, int64_t width = 0) {
    const int64_t w = width ? width : d_;
    const double n = rows * double(w);
    if (serving_ && c_.norm == NormKind::rms) {
      // vLLM / SGLang's rms_norm (a CUDA op, or the one kernel torch.compile makes of it): reads x, writes y.
      s.op(over_rows(work(name + " vllm::rms_norm", KernelClass::normalization, dt_, 4 * n, 2 * n * e_ + w * e_),
                     rows, double(w)));
      s.param(w);
      return;
    }
    if (c_.norm == NormKind::layer) {
      // Its rows (of w) say how much of them the kernel's resident CTAs re-read from L2.
      s.op(over_rows(work(name + " aten::native_layer_norm", KernelClass::normalization, dt_, 8 * n,
                          2 * n * e_ + rows * 8 + 2 * w * e_),
                     rows, double(w)),
           {work(name + " aten::native_layer_norm_backward (input)", KernelClass::normalization, dt_, 8 * n,
                 3 * n * e_ + rows * 8 + w * e_),
            work(name + " aten::native_layer_norm_backward (gamma, beta)", KernelClass::normalization, dt_,
                 4 * n, 2 * n * e_ + 2 * w * e_)});
      s.param(w);
      s.param(w);
      return;
    }
    // HF LlamaRMSNorm in eager: x.to(fp32); v = x.pow(2).mean(-1); x * rsqrt(v + eps); .to(dtype); w * x.
    const bool cast = e_ != 4;
    const DType f32 = DType::fp32;
    if (cast)
      s.op(work(name + " aten::_to_copy (fp32)", EW, dt_, 0, n * (e_ + 4)),
           {work(name + " aten::_to_copy (backward)", EW, dt_, 0, n * (e_ + 4))});
    s.op(pointwise(name + " aten::pow", f32, n, 2, 1),
         {pointwise(name + " aten::pow (backward)", f32, n, 2, 1), pointwise(name + " aten::mul (pow backward)", f32, n, 3, 1)});
    s.op(work(name + " aten::mean", KernelClass::reduction, f32, n, 4 * (n + rows)),
         {work(name + " aten::mean (backward)", EW, f32, n, 4 * (n + rows))});
    s.op(times(pointwise(name + " aten::add|rsqrt", f32, rows, 2, 2), 2),
         {pointwise(name + " aten::rsqrt (backward)", f32, rows, 3, 3)});
    s.op(work(name + " aten::mul (x * rstd)", EW, f32, n, 4 * (2 * n + rows)),
         {work(name + " aten::mul (backward, x)", EW, f32, n, 4 * (2 * n + rows)),
          work(name + " aten::mul (backward, rstd)", EW, f32, n, 4 * (2 * n)),
          work(name + " aten::sum (backward, rstd)", KernelClass::reduction, f32, n, 4 * (n + rows)),
          accumulate(name + " x", n)});
    if (cast)
      s.op(work(name + " aten::_to_copy (dtype)", EW, dt_, 0, n * (e_ + 4)),
           {work(name + " aten::_to_copy (backward)", EW, dt_, 0, n * (e_ + 4))});
    s.op(pointwise(name + " aten::mul (weight)", dt_, n, 2, 1),
         {pointwise(name + " aten::mul (backward, input)", dt_, n, 2, 1),
          pointwise(name + " aten::mul (backward, weight)", dt_, n, 3, 1),
          work(name + " aten::sum (weight grad)", KernelClass::reduction, dt_, n, (n + w) * e_)});
    s.param(w);
  }

  // Serving: the residual add and the next RMSNorm as one kernel (vLLM's fused_add_rms_norm: residual
  // += x, x = norm(residual); reads both, writes both). The first layer's norm has no residual yet and
  // is counted as the others.
  void residual_norm(Section& s, const std::string& name) {
    const double n = Tn_ * d_;
    s.op(over_rows(work(name + " vllm::fused_add_rms_norm", KernelClass::normalization, dt_, 5 * n,
                        4 * n * e_ + double(d_) * e_),
                   Tn_, double(d_)));
    s.param(d_);
  }

  // The norm before a pre-norm decoder's sub-block (and the final one): a serving stack's carries the
  // residual add before it.
  void pre_norm(Section& s, const std::string& name) {
    if (serving_) residual_norm(s, name);
    else norm(s, name, Tn_);
  }

  void rotary(Section& s, const std::string& name, double elems) {
    if (serving_) {
      // One in-place kernel over the rotated dimensions (vLLM's rotary_embedding, q and k in one
      // launch where the caller passes both), reading the cos / sin cache computed at load time.
      const double rotated = c_.mla() ? elems : elems * c_.rotary_dim_fraction;
      const double table = T_ * double(rot_);
      s.op(work(name + " vllm::rotary_embedding", EW, dt_, 3 * rotated, 2 * rotated * e_ + table * e_));
      return;
    }
    // Partial rotary (HF): q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:] (views), the
    // rotation below on q_rot, then cat(q_embed, q_pass); backward, each slice's gradient scattered
    // into a zero tensor of q's size (slice_backward) and the two added.
    const double all = elems;
    const bool partial = c_.rotary_dim_fraction < 1 && !c_.mla();
    if (partial) elems *= c_.rotary_dim_fraction;
    // q*cos + rotate_half(q)*sin, rotate_half = cat(-x2, x1).
    s.op(pointwise(name + " aten::neg", dt_, elems / 2, 2, 1), {pointwise(name + " aten::neg (backward)", dt_, elems / 2, 2, 1)});
    s.op(pointwise(name + " aten::cat", dt_, elems, 2, 0),
         {times(pointwise(name + " aten::slice_backward", dt_, elems / 2, 3, 0), 2)});
    s.op(times(pointwise(name + " aten::mul (cos|sin)", dt_, elems, 2.2, 1), 2),
         {times(pointwise(name + " aten::mul (backward)", dt_, elems, 2.2, 1), 2), accumulate(name, elems)});
    s.op(pointwise(name + " aten::add", dt_, elems, 3, 1));
    if (partial)
      s.op(pointwise(name + " aten::cat (rotated | passed)", dt_, all, 2, 0),
           {times(pointwise(name + " aten::slice_backward (rotated | passed)", dt_, all, 2, 0), 2),
            accumulate(name + " (rotated | passed)", all)});
  }

  // ---- sections --------------------------------------------------------------------------

  void embeddings(Section& s) {
    const double S = double(S_), Sd = S * d_;
    switch (c_.family) {
      case Family::bert:
        // Extended attention mask: ones, (1 - mask) * finfo.min on [B, 1, 1, S].
        s.op(times(pointwise("mask aten::fill_|rsub|mul", dt_, T_, 2, 1), 3));
        embedding(s, "word_embeddings", T_, c_.vocab, true);
        embedding(s, "token_type_embeddings", T_, c_.type_vocab);
        s.op(pointwise("add aten::add", dt_, T_ * d_, 3, 1));
        embedding(s, "position_embeddings", S, c_.max_positions);
        s.op(work("add aten::add (positions)", EW, dt_, T_ * d_, (2 * T_ * d_ + Sd) * e_),
             B_ > 1 ? std::vector<Kernel>{work("add aten::sum (position grad)", KernelClass::reduction, dt_,
                                               T_ * d_, (T_ * d_ + Sd) * e_)}
                    : std::vector<Kernel>{});
        norm(s, "LayerNorm", Tn_);
        dropout(s, "dropout", Tn_ * d_, c_.hidden_dropout);
        break;
      case Family::gpt2:
        s.op(work("position_ids aten::arange", EW, DType::fp32, 0, S * 8));
        embedding(s, "wte", T_, c_.vocab, true);
        embedding(s, "wpe", S, c_.max_positions);
        s.op(work("add aten::add (positions)", EW, dt_, T_ * d_, (2 * T_ * d_ + Sd) * e_),
             B_ > 1 ? std::vector<Kernel>{work("add aten::sum (position grad)", KernelClass::reduction, dt_,
                                               T_ * d_, (T_ * d_ + Sd) * e_)}
                    : std::vector<Kernel>{});
        dropout(s, "drop", Tn_ * d_, c_.hidden_dropout);
        break;
      case Family::opt: {
        embedding(s, "embed_tokens", T_, c_.vocab, true);
        if (!flash_) {
          // Causal mask [S, S], expanded with the padding mask to [B, 1, S, S] (HF OPT, as traced);
          // decoding, [1, Sk] per sequence.
          const double SS = S * double(Sk_), BSS = double(B_) * SS;
          s.op(work("mask aten::full|lt|masked_fill_", EW, dt_, SS, SS * (2 * e_ + 1)));
          s.op(times(work("mask aten::rsub|to|masked_fill (padding)", EW, dt_, BSS, BSS * (e_ + 1)), 5));
        }
        // Positions from the attention mask: cumsum, type_as, mul, long, sub, add on [B, S] ints.
        s.op(work("positions aten::cumsum", KernelClass::reduction, DType::fp32, T_, T_ * 16));
        s.op(times(work("positions aten::mul|sub|add", EW, DType::fp32, T_, T_ * 24), 4));
        embedding(s, "embed_positions", T_, c_.max_positions + c_.position_offset);
        s.op(pointwise("add aten::add (positions)", dt_, T_ * d_, 3, 1));
        break;
      }
      case Family::llama: {
        embedding(s, "embed_tokens", T_, c_.vocab, true);
        if (c_.embed_scale)  // Gemma: x * sqrt(hidden)
          s.op(pointwise("embed_tokens aten::mul (normalizer)", dt_, T_ * d_, 2, 1),
               {pointwise("embed_tokens aten::mul (normalizer backward)", dt_, T_ * d_, 2, 1)});
        if (serving_) break;  // no mask (fused attention), the cos / sin cache made at load time
        if (!flash_) {
          const double SS = S * double(Sk_), BSS = double(B_) * SS;
          s.op(times(work("mask aten::full|triu|gt|mul", EW, dt_, SS, SS * 2 * e_), 4));
          s.op(times(work("mask aten::clone|eq|masked_fill", EW, dt_, BSS, BSS * 2 * e_), 3));
        }
        // Rotary cos/sin: inv_freq @ positions, cat, cos, sin, scaling, casts.
        // Partial rotary: the table covers the rotated dimensions only.
        s.op(gemm("rotary aten::bmm (inv_freq x positions)", DType::fp32, B_, rot_ / 2, S_, 1));
        s.op(times(pointwise("rotary aten::cat|cos|sin|mul|to", DType::fp32, T_ * double(rot_), 2, 2), 7));
        break;
      }
    }
  }

  // `window`: a sliding-window layer's (0: full attention). Decoding, it attends to the window's
  // keys only, eager or fused; in a forward over whole sequences the fused kernel skips the keys
  // outside it, while eager attention (HF) computes every score and masks them.
  void attention(Section& s, int64_t window = 0) {
    const int64_t Sk = decode_ && window > 0 ? std::min(Sk_, window) : Sk_;  // keys a query reads
    if (latent_decode_) return latent_decode_attention(s, Sk);
    const double x_elems = T_ * d_, q_elems = T_ * qd_, kv_elems = T_ * double(Hkv_ * hd_);
    const int64_t kvd = Hkv_ * hd_;
    // The keys and values attention reads, Sk of them per sequence: the new tokens' own (kv_elems),
    // or decoding, the cache's.
    const double kv_read = double(B_) * double(Sk) * double(kvd);
    // Latent attention's keys are q.k wide and its values v wide (every head its own); else both are kv_elems.
    const bool mla = c_.mla();
    const double k_elems = mla ? T_ * double(H_ * qkhd_) : kv_elems, v_elems = mla ? T_ * double(H_ * vhd_) : kv_elems;
    const double o_elems = T_ * double(od_);
    tp_all_reduce(s, "attn.input", false);  // the column-parallel projections' input gradient
    switch (c_.family) {
      case Family::gpt2:
        linear(s, "attn.c_attn", T_, d_, 3 * qd_, c_.bias);
        s.backward_only({pointwise("attn.split aten::cat (split backward)", dt_, 3 * q_elems, 2, 0)});
        break;
      case Family::bert:
      case Family::opt:
        s.backward_only({accumulate("attn.input", x_elems, 2)});  // x feeds q, k and v
        linear(s, "attn.q_proj|k_proj|v_proj", T_, d_, qd_, c_.bias, 3);
        if (c_.family == Family::opt)
          s.op(pointwise("attn.q_scaling aten::mul", dt_, q_elems, 2, 1),
               {pointwise("attn.q_scaling aten::mul (backward)", dt_, q_elems, 2, 1)});
        break;
      case Family::llama: {
        if (mla) {
          mla_projections(s);
          break;
        }
        const bool qkv_bias = c_.bias || c_.qkv_bias;
        // With an output gate q_proj also makes the gate (Qwen3-Next: query | gate per head).
        const int64_t qw = c_.attn_output_gate ? 2 * qd_ : qd_;
        if (c_.fused_qkv) {
          linear(s, "attn.qkv_proj", T_, d_, qw + 2 * kvd, qkv_bias);  // q, k, v: views of its output
        } else {
          s.backward_only({accumulate("attn.input", x_elems, 2)});
          linear(s, "attn.q_proj", T_, d_, qw, qkv_bias);
          if (c_.attention_sinks) s.param(H_);  // GPT-OSS: one sink logit per head
          linear(s, "attn.k_proj|v_proj", T_, d_, kvd, qkv_bias, 2);
        }
        if (c_.qk_norm == TransformerConfig::QkNorm::per_head) {
          norm(s, "attn.q_norm", T_ * double(H_), hd_);
          norm(s, "attn.k_norm", T_ * double(Hkv_), hd_);
        } else if (c_.qk_norm == TransformerConfig::QkNorm::whole) {
          norm(s, "attn.q_norm", T_, qd_);
          norm(s, "attn.k_norm", T_, kvd);
        }
        if (c_.complex_rotary) {
          llama4_positions(s, q_elems, kv_elems);
          break;
        }
        if (serving_) {
          rotary(s, "attn.rotary_qk", q_elems + kv_elems);
        } else {
          rotary(s, "attn.rotary_q", q_elems);
          rotary(s, "attn.rotary_k", kv_elems);
        }
        break;
      }
    }
    if (serving_ && !mla) {
      // Every step writes its tokens' keys and values into the paged cache (the prompt's too).
      s.op(work("attn.kv_cache vllm::reshape_and_cache_flash", EW, dt_, 0, 2 * kv_elems * (e_ + kv_e_)));
    } else if (decode_) {
      // This step's keys and values into the cache (index_copy_ of one token per sequence).
      if (mla)
        s.op(work("attn.kv_cache aten::index_copy_ (k|v)", EW, dt_, 0, (k_elems + v_elems) * (e_ + kv_e_)));
      else if (kv_e_ == e_)
        s.op(times(pointwise("attn.kv_cache aten::index_copy_", dt_, kv_elems, 2, 0), 2));
      else  // quantized into the cache as it is written (vLLM's reshape_and_cache with a scale)
        s.op(times(work("attn.kv_cache reshape_and_cache (quantized)", EW, dt_, kv_elems, kv_elems * (e_ + kv_e_)),
                   2));
    }
    const double BH = double(B_) * double(H_), SS = double(S_) * double(Sk), N = BH * SS;
    if (flash_) {
      // One fused kernel: QK^T and PV (2 GEMMs of 2*S*S*hd each per head); causal skips half (not
      // when one new token attends to its whole cache). With a window w < S, query i sees
      // min(i + 1, w) keys: S w - w^2 / 2 pairs per head (S^2 / 2 at w = S, as without).
      const double causal = c_.causal && !decode_ ? 0.5 : 1.0;
      const double w = double(window);
      // (Under context parallelism each GPU does 1 / cp of the whole sequence's pairs: S_ is its share.)
      const bool windowed = window > 0 && !decode_ && window < Sk_ && c_.causal;
      const double attended = windowed ? (double(Sk_) * w - w * w / 2) / double(o_.cp) : SS * causal;
      double fl = 4.0 * BH * attended * double(hd_);
      // Decoding reads K and V from the cache, in its dtype.
      double io = 2 * q_elems * e_ + 2 * kv_read * kv_e_;
      double bwd_io = (3 * q_elems + 2 * kv_elems + q_elems + 2 * kv_elems) * e_;
      if (mla) {  // q.k and p.v over different head widths; K and V read from the cache when decoding
        const double per_key = double(B_) * double(Sk) * double(H_);
        fl = 2.0 * BH * attended * double(qkhd_ + vhd_);
        io = (q_elems + o_elems) * e_ + per_key * double(qkhd_ + vhd_) * kv_e_;
        bwd_io = (2 * q_elems + 2 * o_elems + 2 * (k_elems + v_elems) + o_elems) * e_;
      }
      if (o_.cp > 1) {
        // Ring attention: the other cp - 1 GPUs' K and V chunks pass by, one per step (their attention
        // FLOPs are above: this GPU's queries against every key); in backward K and V again with their
        // gradients. Transformer Engine overlaps the steps with the chunks' attention; shown exposed.
        const double chunk = (k_elems + v_elems) * e_, steps = double(o_.cp - 1);
        const double net = ring_net_share(o_.cp, tp_, o_.gpus_per_node);
        s.op(over_network(collective("attn.cp nccl:send_recv (context-parallel K|V ring)", dt_, steps * chunk), net),
             {over_network(collective("attn.cp nccl:send_recv (context-parallel K|V and dK|dV ring, backward)", dt_,
                                      2 * steps * chunk),
                           net)});
      }
      // Serving stacks run FlashAttention-3 on Hopper and FlashInfer / TRT-LLM kernels on Blackwell:
      // native tensor instructions, so their kernel is not named as PyTorch's mma.sync one.
      s.op(work(serving_ ? "attn.flash vllm::unified_attention (varlen | paged KV)"
                         : "attn.flash aten::_scaled_dot_product_flash_attention",
                KernelClass::attention, dt_, fl, io + BH * double(S_) * 4),
           // Backward recomputes P and runs 5 GEMMs (2.5x the forward); reads Q,K,V,O,dO,LSE, writes dQ,dK,dV.
           {work("attn.flash aten::_scaled_dot_product_flash_attention_backward", KernelClass::attention, dt_,
                 2.5 * fl, bwd_io + 2 * BH * double(S_) * 4)});
    } else {
      // Head-major copies for the batched GEMMs. matmul reshapes [B,H,S,hd] views of the
      // projections to [B*H,S,hd], a copy unless B = 1; the backward's view of the permuted
      // gradient always copies. OPT copies explicitly (.contiguous()).
      const bool batched = B_ > 1;
      if (mla) {
        copy(s, "attn.v_heads", v_elems, 1, batched, true);  // v: a strided split of kv_b's output
      } else if (c_.family == Family::llama) {
        if (H_ == Hkv_) copy(s, "attn.v_heads", kv_elems, 1, batched, true);
        else {
          // repeat_kv: expand + reshape of k and v to all heads; backward sums the groups.
          // Every key and value read is copied to each of its group's heads (decoding, the whole cache).
          const double kv_heads = kv_read * double(H_) / double(Hkv_);
          s.op(times(work("attn.repeat_kv aten::clone", EW, dt_, 0, (kv_read + kv_heads) * e_), 2),
               {times(work("attn.repeat_kv aten::sum (backward)", KernelClass::reduction, dt_, q_elems,
                           (kv_elems + q_elems) * e_),
                      2)});
        }
      } else if (decode_) {
        // K and V are the cache's [B, H, Sk, hd]; only the new queries are made head-major.
        copy(s, "attn.split_heads", q_elems, 1, batched || c_.family == Family::opt, false);
      } else {
        copy(s, "attn.split_heads", q_elems, 3, batched || c_.family == Family::opt, true);
      }
      const size_t core = s.fwd.size();  // the core attention selective recomputation re-runs
      s.op(gemm("attn.qk aten::bmm (QK^T)", dt_, B_ * H_, S_, Sk, qkhd_),
           {gemm("attn.qk aten::bmm (dQ)", dt_, B_ * H_, S_, qkhd_, S_),
            gemm("attn.qk aten::bmm (dK)", dt_, B_ * H_, S_, qkhd_, S_)});
      switch (c_.family) {
        case Family::bert:
          s.op(pointwise("attn.scale aten::div", dt_, N, 2, 1), {pointwise("attn.scale aten::div (backward)", dt_, N, 2, 1)});
          s.op(work("attn.mask aten::add", EW, dt_, N, (2 * N + T_) * e_));
          break;
        case Family::gpt2:
          // The scale and the mask value are 0-d tensors made per layer (torch.full): tiny fills.
          s.op(times(work("attn.scalars aten::full", EW, dt_, 0, e_), 2));
          s.op(pointwise("attn.scale aten::div", dt_, N, 2, 1), {pointwise("attn.scale aten::div (backward)", dt_, N, 2, 1)});
          s.op(work("attn.mask aten::where", EW, dt_, N, 2 * N * e_ + SS),
               {work("attn.mask aten::where (backward)", EW, dt_, N, 2 * N * e_ + SS)});
          break;
        case Family::opt:
          s.op(work("attn.mask aten::add", EW, dt_, N, (2 * N + B_ * SS) * e_));
          // torch.tensor(finfo.min) per layer: a host-to-device copy of one scalar.
          s.op(work("attn.mask aten::copy_ (finfo.min to device)", KernelClass::memcpy, dt_, 0, e_));
          s.op(pointwise("attn.mask aten::maximum (clamp)", dt_, N, 2, 1),
               {pointwise("attn.mask aten::maximum (backward)", dt_, N, 3, 1)});
          break;
        case Family::llama:
          s.op(pointwise("attn.scale aten::mul", dt_, N, 2, 1), {pointwise("attn.scale aten::mul (backward)", dt_, N, 2, 1)});
          if (c_.attn_softcap > 0) soft_cap(s, "attn.softcap", N);
          s.op(work("attn.mask aten::add", EW, dt_, N, (2 * N + B_ * SS) * e_));
          if (c_.attention_sinks) {
            // GPT-OSS: each row gets its head's sink logit (cat), the row max is subtracted, and the
            // sink's column is dropped after the softmax (a view).
            const double rows = BH * double(S_);
            s.op(work("attn.sinks aten::cat", EW, dt_, 0, (2 * N + rows) * e_),
                 {work("attn.sinks aten::slice_backward|sum", KernelClass::reduction, dt_, N, (2 * N + rows) * e_)});
            s.op(work("attn.sinks aten::max", KernelClass::reduction, dt_, N, (N + rows) * e_));
            s.op(work("attn.sinks aten::sub", EW, dt_, N, (2 * N + rows) * e_));
          }
          break;
      }
      if (softmax_upcast()) {
        s.op(over_rows(work("attn.softmax aten::_softmax (fp32)", KernelClass::softmax, DType::fp32, 5 * N, N * (e_ + 4)),
                       N / Sk, Sk),
             {over_rows(work("attn.softmax aten::_softmax_backward_data", KernelClass::softmax, DType::fp32, 4 * N, N * 12),
                        N / Sk, Sk)});
        s.op(work("attn.softmax aten::_to_copy", EW, dt_, 0, N * (e_ + 4)),
             {work("attn.softmax aten::_to_copy (backward)", EW, dt_, 0, N * (e_ + 4))});
      } else {
        s.op(over_rows(pointwise("attn.softmax aten::_softmax", dt_, N, 2, 5, KernelClass::softmax), N / Sk, Sk),
             {over_rows(pointwise("attn.softmax aten::_softmax_backward_data", dt_, N, 3, 4, KernelClass::softmax),
                        N / Sk, Sk)});
      }
      dropout(s, "attn.dropout", N, c_.attention_dropout);
      s.op(gemm("attn.pv aten::bmm (PV)", dt_, B_ * H_, S_, vhd_, Sk),
           {gemm("attn.pv aten::bmm (dP)", dt_, B_ * H_, S_, S_, vhd_),
            gemm("attn.pv aten::bmm (dV)", dt_, B_ * H_, S_, vhd_, S_)});
      if (o_.selective_recompute)
        for (size_t i = core; i < s.fwd.size(); ++i) s.recompute_ops.push_back(i);
    }
    // .contiguous() of the permuted output; its gradient reaches the PV bmm as a permuted view,
    // reshaped with a copy unless B = 1.
    if (!serving_) copy(s, "attn.merge_heads", o_elems, 1, true, B_ > 1);  // serving kernels write [T, H x hd]
    if (c_.attn_output_gate) {  // out * sigmoid(gate): eager two kernels, a serving stack's compiled graph one
      if (serving_) s.op(work("attn.output_gate sigmoid|mul", EW, dt_, 5 * o_elems, 3 * o_elems * e_));
      else {
        s.op(pointwise("attn.output_gate aten::sigmoid", dt_, o_elems, 2, 4));
        s.op(pointwise("attn.output_gate aten::mul", dt_, o_elems, 3, 1));
      }
    }
    linear(s, "attn.out_proj", T_, od_, d_, c_.bias);
    tp_all_reduce(s, "attn.out_proj", true);
    dropout(s, "attn.resid_dropout", Tn_ * d_, c_.hidden_dropout);
  }

  // One sequence's recurrent state in a linear-attention layer on this GPU: each value head's
  // k x v matrix (lin_state_bytes an element) and the conv's last lin_conv - 1 inputs.
  double linear_state_bytes_per_sequence() const {
    const double hv = double(c_.lin_v_heads / tp_), conv = double(c_.lin_conv_width() / tp_);
    return hv * double(c_.lin_k_dim) * double(c_.lin_v_dim) * c_.lin_state_bytes + conv * double(c_.lin_conv - 1) * e_;
  }

  // Gated DeltaNet (HF Qwen3NextGatedDeltaNet with flash-linear-attention's kernels, as HF runs it when
  // fla is installed; vLLM's port): in_proj_qkvz and in_proj_ba; eager, q | k | v joined by a cat;
  // the depthwise causal conv with SiLU (causal_conv1d; decoding, its one-step update against the
  // conv state); beta = sigmoid(b) and g = -exp(A_log) softplus(a + dt_bias) (eager six small
  // kernels, serving one); eager, q and k repeated from the key heads to the value heads; the delta
  // rule (prompt: fla's chunked kernels, chunks of 64; decoding: the fused recurrent kernel over the
  // state); the gated RMSNorm (fla's fused kernel) and out_proj. Tensor parallelism splits the heads.
  // Training adds each kernel's backward (the activation estimate counts these layers as fused
  // attention's, activation_memory.h: what the delta rule keeps is of that size, q, k, v and o).
  void linear_attention(Section& s) {
    const int64_t hk = c_.lin_k_heads / tp_, hv = c_.lin_v_heads / tp_, dk = c_.lin_k_dim, dv = c_.lin_v_dim;
    const int64_t kd = hk * dk, vd = hv * dv, conv = 2 * kd + vd;
    const double T = T_, K = double(c_.lin_conv), B = double(B_), f32 = 4;
    linear(s, "linear_attn.in_proj_qkvz", T, d_, 2 * kd + 2 * vd, false);
    linear(s, "linear_attn.in_proj_ba", T, d_, 2 * hv, false);
    // (Its backward, and that of the views that split the outputs, are views of the gradient.)
    if (!serving_) s.op(pointwise("linear_attn.qkv aten::cat", dt_, T * double(conv), 2, 0));
    const double state_conv = B * double(conv) * (K - 1) * e_;  // the conv state's taps
    if (decode_)
      s.op(work("linear_attn.conv causal_conv1d_update", EW, dt_, (2 * K + 4) * T * double(conv),
                2 * T * double(conv) * e_ + 2 * state_conv + double(conv) * K * e_));
    else  // backward: causal_conv1d_bwd, the input and weight gradients in one kernel
      s.op(work("linear_attn.conv causal_conv1d_fn", EW, dt_, (2 * K + 4) * T * double(conv),
                2 * T * double(conv) * e_ + state_conv + double(conv) * K * e_),
           {work("linear_attn.conv causal_conv1d_bwd", EW, dt_, (4 * K + 8) * T * double(conv),
                 3 * T * double(conv) * e_ + 2 * double(conv) * K * e_)});
    s.param(conv * c_.lin_conv);
    s.param(2 * hv);  // dt_bias, A_log
    const double gates = T * double(hv);
    if (serving_) s.op(work("linear_attn.gating fused_gdn_gating", EW, DType::fp32, 8 * gates, gates * (2 * e_ + 8)));
    else
      s.op(times(pointwise("linear_attn.gating aten::sigmoid|_to_copy|add|softplus|exp|mul", DType::fp32, gates, 2, 2), 6),
           {times(pointwise("linear_attn.gating (backward)", DType::fp32, gates, 3, 2), 5)});
    const double qk = T * double(hv) * double(dk);  // q and k as the kernel reads them, one per value head
    if (!serving_ && hv > hk)  // backward: each key head's gradient summed over its value heads
      s.op(times(pointwise("linear_attn.qk aten::repeat_interleave", dt_, qk, 1.5, 0), 2),
           {times(work("linear_attn.qk aten::sum (repeat_interleave backward)", KernelClass::reduction, dt_, qk,
                       1.5 * qk * e_),
                  2)});
    const double heads = T * double(hv), state = B * double(hv) * double(dk) * double(dv);
    const double io_qkvo = (2 * qk + 2 * T * double(vd)) * e_ + 2 * gates * f32;
    if (decode_) {
      // Per token and head: S k, the rank-one update, S q (2 dk dv each); the state read and written.
      s.op(work("linear_attn.gdn fla::fused_recurrent_gated_delta_rule", KernelClass::attention, dt_,
                heads * 6 * double(dk) * double(dv), io_qkvo + 2 * state * c_.lin_state_bytes));
    } else {
      // Chunks of C = 64 (WY form): K K^T, the triangular solve, W and U, the state through the chunks,
      // the outputs: 6 C dk + 4 C dv + 6 dk dv + C^2 / 1.5 FLOPs per token and head. The per-chunk
      // states (fp32) are written and read back, W and U likewise; the final state is kept.
      constexpr double C = 64;
      const double fl = heads * (6 * C * double(dk) + 4 * C * double(dv) + 6 * double(dk) * double(dv) + C * C / 1.5);
      const double chunks = std::ceil(double(S_) / C);
      const double io = io_qkvo + 2 * B * chunks * double(hv) * double(dk) * double(dv) * f32 +
                        2 * heads * double(dk + dv) * e_ + state * c_.lin_state_bytes;
      // Backward (fla's chunk_gated_delta_rule_bwd): the states recomputed, then dq, dk, dv, dg, dbeta
      // through the chunks, 2.5x the forward's work as a fused attention backward.
      s.op(work("linear_attn.gdn fla::chunk_gated_delta_rule", KernelClass::attention, dt_, fl, io),
           {work("linear_attn.gdn fla::chunk_gated_delta_rule_bwd", KernelClass::attention, dt_, 2.5 * fl, 2 * io)});
    }
    const double o = T * double(vd);
    s.op(over_rows(work("linear_attn.norm fused_rms_norm_gated", KernelClass::normalization, dt_, 8 * o, 3 * o * e_),
                   heads, double(dv)),
         {over_rows(work("linear_attn.norm fused_rms_norm_gated (backward)", KernelClass::normalization, dt_, 16 * o,
                         5 * o * e_),
                    heads, double(dv))});
    s.param(dv);
    linear(s, "linear_attn.out_proj", T, vd, d_, false);
    tp_all_reduce(s, "linear_attn.out_proj", true);
  }

  // DeepSeek's multi-head latent attention in eager (HF DeepseekV3Attention): q = q_b(norm(q_a(x)))
  // (or one q projection), [latent | rotary key] = kv_a(x), k_nope | v = kv_b(norm(latent)) per head;
  // rotary on q's rope part and on the one shared rotary key; q and k assembled by cat (the shared
  // key expanded to every head). Tensor parallelism splits the heads (q_b, kv_b, o); q_a and kv_a run
  // whole on every GPU.
  void mla_projections(Section& s) {
    const int64_t kvl = c_.kv_lora_rank, rope = c_.qk_rope_dim, nope = c_.qk_nope_dim;
    mla_query_and_latent(s);
    linear(s, "attn.kv_b_proj", T_, kvl, H_ * (nope + vhd_), false);
    rotary(s, "attn.rotary_q", T_ * double(H_ * rope));
    rotary(s, "attn.rotary_k", T_ * double(rope));
    const double qk = T_ * double(qd_);  // q's (and k's) elements over every head
    s.op(times(pointwise("attn.cat (q_nope|q_pe, k_nope|k_pe)", dt_, qk, 2, 0), 2),
         {times(pointwise("attn.cat (backward: slices)", dt_, qk, 2, 0), 2),
          work("attn.k_pe aten::sum (expand backward)", KernelClass::reduction, dt_, T_ * double(H_ * rope),
               T_ * double(H_ * rope + rope) * e_)});
  }

  // Both MLA paths: q (q_a, its norm, q_b; or one q projection) and [latent | rotary key] = kv_a(x)
  // with the latent normed.
  void mla_query_and_latent(Section& s) {
    const int64_t ql = c_.q_lora_rank, kvl = c_.kv_lora_rank, rope = c_.qk_rope_dim;
    s.backward_only({accumulate("attn.input", T_ * d_)});  // x feeds q (or q_a) and kv_a
    if (ql > 0) {
      linear(s, "attn.q_a_proj", T_, d_, ql, false);
      norm(s, "attn.q_a_layernorm", T_, ql);
      linear(s, "attn.q_b_proj", T_, ql, qd_, false);
    } else {
      linear(s, "attn.q_proj", T_, d_, qd_, false);
    }
    linear(s, "attn.kv_a_proj_with_mqa", T_, d_, kvl + rope, false);
    norm(s, "attn.kv_a_layernorm", T_, kvl);
  }

  // One decode step of latent attention as vLLM / sglang serve it (vLLM's MLACommonImpl decode path,
  // the "data-movement friendly" form of the DeepSeek-V2 paper): the cache holds each token's
  // normed latent and rotary key (kv_lora + rope wide, one row for all heads) and kv_b never runs on
  // it. kv_b's key half is absorbed into the query instead (a per-head bmm of q_nope into latent
  // space), attention runs as multi-query attention over the latent cache (q.k over kv_lora + rope,
  // p.v over kv_lora: FlashMLA on Hopper, Triton elsewhere), and kv_b's value half maps each head's
  // output back to v_head_dim (another per-head bmm) before o_proj. The absorbed halves are BF16
  // (no FP8 bmm): quantized serving keeps BF16 copies of them beside the narrow kv_b it still holds.
  void latent_decode_attention(Section& s, int64_t Sk) {
    const int64_t kvl = c_.kv_lora_rank, rope = c_.qk_rope_dim, nope = c_.qk_nope_dim, lat = kvl + rope;
    tp_all_reduce(s, "attn.input", false);
    mla_query_and_latent(s);
    const double kv_b = double(kvl) * double(H_ * (nope + vhd_));  // kv_b's weights: held, not run
    s.param(int64_t(kv_b));
    if (quant_) {
      quant_params_ += s.weights * kv_b;
      absorbed_copy_bytes_ += s.weights * kv_b * 2;
    }
    rotary(s, "attn.rotary_q", T_ * double(H_ * rope));
    rotary(s, "attn.rotary_k", T_ * double(rope));
    const int64_t tokens = int64_t(T_);  // every sequence's new tokens (one; more when verifying drafts)
    s.op(gemm("attn.absorb_k aten::bmm (q_nope x W_UK)", dt_, H_, tokens, kvl, nope));
    s.op(work("attn.kv_cache concat_and_cache_mla", EW, dt_, 0, T_ * double(lat) * (e_ + kv_e_)));
    const double q_elems = T_ * double(H_ * lat), o_elems = T_ * double(H_ * kvl);
    s.op(pointwise("attn.q aten::cat (ql_nope|q_pe)", dt_, q_elems, 2, 0));
    // Every head of a sequence reads that sequence's Sk cached rows; the kernel reads them once.
    const double keys = double(B_) * double(Sk);
    const double flops = 2.0 * T_ * double(H_) * double(Sk) * double(lat + kvl);
    s.op(work("attn.mla_decode (latent cache)", KernelClass::attention, dt_, flops,
              keys * double(lat) * kv_e_ + (q_elems + o_elems) * e_ + T_ * double(H_) * 4));
    s.op(gemm("attn.absorb_v aten::bmm (o_latent x W_UV)", dt_, H_, tokens, vhd_, kvl));
    linear(s, "attn.out_proj", T_, od_, d_, c_.bias);
    tp_all_reduce(s, "attn.out_proj", true);
  }

  struct ActivationOps {
    const char *op, *bwd_op;
    double flops;
  };
  ActivationOps gate_activation() const {
    switch (c_.act) {
      case Activation::gelu: return {"aten::gelu", "aten::gelu_backward", 8};
      case Activation::gelu_tanh: return {"aten::gelu (tanh)", "aten::gelu_backward (tanh)", 8};
      case Activation::relu: return {"aten::relu", "aten::threshold_backward", 1};
      default: return {"aten::silu", "aten::silu_backward", 4};  // gelu_new is refused for gated MLPs
    }
  }

  // Llama 4's per-layer position handling, each op on the share of layers it runs in (rope_fraction
  // of them rotary, the rest NoPE; the rows' counts carry the fraction). Rotary: q and k cast to
  // fp32, viewed as complex, multiplied by the complex table, cast back; then, where use_qk_norm,
  // their L2 norm (HF's composite without a weight) over each head. NoPE layers with temperature
  // tuning scale q by log(floor((pos + 1) / floor_scale) + 1) * attn_scale + 1: a few ops on the
  // positions, then a multiply (fp32 out) and the cast back.
  void llama4_positions(Section& s, double q_elems, double kv_elems) {
    const double rope = c_.rope_fraction, nope = 1 - rope;
    const DType f32 = DType::fp32;
    auto rotate = [&](const std::string& n, const std::string& norm_name, double elems) {
      const double bytes = elems * 8 + double(S_) * double(hd_) * 4;  // complex in and out, the table
      s.op(times(work(n + " aten::_to_copy (fp32)", EW, dt_, 0, elems * (e_ + 4)), rope),
           {times(work(n + " aten::_to_copy (backward)", EW, dt_, 0, elems * (e_ + 4)), rope)});
      s.op(times(work(n + " aten::mul (complex)", EW, f32, 3 * elems, bytes), rope),
           {times(work(n + " aten::mul (complex, backward)", EW, f32, 3 * elems, bytes), rope)});
      s.op(times(work(n + " aten::_to_copy (dtype)", EW, f32, 0, elems * (e_ + 4)), rope),
           {times(work(n + " aten::_to_copy (backward)", EW, f32, 0, elems * (e_ + 4)), rope)});
      if (c_.qk_l2_norm) l2_norm(s, norm_name, elems / double(hd_), rope);
    };
    if (rope > 0) {
      rotate("attn.rotary_q", "attn.q_l2_norm", q_elems);
      rotate("attn.rotary_k", "attn.k_l2_norm", kv_elems);
    }
    if (c_.temperature_tuning && nope > 0) {
      const double qb = q_elems * (e_ + 4);
      s.op(times(pointwise("attn.temperature aten::add|div|floor|log|mul (positions)", f32, double(S_), 2, 1),
                 6 * nope));
      s.op(times(work("attn.temperature aten::mul (q)", EW, dt_, q_elems, qb + double(S_) * 4), nope),
           {times(work("attn.temperature aten::mul (q, backward)", EW, dt_, q_elems, qb), nope)});
      s.op(times(work("attn.temperature aten::_to_copy", EW, f32, 0, qb), nope),
           {times(work("attn.temperature aten::_to_copy (backward)", EW, f32, 0, qb), nope)});
    }
  }

  // HF's L2 norm of `rows` heads of hd_ (x.float(), pow, mean, add, rsqrt, mul, cast back), on
  // `share` of the layers.
  void l2_norm(Section& s, const std::string& name, double rows, double share) {
    const double n = rows * double(hd_);
    const DType f32 = DType::fp32;
    s.op(times(work(name + " aten::_to_copy (fp32)", EW, dt_, 0, n * (e_ + 4)), share),
         {times(work(name + " aten::_to_copy (backward)", EW, dt_, 0, n * (e_ + 4)), share)});
    s.op(times(pointwise(name + " aten::pow", f32, n, 2, 1), share),
         {times(pointwise(name + " aten::pow (backward)", f32, n, 3, 2), share)});
    s.op(times(work(name + " aten::mean", KernelClass::reduction, f32, n, 4 * (n + rows)), share),
         {times(work(name + " aten::mean (backward)", EW, f32, n, 4 * (n + rows)), share)});
    s.op(times(pointwise(name + " aten::add|rsqrt", f32, rows, 2, 2), 2 * share),
         {times(pointwise(name + " aten::rsqrt (backward)", f32, rows, 3, 3), share)});
    s.op(times(work(name + " aten::mul (x * rstd)", EW, f32, n, 4 * (2 * n + rows)), share),
         {times(work(name + " aten::mul (backward, x)", EW, f32, n, 4 * (2 * n + rows)), share),
          times(work(name + " aten::sum (backward, rstd)", KernelClass::reduction, f32, n, 4 * (n + rows)), share),
          times(accumulate(name + " x", n), share)});
    s.op(times(work(name + " aten::_to_copy (dtype)", EW, f32, 0, n * (e_ + 4)), share),
         {times(work(name + " aten::_to_copy (backward)", EW, f32, 0, n * (e_ + 4)), share)});
  }

  // cap * tanh(x / cap) over `elems` (Gemma 2's attention scores and logits), op by op as HF writes it.
  void soft_cap(Section& s, const std::string& name, double elems) {
    // Scaling by a constant: its backward reads the gradient only.
    s.op(pointwise(name + " aten::div", dt_, elems, 2, 1),
         {pointwise(name + " aten::div (backward)", dt_, elems, 2, 1)});
    unary(s, name, "aten::tanh", "aten::tanh_backward", elems, 6);
    s.op(pointwise(name + " aten::mul", dt_, elems, 2, 1),
         {pointwise(name + " aten::mul (backward)", dt_, elems, 2, 1)});
  }

  // SwiGLU: down(silu(gate(x)) * up(x)) over `rows` tokens, `n` such MLPs (experts) in a row.
  void swiglu(Section& s, const std::string& name, double rows, int64_t F, bool bias, double n = 1,
              bool register_params = true) {
    const double e = rows * double(F);
    if (c_.fused_gate_up) {  // Phi-3: one gate_up_proj, chunked by views
      linear(s, name + ".gate_up_proj", rows, d_, 2 * F, bias, n, register_params);
    } else {
      s.backward_only({times(accumulate(name + ".input", rows * double(d_)), n)});  // x feeds gate and up
      linear(s, name + ".gate_proj|up_proj", rows, d_, F, bias, 2 * n, register_params);
    }
    gate(s, name, e, n);
    linear(s, name + ".down_proj", rows, F, d_, bias, n, register_params);
  }

  // act(gate) * up over `e` elements, `n` times. The activation is SiLU (SwiGLU) or Gemma's tanh-GELU
  // (GeGLU), one kernel either way; GPT-OSS's clamped form is seven: gate.clamp(max=7),
  // up.clamp(-7, 7), gate * 1.702, sigmoid, gate * that, up + 1, their product.
  void gate(Section& s, const std::string& name, double e, double n) {
    if (c_.clamped_swiglu) {
      for (const auto& [op, flops] : {std::pair<const char*, double>{"aten::clamp (gate)", 1}, {"aten::clamp (up)", 2},
                                      {"aten::mul (alpha)", 1}, {"aten::sigmoid", 4}})
        s.op(times(pointwise(name + ".act " + op, dt_, e, 2, flops), n),
             {times(pointwise(name + ".act " + std::string(op) + " (backward)", dt_, e, 3, flops), n)});
      s.op(times(pointwise(name + ".act aten::mul (glu)", dt_, e, 3, 1), n),
           {times(pointwise(name + ".act aten::mul (glu backward)", dt_, e, 3, 1), 2 * n)});
      s.op(times(pointwise(name + ".act aten::add (up + 1)", dt_, e, 2, 1), n));
      s.op(times(pointwise(name + ".gate aten::mul", dt_, e, 3, 1), n),
           {times(pointwise(name + ".gate aten::mul (backward)", dt_, e, 3, 1), 2 * n)});
      return;
    }
    if (serving_) {
      // One kernel: act(gate) * up from the merged gate|up output (vLLM's silu_and_mul / gelu_tanh_and_mul).
      const char* fused = c_.act == Activation::silu ? " vllm::silu_and_mul" : " vllm::gelu_and_mul";
      s.op(times(work(name + ".act" + fused, EW, dt_, 5 * e, 3 * e * e_), n));
      return;
    }
    const auto [op, bwd_op, flops] = gate_activation();
    s.op(times(pointwise(name + ".act " + op, dt_, e, 2, flops), n),
         {times(pointwise(name + ".act " + bwd_op, dt_, e, 3, flops), n)});
    s.op(times(pointwise(name + ".gate aten::mul", dt_, e, 3, 1), n),
         {times(pointwise(name + ".gate aten::mul (backward)", dt_, e, 3, 1), 2 * n)});
  }

  // HF's MixtralSparseMoeBlock / Qwen2MoeSparseMoeBlock in eager: the router GEMM, softmax (fp32)
  // and top-k, then a Python loop over the experts some token chose: torch.where on the one-hot
  // mask (nonzero, whose count reaches the host), a gather of the expert's tokens, the SwiGLU
  // expert, the routing-weight multiply and index_add_ into the output. Routing is taken as
  // balanced and uniform: T tokens choosing k of E experts hit E(1 - (1 - k/E)^T) of them in
  // expectation, each with Tk / hit tokens. Tensor parallelism splits every expert's MLP as it
  // splits a dense one. Expert parallelism over ep GPUs (Megatron-LM / DeepSpeed-MoE): each holds
  // E / ep experts, an all-to-all sends every chosen token to its expert's GPU and another brings
  // the results back (in backward, their gradients); with balanced routing each GPU receives the
  // Tk picks it sends, spread over its share of the experts the ep GPUs' tokens hit.
  void moe(Section& s) {
    const double E = double(c_.experts), k = double(c_.experts_per_token), Tk = T_ * k;
    const double ep = double(o_.ep);
    const double hit = std::max(1.0, std::round(E * (1 - std::pow(1 - k / E, ep * T_)) / ep));  // on this GPU
    const double Te = std::max(1.0, std::round(Tk / hit));  // tokens per expert
    const int64_t Fe = c_.expert_ffn / tp_;
    tp_all_reduce(s, "mlp.input", false);
    // x feeds the router and the experts' gathers (and the shared expert and its gate).
    const bool shared = c_.shared_expert_ffn > 0;
    s.backward_only({accumulate("moe.input", T_ * d_, shared ? (c_.shared_expert_gated ? 3 : 2) : 1)});
    linear(s, "moe.gate", T_, d_, c_.experts, c_.gate_bias, 1, true, false);
    if (quant_ || serving_) fused_experts(s, hit, Te, Fe);
    else if (all_experts_eagerly()) all_experts(s, Fe);
    else eager_experts(s, hit, Te, Fe);
    auto& expert_params = o_.ep > 1 ? s.expert_params : s.params;
    for (int64_t i = 0; i < c_.experts / o_.ep; ++i) {  // every local expert's, chosen or not
      for (int j = 0; j < 3; ++j) expert_params.push_back(d_ * Fe);
      if (c_.expert_bias) expert_params.insert(expert_params.end(), {2 * Fe, d_});
    }
    all_to_all(s, "moe.combine", Tk);
    if (shared && !c_.shared_expert_gated) {
      // DeepSeek: out += shared_experts(x), on every token.
      swiglu(s, "moe.shared_experts", T_, c_.shared_expert_ffn / tp_, false);
      s.op(pointwise("moe.shared_experts aten::add", dt_, T_ * d_, 3, 1));
    } else if (shared) {
      // Qwen2-MoE: out += sigmoid(shared_expert_gate(x)) * shared_expert(x), on every token.
      swiglu(s, "moe.shared_expert", T_, c_.shared_expert_ffn / tp_, false);
      linear(s, "moe.shared_expert_gate", T_, d_, 1, false, 1, true, false);
      s.op(pointwise("moe.shared_expert_gate aten::sigmoid", dt_, T_, 2, 4),
           {pointwise("moe.shared_expert_gate aten::sigmoid_backward", dt_, T_, 3, 4)});
      s.op(work("moe.shared_expert aten::mul|add", EW, dt_, 2 * T_ * d_, (4 * T_ * d_ + T_) * e_),
           {work("moe.shared_expert aten::mul (backward)", EW, dt_, T_ * d_, (3 * T_ * d_ + T_) * e_),
            work("moe.shared_expert aten::mul|sum (gate grad)", KernelClass::reduction, dt_, 2 * T_ * d_,
                 (2 * T_ * d_ + T_) * e_)});
    }
    tp_all_reduce(s, "mlp.down_proj", true);
  }

  bool all_experts_eagerly() const {
    using X = TransformerConfig::EagerExperts;
    return c_.eager_experts == X::all || (c_.eager_experts == X::all_in_inference && !train_);
  }

  // Routing that takes the top k of the logits first (Llama 4, GPT-OSS): their values through a
  // sigmoid (Llama 4: scattered into a -inf matrix, sigmoid over it, fp32, so the unchosen score 0)
  // or a softmax over the k (GPT-OSS: then scattered into zeros).
  void topk_first_routing(Section& s) {
    const double E = double(c_.experts), TE = T_ * E, Tk = T_ * double(c_.experts_per_token);
    const DType f32 = DType::fp32;
    s.op(work("moe.router aten::topk", KernelClass::reduction, dt_, TE, TE * e_ + 12 * Tk),
         {work("moe.router aten::topk (backward: zero_|scatter)", EW, dt_, Tk, TE * e_ + 12 * Tk)});
    if (c_.router == TransformerConfig::Router::topk_softmax) {
      s.op(over_rows(work("moe.router aten::_softmax (top-k)", KernelClass::softmax, dt_, 5 * Tk, 2 * Tk * e_), T_,
                     double(c_.experts_per_token)),
           {over_rows(work("moe.router aten::_softmax_backward_data", KernelClass::softmax, dt_, 4 * Tk, 3 * Tk * e_),
                      T_, double(c_.experts_per_token))});
      s.op(work("moe.router aten::zeros_like|scatter_", EW, dt_, 0, 2 * TE * e_ + 12 * Tk),
           {work("moe.router aten::gather (scatter_ backward)", EW, dt_, 0, TE * e_ + 12 * Tk)});
      return;
    }
    s.op(work("moe.router aten::full_like|scatter_ (-inf)", EW, dt_, 0, 2 * TE * e_ + 12 * Tk),
         {work("moe.router aten::gather (scatter_ backward)", EW, dt_, 0, TE * e_ + 12 * Tk)});
    s.op(work("moe.router aten::_to_copy (fp32)", EW, dt_, 0, TE * (e_ + 4)),
         {work("moe.router aten::_to_copy (backward)", EW, dt_, 0, TE * (e_ + 4))});
    s.op(pointwise("moe.router aten::sigmoid", f32, TE, 2, 4),
         {pointwise("moe.router aten::sigmoid_backward", f32, TE, 3, 4)});
    s.op(work("moe.router aten::_to_copy", EW, f32, 0, TE * (e_ + 4)),
         {work("moe.router aten::_to_copy (backward)", EW, f32, 0, TE * (e_ + 4))});
  }

  // The HF loop (moe() above): routing in eager ops, then per chosen expert its sync, gather,
  // SwiGLU, weighting and scatter-add; the dispatch all-to-all before the loop.
  void eager_experts(Section& s, double hit, double Te, int64_t Fe) {
    const double E = double(c_.experts), k = double(c_.experts_per_token), TE = T_ * E, Tk = T_ * k;
    const DType f32 = DType::fp32;
    using R = TransformerConfig::Router;
    if (c_.router == R::sigmoid) {
      sigmoid_routing(s);
    } else if (c_.router == R::topk_sigmoid || c_.router == R::topk_softmax) {
      topk_first_routing(s);
    } else {
      s.op(over_rows(work("moe.router aten::_softmax (fp32)", KernelClass::softmax, f32, 5 * TE, TE * (e_ + 4)), T_, E),
           {over_rows(work("moe.router aten::_softmax_backward_data", KernelClass::softmax, f32, 4 * TE, 12 * TE), T_, E)});
      if (c_.expert_groups > 1) group_limit(s);
      s.op(work("moe.router aten::topk", KernelClass::reduction, f32, TE, 4 * TE + 12 * Tk),
           {work("moe.router aten::topk (backward: zero_|scatter)", EW, f32, Tk, 4 * TE + 12 * Tk)});
    }
    if (c_.norm_topk)
      s.op(times(work("moe.router aten::sum|div (renormalize)", EW, f32, Tk, 12 * Tk), 2),
           {times(work("moe.router aten::sum|div (backward)", EW, f32, Tk, 12 * Tk), 2)});
    if (e_ != 4)
      s.op(work("moe.router aten::_to_copy", EW, dt_, 0, Tk * (4 + e_)),
           {work("moe.router aten::_to_copy (backward)", EW, dt_, 0, Tk * (4 + e_))});
    s.op(work("moe.output aten::zeros", EW, dt_, 0, T_ * d_ * e_));
    s.op(work("moe.mask aten::one_hot|permute", EW, f32, 0, 8 * Tk + 8 * TE * k));
    if (train_) s.backward_only({work("moe.input aten::zeros (gather grad)", EW, dt_, 0, T_ * d_ * e_)});
    all_to_all(s, "moe.dispatch", Tk);
    const double xe = Te * double(d_);  // one expert's tokens
    s.op(times(work("moe.experts aten::nonzero (torch.where)", KernelClass::reduction, f32, Tk, 8 * Tk + 16 * Te), hit));
    s.op(times(work("moe.experts aten::nonzero (count to host)", KernelClass::memcpy, f32, 0, 8), hit));
    s.op(times(work("moe.experts aten::index (tokens)", KernelClass::embedding, dt_, 0, 8 * Te + 2 * xe * e_), hit),
         {times(work("moe.experts aten::index_put_ (tokens backward)", KernelClass::embedding, dt_, xe,
                     8 * Te + 3 * xe * e_),
                hit)});
    swiglu(s, "moe.experts", Te, Fe, c_.expert_bias, hit, false);
    s.op(times(work("moe.experts aten::index (routing weights)", KernelClass::embedding, dt_, 0, Te * (16 + 2 * e_)), hit));
    s.op(times(work("moe.experts aten::mul (routing weight)", EW, dt_, xe, (2 * xe + Te) * e_), hit),
         {times(work("moe.experts aten::mul (routing weight backward)", EW, dt_, xe, (2 * xe + Te) * e_), hit),
          times(work("moe.experts aten::mul|sum (routing weight grad)", KernelClass::reduction, dt_, 2 * xe,
                     (2 * xe + Te) * e_),
                hit)});
    s.op(times(work("moe.experts aten::index_add_", KernelClass::embedding, dt_, xe, 8 * Te + 3 * xe * e_), hit),
         {times(work("moe.experts aten::index_select (index_add_ backward)", KernelClass::embedding, dt_, 0,
                     8 * Te + 2 * xe * e_),
                hit)});
  }

  // HF's eager experts that run every expert on every token (Llama4TextExperts; GptOssExperts at
  // inference): the router (topk_first_routing: every unchosen expert scores 0), the tokens repeated
  // once per expert, two batched GEMMs over all experts (GPT-OSS adds each expert's biases), the
  // results weighted by the scores (Llama 4 scales the repeated input instead) and summed over the
  // experts. A shared expert follows in moe().
  void all_experts(Section& s, int64_t Fe) {
    const double E = double(c_.experts), TE = T_ * E;
    const double x = TE * double(d_), f = TE * double(Fe);  // repeated tokens; their MLP width
    const bool llama4 = c_.router == TransformerConfig::Router::topk_sigmoid;
    topk_first_routing(s);
    s.op(pointwise("moe.router aten::clone (transpose, reshape)", dt_, TE, 2, 0),
         {pointwise("moe.router aten::clone (backward)", dt_, TE, 2, 0)});
    s.op(work("moe.experts aten::repeat", EW, dt_, 0, (T_ * double(d_) + x) * e_),
         {work("moe.experts aten::sum (repeat backward)", KernelClass::reduction, dt_, x, (x + T_ * double(d_)) * e_)});
    auto weigh = [&] {
      s.op(work("moe.experts aten::mul (scores)", EW, dt_, x, (2 * x + TE) * e_),
           {work("moe.experts aten::mul (scores backward)", EW, dt_, x, (2 * x + TE) * e_),
            work("moe.experts aten::mul|sum (scores grad)", KernelClass::reduction, dt_, 2 * x, (2 * x + TE) * e_)});
    };
    auto bias = [&](const std::string& name, double elems) {
      if (c_.expert_bias) s.op(pointwise(name + " aten::add (bias)", dt_, elems, 3, 1));
    };
    if (llama4) weigh();
    const int64_t batch = c_.experts, rows = int64_t(T_);
    s.op(gemm("moe.experts aten::bmm (gate_up_proj)", dt_, batch, rows, 2 * Fe, d_),
         {gemm("moe.experts aten::bmm (gate_up_proj dgrad)", dt_, batch, rows, d_, 2 * Fe),
          gemm("moe.experts aten::bmm (gate_up_proj wgrad)", dt_, batch, d_, 2 * Fe, rows)});
    bias("moe.experts.gate_up_proj", 2 * f);
    gate(s, "moe.experts", f, 1);
    s.op(gemm("moe.experts aten::bmm (down_proj)", dt_, batch, rows, d_, Fe),
         {gemm("moe.experts aten::bmm (down_proj dgrad)", dt_, batch, rows, Fe, d_),
          gemm("moe.experts aten::bmm (down_proj wgrad)", dt_, batch, Fe, d_, rows)});
    bias("moe.experts.down_proj", x);
    if (!llama4) weigh();
    s.op(work("moe.experts aten::sum (over experts)", KernelClass::reduction, dt_, x, (x + T_ * double(d_)) * e_),
         {work("moe.experts aten::expand|clone (sum backward)", EW, dt_, 0, (x + T_ * double(d_)) * e_)});
  }

  // DeepSeek-V3's router (HF DeepseekV3TopkRouter): sigmoid scores, the correction bias added for the
  // choice, the group limit, top-k on the masked scores, and the chosen scores gathered (the
  // weights; their renormalization and the routed scaling factor follow).
  void sigmoid_routing(Section& s) {
    const double TE = T_ * double(c_.experts), Tk = T_ * double(c_.experts_per_token);
    const DType f32 = DType::fp32;
    s.op(pointwise("moe.router aten::sigmoid", f32, TE, 2, 4), {pointwise("moe.router aten::sigmoid_backward", f32, TE, 3, 4)});
    if (c_.router_bias) s.op(pointwise("moe.router aten::add (correction bias)", f32, TE, 2, 1));
    if (c_.expert_groups > 1) group_limit(s);
    s.op(work("moe.router aten::topk", KernelClass::reduction, f32, TE, 4 * TE + 12 * Tk));
    s.op(work("moe.router aten::gather (weights)", KernelClass::embedding, f32, 0, 4 * TE + 12 * Tk),
         {work("moe.router aten::scatter (gather backward)", EW, f32, Tk, 4 * TE + 12 * Tk)});
    s.op(work("moe.router aten::mul (routed scaling)", EW, f32, Tk, 8 * Tk),
         {work("moe.router aten::mul (routed scaling backward)", EW, f32, Tk, 8 * Tk)});
  }

  // Group-limited top-k (DeepSeek): each group's score (its best two), the best topk_groups groups,
  // their mask scattered and expanded, the other experts' scores zeroed. No gradient flows here.
  void group_limit(Section& s) {
    const double TE = T_ * double(c_.experts), TG = T_ * double(c_.expert_groups);
    const DType f32 = DType::fp32;
    s.op(work("moe.router aten::topk|sum (group scores)", KernelClass::reduction, f32, TE, 4 * TE + 12 * TG));
    s.op(work("moe.router aten::topk (groups)", KernelClass::reduction, f32, TG, 4 * TG + 8 * T_ * double(c_.topk_groups)));
    s.op(work("moe.router aten::zeros|scatter_ (group mask)", EW, f32, 0, 8 * TG));
    s.op(work("moe.router aten::expand|reshape|masked_fill", EW, f32, TE, 9 * TE));
  }

  // Quantized serving (`--dtype fp8`: vLLM / sglang fused_moe, Triton; `fp4`: vLLM's CUTLASS FP4 MoE):
  // one fused top-k softmax, the tokens sorted by expert (moe_align_block_size), the BF16 input
  // quantized, one grouped narrow GEMM for gate|up over every chosen expert (a batched GEMM of `hit`
  // problems of Te tokens), silu_and_mul, the intermediate quantized, one grouped GEMM for down, and
  // the sum over each token's k experts.
  // Serving in BF16 (no quant_): the same without the quantize passes, on vLLM's Triton fused_moe_kernel.
  void fused_experts(Section& s, double hit, double Te, int64_t Fe) {
    const double E = double(c_.experts), Tk = T_ * double(c_.experts_per_token);
    if (quant_) quant_params_ += s.weights * 3 * double(c_.experts / o_.ep) * double(d_) * double(Fe);  // narrow
    const DType f32 = DType::fp32, bf = DType::bf16;
    if (c_.router == TransformerConfig::Router::topk_sigmoid)  // Llama 4: top-k, then a sigmoid of the chosen logits
      s.op(work("moe.router fused_topk (sigmoid)", KernelClass::reduction, f32, 2 * T_ * E, T_ * E * e_ + 8 * Tk));
    else if (c_.router == TransformerConfig::Router::sigmoid || c_.expert_groups > 1)
      s.op(work("moe.router grouped_topk", KernelClass::reduction, f32, 5 * T_ * E, T_ * E * e_ + 8 * Tk));
    else
      s.op(over_rows(work("moe.router topk_softmax", KernelClass::softmax, f32, 5 * T_ * E, T_ * E * e_ + 8 * Tk), T_, E));
    s.op(work("moe.experts moe_align_block_size", KernelClass::reduction, f32, Tk, 16 * Tk));
    all_to_all(s, "moe.dispatch", Tk);
    const double Ed = Tk * double(d_), Ef = Tk * double(Fe);  // picked tokens' hidden and MLP widths
    const std::string grouped = std::string("moe.experts ") + (quant_ ? quant_->grouped : "fused_moe_kernel");
    const DType wdt = quant_ ? quant_->dtype : dt_;
    if (quant_) s.op(quantize_input(*quant_, "moe.experts", T_, double(d_)));
    s.op(gemm(grouped + " (w13)", wdt, int64_t(hit), int64_t(Te), 2 * Fe, d_));
    s.op(work("moe.experts silu_and_mul", EW, bf, 5 * Ef, 3 * Ef * e_));
    if (quant_) s.op(quantize_input(*quant_, "moe.experts", Tk, double(Fe), " (intermediate)"));
    s.op(gemm(grouped + " (w2)", wdt, int64_t(hit), int64_t(Te), d_, Fe));
    s.op(work("moe.experts moe_sum", EW, bf, Ed, (Ed + T_ * d_) * e_));
  }

  void mlp(Section& s, bool dense_mlp) {
    if (c_.experts > 0 && !dense_mlp) return moe(s);
    const int64_t F = F_;
    const double n = T_ * double(F);
    tp_all_reduce(s, "mlp.input", false);
    if (c_.gated_mlp) {
      swiglu(s, "mlp", T_, F, c_.bias);
    } else {
      linear(s, "mlp.fc1", T_, d_, F, c_.bias);
      switch (c_.act) {
        case Activation::gelu: unary(s, "mlp.act", "aten::gelu", "aten::gelu_backward", n, 8); break;
        case Activation::gelu_tanh: unary(s, "mlp.act", "aten::gelu (tanh)", "aten::gelu_backward (tanh)", n, 8); break;
        case Activation::relu: unary(s, "mlp.act", "aten::relu", "aten::threshold_backward", n, 1); break;
        case Activation::silu: unary(s, "mlp.act", "aten::silu", "aten::silu_backward", n, 4); break;
        case Activation::gelu_new: {
          // 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))), op by op.
          auto scalar = [&](const std::string& nm) {
            s.op(pointwise("mlp.act." + nm, dt_, n, 2, 1), {pointwise("mlp.act." + nm + " (backward)", dt_, n, 2, 1)});
          };
          s.backward_only({accumulate("mlp.act.x", n, 2)});  // x feeds mul, pow and add
          scalar("mul aten::mul");
          s.op(pointwise("mlp.act.pow aten::pow", dt_, n, 2, 2),
               {pointwise("mlp.act.pow aten::pow (backward)", dt_, n, 2, 2), pointwise("mlp.act.pow aten::mul (backward)", dt_, n, 2, 1),
                pointwise("mlp.act.pow aten::mul (backward, grad)", dt_, n, 3, 1)});
          scalar("mul_1 aten::mul");
          s.op(pointwise("mlp.act.add aten::add", dt_, n, 3, 1));
          scalar("mul_2 aten::mul");
          unary(s, "mlp.act.tanh", "aten::tanh", "aten::tanh_backward", n, 6);
          s.op(pointwise("mlp.act.add_1 aten::add", dt_, n, 2, 1));
          s.op(pointwise("mlp.act.mul_3 aten::mul", dt_, n, 3, 1),
               {times(pointwise("mlp.act.mul_3 aten::mul (backward)", dt_, n, 3, 1), 2)});
          break;
        }
      }
      linear(s, "mlp.fc2", T_, F, d_, c_.bias);
    }
    tp_all_reduce(s, c_.gated_mlp ? "mlp.down_proj" : "mlp.fc2", true);
    dropout(s, "mlp.dropout", Tn_ * d_, c_.hidden_dropout);
  }

  // `dense_mlp`: one of a mixture's dense layers; `window`: a sliding-window layer's.
  void layer(Section& s, bool dense_mlp = false, int64_t window = 0, bool linear = false) {
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
    pre_norm(s, "post_attention_norm");
    mlp(s, dense_mlp);
    if (c_.sandwich_norm) norm(s, "mlp.output_norm", Tn_);
    residual_add(s, "mlp.residual");
  }

  void pooler(Section& s) {
    // The first token of each sequence: a strided view, so no copy forward; select_backward
    // zero-fills the full hidden-state gradient.
    if (train_) s.backward_only({pointwise("pooler.select aten::select_backward (zero_)", dt_, T_ * d_, 1, 0)});
    linear(s, "pooler.dense", double(B_), d_, d_, true);
    unary(s, "pooler.activation", "aten::tanh", "aten::tanh_backward", double(B_) * d_, 6);
  }

  // Serving: logits only for the tokens it samples (a prompt's last; every token of a decode step),
  // gathered from the tensor-parallel GPUs, then the sampler over the whole vocabulary.
  void serving_head(Section& s) {
    pre_norm(s, "final_norm");
    const double rows = decode_ ? T_ : double(B_);
    linear(s, "lm_head", rows, d_, V_, false, 1, !c_.tied_embeddings);
    const double V = double(c_.vocab), n = rows * V;
    if (tp_ > 1)
      s.op(over_network(collective("lm_head nccl:gather (logits, tensor parallel)", dt_, rows * double(V_) * e_),
                        tp_net_share()));
    if (c_.final_softcap > 0) soft_cap(s, "lm_head.softcap", n);
    s.op(work("sampler aten::_to_copy (fp32 logits)", EW, dt_, 0, n * (e_ + 4)));
    s.op(over_rows(work("sampler aten::_softmax", KernelClass::softmax, DType::fp32, 5 * n, 8 * n), rows, V));
    s.op(work("sampler top_k_top_p_sampling", KernelClass::reduction, DType::fp32, 2 * n, 4 * n));
  }

  void head(Section& s) {
    if (serving_) return serving_head(s);
    if (c_.family != Family::bert) norm(s, "final_norm", Tn_);
    const double V = double(V_);
    switch (head_) {
      case HeadKind::automatic:
      case HeadKind::none:
        return;
      case HeadKind::lm:
        tp_all_reduce(s, "lm_head.input", false);
        linear(s, "lm_head", T_, d_, V_, false, 1, !c_.tied_embeddings);
        if (c_.final_softcap > 0) soft_cap(s, "lm_head.softcap", T_ * V);
        if (train_ && c_.tied_embeddings)
          s.backward_only({pointwise("lm_head aten::add (tied weight grad)", dt_, V * d_, 3, 1)});
        return;
      case HeadKind::classifier:
        pooler(s);
        dropout(s, "classifier.dropout", double(B_) * d_, c_.hidden_dropout);
        linear(s, "classifier", double(B_), d_, c_.num_labels, true);
        return;
      case HeadKind::pretraining:
        // BertForPreTraining: MLM transform (dense, GELU, LayerNorm), decoder tied to the word
        // embeddings with its own bias, and the next-sentence classifier on the pooled output.
        linear(s, "cls.transform.dense", T_, d_, d_, true);
        unary(s, "cls.transform.act", "aten::gelu", "aten::gelu_backward", T_ * d_, 8);
        norm(s, "cls.transform.LayerNorm", T_);
        tp_all_reduce(s, "cls.decoder.input", false);
        linear(s, "cls.decoder", T_, d_, V_, true, 1, false);
        s.param(V_);  // its bias; the weight is the word embedding
        if (train_) s.backward_only({pointwise("cls.decoder aten::add (tied weight grad)", dt_, V * d_, 3, 1)});
        pooler(s);
        linear(s, "cls.seq_relationship", double(B_), d_, 2, true);
        return;
    }
  }

  // `vocab_parallel`: the logits are this GPU's share of the vocabulary (Megatron's
  // vocab_parallel_cross_entropy): each token's max, target logit and sum of exponentials are
  // all-reduced over the group.
  void cross_entropy(Section& s, const std::string& name, double rows, double classes, bool vocab_parallel = false) {
    const double n = rows * classes;
    if (vocab_parallel)
      s.op(times(over_network(all_reduce(name + " nccl:all_reduce (vocab-parallel max|target|sum)", DType::fp32, rows,
                                         tp_),
                              tp_net_share()),
                 3));
    const bool cast = e_ != 4;
    if (cast)  // logits.float()
      s.op(work(name + " aten::_to_copy (fp32)", EW, dt_, 0, n * (e_ + 4)),
           {work(name + " aten::_to_copy (backward)", EW, dt_, 0, n * (e_ + 4))});
    s.op(over_rows(work(name + " aten::_log_softmax", KernelClass::softmax, DType::fp32, 5 * n, 8 * n), rows, classes),
         {over_rows(work(name + " aten::_log_softmax_backward_data", KernelClass::softmax, DType::fp32, 4 * n, 12 * n),
                    rows, classes)});
    s.op(work(name + " aten::nll_loss_forward", KernelClass::reduction, DType::fp32, rows, rows * 12),
         {work(name + " aten::nll_loss_backward", EW, DType::fp32, rows, 4 * n + rows * 12)});
  }

  void loss(Section& s) {
    switch (head_) {
      case HeadKind::lm: cross_entropy(s, "lm", T_, double(V_), tp_ > 1); break;
      case HeadKind::classifier: cross_entropy(s, "classifier", double(B_), double(c_.num_labels)); break;
      case HeadKind::pretraining:
        cross_entropy(s, "mlm", T_, double(V_), tp_ > 1);
        cross_entropy(s, "nsp", double(B_), 2);
        break;
      default: break;
    }
  }
};

}  // namespace

std::vector<Kernel> synthesize_transformer(const TransformerConfig& cfg, const SynthOptions& opt, Footprint* footprint) {
  if (opt.batch < 0) throw InputError("option '--batch': must be positive");
  if (opt.seq < 0) throw InputError("option '--seq': must be positive");
  if (opt.dtype && (*opt.dtype == DType::int8 || *opt.dtype == DType::fp64))
    throw InputError("option '--dtype': " + std::string(to_string(*opt.dtype)) +
                     " is not supported by synth (fp32, tf32, fp16, bf16; fp8 and fp4 for inference)");
  if ((opt.dtype == DType::fp8 || opt.dtype == DType::fp4) && opt.mode == Mode::train)
    throw InputError("option '--dtype': " + std::string(to_string(*opt.dtype)) +
                     " is synthesized for inference (quantized serving: narrow projections, BF16 elsewhere); "
                     "low-precision training recipes are not modelled, use bf16");
  if (opt.sequence_parallel && opt.tp < 2)
    throw InputError("option '--sequence-parallel': splits the tokens over the tensor-parallel GPUs; "
                     "give --tp 2 or more");
  if (opt.kv_cache_dtype) {
    if (opt.mode != Mode::decode && opt.mode != Mode::generate)
      throw InputError("option '--kv-cache-dtype': the KV cache is decoding's; use --mode decode or generate");
    if (opt.attention != AttentionImpl::flash && opt.runtime != Runtime::serving)
      throw InputError("option '--kv-cache-dtype': a quantized cache is read by fused attention kernels; add "
                       "--attention flash (eager attention reads the cache in the model's dtype)");
    const DType kv = *opt.kv_cache_dtype;
    if (kv != DType::fp8 && kv != DType::fp4 && kv != DType::bf16 && kv != DType::fp16)
      throw InputError("option '--kv-cache-dtype': " + std::string(to_string(kv)) +
                       " is not a KV cache dtype (fp8, fp4, bf16, fp16)");
  }
  if (opt.cp > 1) {
    if (opt.mode == Mode::decode || opt.mode == Mode::generate)
      throw InputError("option '--cp': context parallelism splits whole sequences (train or infer), not decoding");
    if (opt.attention != AttentionImpl::flash)
      throw InputError("option '--cp': ring attention is a fused kernel's; add --attention flash");
    if (opt.seq <= 0 || opt.seq % opt.cp != 0)
      throw InputError("option '--cp': give a --seq that splits into " + std::to_string(opt.cp) + " chunks");
  }
  if (opt.decode_tokens != 1 && opt.mode != Mode::decode)
    throw InputError("option '--decode-tokens': only with --mode decode");
  if (opt.decode_tokens < 1 || (opt.seq > 0 && opt.decode_tokens > opt.seq))
    throw InputError("option '--decode-tokens': must be between 1 and --seq (got " +
                     std::to_string(opt.decode_tokens) + ")");
  if ((opt.recompute || opt.selective_recompute) && opt.mode != Mode::train)
    throw InputError("option '--recompute': recomputation is of training's activations; use it with --mode train");
  if (opt.mode == Mode::generate)  // a sequence of steps: synthesize_generation() builds it from infer and decode
    throw InputError("option '--mode': generate is synthesized through synthesize() / synthesize_config_file()");
  if (opt.mode == Mode::decode && cfg.family == Family::bert)
    throw InputError("option '--mode': decode and generate produce tokens with a decoder; " + cfg.name + " is an encoder");
  if (cfg.family != Family::bert && (opt.head == HeadKind::classifier || opt.head == HeadKind::pretraining))
    throw InputError("option '--head': the classifier and pretraining heads are for encoder (BERT) models");
  if (cfg.family == Family::bert && opt.head == HeadKind::lm)
    throw InputError("option '--head': lm is for decoder models (use pretraining for BERT's MLM head)");
  if (cfg.positions == PositionKind::learned && opt.seq > cfg.max_positions)
    throw InputError("option '--seq': " + std::to_string(opt.seq) + " exceeds the " +
                     std::to_string(cfg.max_positions) + " learned positions of " + cfg.name);
  check_parallelism(opt);
  auto divides = [&](int64_t what, const char* name) {
    if (what % opt.tp != 0)
      throw InputError("option '--tp': " + std::to_string(opt.tp) + " does not divide the " + name + " (" +
                       std::to_string(what) + ") of " + cfg.name);
  };
  divides(cfg.heads, "attention heads");
  // More tensor-parallel GPUs than key/value heads: at inference each GPU holds a replica of one (as
  // vLLM and SGLang serve such models); Megatron-LM's training splits them and needs tp to divide.
  const bool replicated_kv = opt.tp > cfg.kv_heads && opt.tp % cfg.kv_heads == 0 && opt.mode != Mode::train;
  if (!replicated_kv && cfg.kv_heads % opt.tp != 0)
    throw InputError("option '--tp': " + std::to_string(opt.tp) + " does not divide the key/value heads (" +
                     std::to_string(cfg.kv_heads) + ") of " + cfg.name +
                     (opt.mode == Mode::train && opt.tp % cfg.kv_heads == 0
                          ? " (serving replicates them over more GPUs; training splits them)"
                          : ""));
  if (cfg.experts == 0) divides(cfg.ffn, "MLP size");  // a mixture has no dense MLP
  if (cfg.experts > 0) {
    divides(cfg.expert_ffn, "expert MLP size");
    if (cfg.shared_expert_ffn > 0) divides(cfg.shared_expert_ffn, "shared expert MLP size");
  }
  divides(cfg.hidden, "hidden size");
  if (opt.ep > 1 && cfg.experts == 0)
    throw InputError("option '--ep': " + cfg.name + " has no experts to split (expert parallelism is for mixtures of experts)");
  using X = TransformerConfig::EagerExperts;
  const bool all_experts =
      cfg.eager_experts == X::all || (cfg.eager_experts == X::all_in_inference && opt.mode != Mode::train);
  if (opt.ep > 1 && all_experts && opt.dtype != DType::fp8 && opt.dtype != DType::fp4)
    throw InputError("option '--ep': " + cfg.name + " runs every expert on every token in HF's eager code; expert "
                     "parallelism is synthesized for its routed (--dtype fp8 or fp4, fused MoE) path");
  if (cfg.attention_chunk > 0 && opt.seq > cfg.attention_chunk)
    throw InputError("option '--seq': " + cfg.name + "'s chunked attention (attention_chunk_size " +
                     std::to_string(cfg.attention_chunk) + ") is synthesized up to one chunk of keys; give --seq " +
                     std::to_string(cfg.attention_chunk) + " or less");
  if (opt.ep > 1 && cfg.experts % opt.ep != 0)
    throw InputError("option '--ep': " + std::to_string(opt.ep) + " GPUs do not divide the " +
                     std::to_string(cfg.experts) + " experts of " + cfg.name);
  if (opt.pp > 1 && cfg.experts > 0 && cfg.dense_layers > 0)
    throw InputError("option '--pp': " + cfg.name + " mixes dense and expert layers, which synth puts on one stage only");
  const bool window_bites = cfg.sliding_window < (opt.seq ? opt.seq : cfg.max_positions);
  if (opt.pp > 1 && cfg.local_layers > 0 && cfg.local_layers < cfg.layers && window_bites)
    throw InputError("option '--pp': " + cfg.name + " mixes sliding-window and full-attention layers, which synth "
                     "puts on one stage only");
  if (cfg.layers % opt.pp != 0)
    throw InputError("option '--pp': " + std::to_string(opt.pp) + " stages do not divide the " +
                     std::to_string(cfg.layers) + " layers of " + cfg.name);
  if (opt.virtual_stages < 1)
    throw InputError("option '--virtual-stages': must be at least 1");
  if (opt.virtual_stages > 1) {
    if (opt.pp < 2) throw InputError("option '--virtual-stages': interleaves pipeline stages; give --pp 2 or more");
    if ((cfg.layers / opt.pp) % opt.virtual_stages != 0)
      throw InputError("option '--virtual-stages': " + std::to_string(opt.virtual_stages) +
                       " chunks do not divide the " + std::to_string(cfg.layers / opt.pp) + " layers of a stage");
    if (opt.microbatches % opt.pp != 0)
      throw InputError("option '--virtual-stages': the interleaved schedule needs micro-batches (" +
                       std::to_string(opt.microbatches) + ") divisible by the stages (" + std::to_string(opt.pp) + ")");
  }
  if (cfg.linear_layers > 0) {
    if (opt.pp > 1 || opt.cp > 1)
      throw InputError(std::string("option '--") + (opt.pp > 1 ? "pp" : "cp") + "': " + cfg.name +
                       " mixes linear- and full-attention layers, which synth lays out on one stage and without "
                       "context parallelism");
    if (cfg.lin_k_heads % opt.tp != 0 || cfg.lin_v_heads % opt.tp != 0)
      throw InputError("option '--tp': " + std::to_string(opt.tp) + " GPUs do not divide the " +
                       std::to_string(cfg.lin_k_heads) + " key / " + std::to_string(cfg.lin_v_heads) +
                       " value heads of " + cfg.name + "'s linear attention");
  }
  if (opt.runtime == Runtime::serving) {
    auto refuse = [&](const std::string& why) {
      throw InputError("option '--runtime': serving is synthesized for " + why);
    };
    if (opt.mode == Mode::train) refuse("inference (--mode infer, decode or generate); training runs eager");
    if (cfg.family != Family::llama)
      refuse("llama-like decoders (RMSNorm, rotary, SwiGLU); " + cfg.name + " is a BERT, GPT-2 or OPT model");
    if (cfg.complex_rotary) refuse("rotary attention; Llama 4's complex rotary and NoPE layers run eager only");
    if (cfg.clamped_swiglu || cfg.attention_sinks) refuse("plain SwiGLU attention blocks; GPT-OSS runs eager only");
  }
  // A serving stack merges q|k|v and gate|up into one projection each.
  TransformerConfig merged = cfg;
  if (opt.runtime == Runtime::serving) merged.fused_qkv = merged.fused_gate_up = true;
  TransformerSynth s(merged, opt);
  std::vector<Kernel> out = s.run();
  if (footprint) {
    *footprint = s.footprint();
    footprint->notes = cfg.notes;
    if (opt.selective_recompute && opt.attention == AttentionImpl::flash)
      footprint->notes.push_back("--recompute selective: the fused attention kernel keeps no scores (its backward "
                                 "recomputes them), so nothing is recomputed");
  }
  return out;
}

}  // namespace kcast::synth

// The building blocks every section of a transformer layer is made of, as PyTorch eager launches
// them for the Hugging Face implementations (and, with --runtime serving, as vLLM / SGLang do):
//  - Linear layers are one GEMM with m = batch*seq (addmm with bias fused, mm without); backward is
//    dgrad (m=T, n=in, k=out), wgrad (m=out, n=in, k=T) and a bias-sum reduction. FP8 / FP4 serving
//    quantizes the input and runs the scaled narrow GEMM (quantize.h).
//  - LLaMA's RMSNorm is HF's Python composite (cast, pow, mean, add, rsqrt, mul, cast, mul).
//  - Dropout launches nothing in inference (the graphs show ~0 ms nodes) nor when p = 0.
//  - Backward: one kernel per differentiable elementwise input, reading grad and saved operand;
//    a gradient-accumulation add wherever a tensor feeds several consumers (residual stream,
//    separate q/k/v projections, gate/up).
// Reads the shapes of TransformerSynth (transformer_synth.h); emits into the Section it is given.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/error.h"
#include "predict/synth/transformer/transformer_synth.h"

namespace kcast::synth::transformer {

// ---- building blocks -------------------------------------------------------------------
// y[rows, out] = x[rows, in] W^T (+ b); `times` identical projections (q/k/v, gate/up).
// `quantizable`: FP8 / FP4 serving runs it narrow (not the MoE router, which serving stacks keep BF16).
void TransformerSynth::linear(Section& s, const std::string& name, double rows, int64_t in, int64_t out, bool bias,
            double n, bool register_params, bool quantizable) {
  const int64_t r = int64_t(rows);
  if (register_params)
    for (double i = 0; i < n; ++i) {
      s.param(in * out);
      if (bias) s.param(out);
    }
  // Under a recipe a bias costs no kernel of its own: Transformer Engine adds it in the GEMM's epilogue
  // and reduces its gradient in the output gradient's cast (cast_transpose_dbias).
  if (recipe_ && quantizable && in_block(s)) return recipe_linear(s, name, rows, in, out, n);
  // Only the repeated block's projections: quantized serving keeps embeddings and heads BF16 (and,
  // where the checkpoint quantizes only the experts, every projection here: mlp_moe.cc has those).
  if (quant_ && quantizable && in_block(s) && !c_.quantized_experts_only) {
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

// A block projection under a training recipe (recipe.h): per micro-batch the input quantized and the
// narrow forward GEMM; in backward the output gradient quantized, then the narrow data- and
// weight-gradient GEMMs (BF16 outputs; Megatron accumulates the weight gradients in FP32 inside the
// GEMM). Its weights are quantized once per step (recipe_weights).
void TransformerSynth::recipe_linear(Section& s, const std::string& name, double rows, int64_t in, int64_t out,
                                     double n) {
  const RecipeKernels& q = *recipe_;
  const int64_t r = int64_t(rows);
  recipe_weight_elems_ += s.weights * n * double(in) * double(out);
  double& unit = recipe_section_elems_[&s];
  unit += n * double(in) * double(out);
  recipe_layer_elems_ = std::max(recipe_layer_elems_, unit);
  // The experts' (n of them, a grouped projection) in one launch where TE fuses them (recipe.h).
  const bool fused = n > 1 && q.multi_quantize;
  auto quantize = [&](const char* what, double elems) {
    const Kernel k = work(name + " " + (fused ? q.multi_quantize : q.quantize) + what, EW, DType::bf16,
                          q.flops_per_elem * elems * (fused ? n : 1), q.bytes_per_elem() * elems * (fused ? n : 1));
    return fused ? k : times(k, n);
  };
  s.op(quantize(" (input)", rows * double(in)));
  s.op(times(gemm(name + " te::gemm (fprop)", q.gemm_dtype, 1, r, out, in), n),
       {quantize(" (output gradient)", rows * double(out)),
        times(gemm(name + " te::gemm (dgrad)", q.gemm_dtype, 1, r, in, out), n),
        times(gemm(name + " te::gemm (wgrad)", q.gemm_dtype, 1, out, in, r), n)});
}

// The block weights' quantization, once per step: TE casts them on the first micro-batch and reuses
// the narrow copies for the others. Fully sharded (--zero 3), the narrow copies live only while their
// layer is gathered (the footprint, transformer_synth.cc): each gather, in every micro-batch's forward
// and backward, quantizes its weights again.
void TransformerSynth::recipe_weights() {
  if (!recipe_ || recipe_weight_elems_ <= 0) return;
  const bool sharded = o_.zero >= 3;
  Section& w = tape_.section("recipe.", sharded ? 2.0 * double(o_.microbatches) : 1.0);
  w.weights = 0;
  const double e = recipe_weight_elems_;
  w.op(work(std::string("weights ") + recipe_->quantize + (sharded ? " (each gather)" : " (cached across micro-batches)"),
            EW, DType::bf16, recipe_->flops_per_elem * e, recipe_->bytes_per_elem() * e));
}

Kernel TransformerSynth::accumulate(const std::string& name, double elems, double n) {
  return times(pointwise(name + " aten::add (grad accumulate)", dt_, elems, 3, 1), n);
}

// A unary pointwise op: forward reads x writes y; backward reads grad and the saved tensor.
void TransformerSynth::unary(Section& s, const std::string& name, const std::string& op, const std::string& bwd_op,
           double elems, double flops) {
  s.op(pointwise(name + " " + op, dt_, elems, 2, flops), {pointwise(name + " " + bwd_op, dt_, elems, 3, flops)});
}

void TransformerSynth::dropout(Section& s, const std::string& name, double elems, double p) {
  if (!train_ || p <= 0) return;
  // native_dropout writes the output and a bool mask; the backward multiplies by the mask.
  s.op(work(name + " aten::native_dropout", EW, dt_, elems * 4, elems * (2 * e_ + 1)),
       {work(name + " aten::native_dropout_backward", EW, dt_, elems, elems * (2 * e_ + 1))});
}

// A layout copy; either direction may be free where PyTorch can view instead (batch 1).
void TransformerSynth::copy(Section& s, const std::string& name, double elems, double n, bool fwd, bool bwd) {
  std::vector<Kernel> b;
  if (bwd) b.push_back(times(pointwise(name + " aten::copy_ (backward)", dt_, elems, 2, 0), n));
  if (fwd) s.op(times(pointwise(name + " aten::copy_", dt_, elems, 2, 0), n), std::move(b));
  else if (bwd) s.backward_only(std::move(b));
}

// A serving stack adds the residual inside the norm that follows (residual_norm): no kernel of its own.
void TransformerSynth::residual_add(Section& s, const std::string& name) {
  if (serving_) return;
  s.op(pointwise(name + " aten::add", dt_, Tn_ * d_, 3, 1), {accumulate(name, Tn_ * d_)});
}

// Over `rows` of `width` (default: the hidden size).
void TransformerSynth::norm(Section& s, const std::string& name, double rows, int64_t width) {
  const int64_t w = width ? width : d_;
  const double n = rows * double(w);
  if (serving_ && c_.norm == NormKind::rms) {
    // The engine's rms_norm: reads x, writes y.
    s.op(over_rows(work(name + engine_kernel(" vllm::rms_norm", " sgl_kernel::rmsnorm", " trtllm::rmsnorm"),
                        KernelClass::normalization, dt_, 4 * n, 2 * n * e_ + w * e_),
                   rows, double(w)));
    s.param(w);
    return;
  }
  if (fused_) {
    // One kernel each way (TE's rmsnorm / layernorm, or the one Triton kernel torch.compile makes of
    // HF's composite): forward reads x and the weight, writes y and each row's statistics; backward
    // reads dy, x and the statistics, writes dx and the weight gradient's per-block partial sums.
    const bool rms = c_.norm == NormKind::rms;
    const char* kernel = megatron_ ? (rms ? " te::rmsnorm" : " te::layernorm") : " triton_fused_norm";
    s.op(over_rows(work(name + kernel + " (forward)", KernelClass::normalization, dt_, 4 * n,
                        2 * n * e_ + rows * 4 + w * e_),
                   rows, double(w)),
         {over_rows(work(name + kernel + " (backward)", KernelClass::normalization, dt_, 6 * n,
                         3 * n * e_ + rows * 4 + w * 4),
                    rows, double(w))});
    s.param(w);
    if (!rms) s.param(w);
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
void TransformerSynth::residual_norm(Section& s, const std::string& name) {
  const double n = Tn_ * d_;
  s.op(over_rows(work(name + engine_kernel(" vllm::fused_add_rms_norm", " sgl_kernel::fused_add_rmsnorm",
                                          " trtllm::fused_add_rmsnorm"),
                      KernelClass::normalization, dt_, 5 * n,
                      4 * n * e_ + double(d_) * e_),
                 Tn_, double(d_)));
  s.param(d_);
}

// The norm before a pre-norm decoder's sub-block (and the final one): a serving stack's carries the
// residual add before it.
void TransformerSynth::pre_norm(Section& s, const std::string& name) {
  if (serving_) residual_norm(s, name);
  else norm(s, name, Tn_);
}

// A serving engine's one in-place kernel over the rotated dimensions (vLLM's rotary_embedding, q and k
// in one launch where the caller passes both, half-split or interleaved pairs alike; SGLang's
// apply_rope_with_cos_sin_cache; TensorRT-LLM applies it in the attention's QKV preprocessing, counted
// here as the same pass), reading the cos / sin cache computed at load time.
Kernel TransformerSynth::serving_rotary(const std::string& name, double elems) const {
  const double rotated = c_.mla() ? elems : elems * c_.rotary_dim_fraction;
  const double table = T_ * double(rot_);
  return work(name + engine_kernel(" vllm::rotary_embedding", " sgl_kernel::apply_rope_with_cos_sin_cache",
                                   " trtllm::qkv_preprocessing (rope)"),
              EW, dt_, 3 * rotated, 2 * rotated * e_ + table * e_);
}

void TransformerSynth::rotary(Section& s, const std::string& name, double elems) {
  if (fused_ && !serving_) {
    // One kernel each way over q or k (TE's fused_rope, Megatron's apply_rotary_pos_emb with
    // apply_rope_fusion; torch.compile's fused kernel): reads the input and the cos / sin table,
    // writes the rotated tensor.
    const double table = double(S_) * double(rot_) * 4;
    const char* kernel = megatron_ ? " te::fused_rope" : " triton_fused_rope";
    s.op(work(name + kernel + " (forward)", EW, dt_, 3 * elems, 2 * elems * e_ + table),
         {work(name + kernel + " (backward)", EW, dt_, 3 * elems, 2 * elems * e_ + table)});
    return;
  }
  if (serving_) {
    s.op(serving_rotary(name, elems));
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

// HF's L2 norm of `rows` heads of hd_ (x.float(), pow, mean, add, rsqrt, mul, cast back), on
// `share` of the layers.
void TransformerSynth::l2_norm(Section& s, const std::string& name, double rows, double share) {
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
void TransformerSynth::soft_cap(Section& s, const std::string& name, double elems) {
  // Scaling by a constant: its backward reads the gradient only.
  s.op(pointwise(name + " aten::div", dt_, elems, 2, 1),
       {pointwise(name + " aten::div (backward)", dt_, elems, 2, 1)});
  unary(s, name, "aten::tanh", "aten::tanh_backward", elems, 6);
  s.op(pointwise(name + " aten::mul", dt_, elems, 2, 1),
       {pointwise(name + " aten::mul (backward)", dt_, elems, 2, 1)});
}

}  // namespace kcast::synth::transformer

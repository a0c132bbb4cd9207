// Gated DeltaNet linear attention (Qwen3-Next, Qwen3.5): the projections, the short causal conv,
// the gates, the chunked (prefill) or recurrent (decode) delta rule and the gated norm, with their
// backward; and the recurrent state a decoding sequence keeps.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/error.h"
#include "predict/synth/transformer/transformer_synth.h"

namespace kcast::synth::transformer {

// One sequence's recurrent state in a linear-attention layer on this GPU: each value head's
// k x v matrix (lin_state_bytes an element) and the conv's last lin_conv - 1 inputs.
double TransformerSynth::linear_state_bytes_per_sequence() const {
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
void TransformerSynth::linear_attention(Section& s) {
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

}  // namespace kcast::synth::transformer

// Softmax attention in a transformer layer: the q / k / v projections (separate, fused, latent),
// q / k norms and rotary positions, the KV-cache write of decoding, the attention core and its
// FLOP count, and the output projection.
//  - Eager attention: head split copies (reshape of permuted views inside matmul/view), QK^T bmm,
//    the family's scale (BERT/GPT-2 truediv, LLaMA mul, OPT scales q before), mask (BERT additive
//    [B,1,1,S], GPT-2 torch.where on the causal buffer, OPT additive [B,1,S,S] + clamp max, LLaMA
//    additive [B,1,S,S]), softmax (LLaMA in fp32 + cast back for 16-bit), dropout (training, p>0),
//    PV bmm, merge-heads copy. Flash attention replaces QK^T..PV with one `attention` row.
//  - Decode (one generation step): each of B sequences adds one token (query length 1) attending to
//    the seq keys of its KV cache, which the step writes in place (a static or paged cache, as
//    serving stacks and HF's StaticCache keep it; HF's default DynamicCache re-concatenates it every
//    step, not modelled). K and V are read from the cache: no head-split copies of them, and
//    LLaMA's repeat_kv expands the whole cache. Every projection is a GEMM with m = B.
//  - Latent attention (DeepSeek MLA): low-rank q and kv projections; decoding with a fused kernel
//    reads a latent cache with absorbed up-projections, as serving stacks run it.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/error.h"
#include "predict/synth/transformer/transformer_synth.h"

namespace kcast::synth::transformer {

// `window`: a sliding-window layer's (0: full attention). Decoding, it attends to the window's
// keys only, eager or fused; in a forward over whole sequences the fused kernel skips the keys
// outside it, while eager attention (HF) computes every score and masks them.
void TransformerSynth::attention(Section& s, int64_t window) {
  const AttentionShape a = attention_shape(window);
  if (latent_decode_) return latent_decode_attention(s, a.Sk);
  attention_projections(s, a);
  kv_cache_write(s, a);
  if (flash_) fused_attention_core(s, a, window);
  else eager_attention_core(s, a);
  attention_output(s, a);
}

TransformerSynth::AttentionShape TransformerSynth::attention_shape(int64_t window) const {
  AttentionShape a;
  a.Sk = decode_ && window > 0 ? std::min(Sk_, window) : Sk_;  // keys a query reads
  a.x_elems = T_ * d_, a.q_elems = T_ * qd_, a.kv_elems = T_ * double(Hkv_ * hd_);
  a.kvd = Hkv_ * hd_;
  // The keys and values attention reads, Sk of them per sequence: the new tokens' own (kv_elems),
  // or decoding, the cache's.
  a.kv_read = double(B_) * double(a.Sk) * double(a.kvd);
  // Latent attention's keys are q.k wide and its values v wide (every head its own); else both are kv_elems.
  a.mla = c_.mla();
  a.k_elems = a.mla ? T_ * double(H_ * qkhd_) : a.kv_elems;
  a.v_elems = a.mla ? T_ * double(H_ * vhd_) : a.kv_elems;
  a.o_elems = T_ * double(od_);
  return a;
}

// q, k and v: the family's projections (separate, fused, latent), q / k norms and rotary positions.
void TransformerSynth::attention_projections(Section& s, const AttentionShape& a) {
  tp_all_reduce(s, "attn.input", false);  // the column-parallel projections' input gradient
  switch (c_.family) {
    case Family::gpt2:
      linear(s, "attn.c_attn", T_, d_, 3 * qd_, c_.bias);
      s.backward_only({pointwise("attn.split aten::cat (split backward)", dt_, 3 * a.q_elems, 2, 0)});
      break;
    case Family::bert:
    case Family::opt:
      s.backward_only({accumulate("attn.input", a.x_elems, 2)});  // x feeds q, k and v
      linear(s, "attn.q_proj|k_proj|v_proj", T_, d_, qd_, c_.bias, 3);
      if (c_.family == Family::opt)
        s.op(pointwise("attn.q_scaling aten::mul", dt_, a.q_elems, 2, 1),
             {pointwise("attn.q_scaling aten::mul (backward)", dt_, a.q_elems, 2, 1)});
      break;
    case Family::llama: {
      if (a.mla) {
        mla_projections(s);
        break;
      }
      const bool qkv_bias = c_.bias || c_.qkv_bias;
      // With an output gate q_proj also makes the gate (Qwen3-Next: query | gate per head).
      const int64_t qw = c_.attn_output_gate ? 2 * qd_ : qd_;
      if (c_.fused_qkv) {
        linear(s, "attn.qkv_proj", T_, d_, qw + 2 * a.kvd, qkv_bias);  // q, k, v: views of its output
        if (c_.attention_sinks) s.param(H_);  // GPT-OSS's sink logits, read by the fused attention kernel
      } else {
        s.backward_only({accumulate("attn.input", a.x_elems, 2)});
        linear(s, "attn.q_proj", T_, d_, qw, qkv_bias);
        if (c_.attention_sinks) s.param(H_);  // GPT-OSS: one sink logit per head
        linear(s, "attn.k_proj|v_proj", T_, d_, a.kvd, qkv_bias, 2);
      }
      if (c_.qk_norm == TransformerConfig::QkNorm::per_head) {
        norm(s, "attn.q_norm", T_ * double(H_), hd_);
        norm(s, "attn.k_norm", T_ * double(Hkv_), hd_);
      } else if (c_.qk_norm == TransformerConfig::QkNorm::whole) {
        norm(s, "attn.q_norm", T_, qd_);
        norm(s, "attn.k_norm", T_, a.kvd);
      }
      if (c_.complex_rotary) {
        llama4_positions(s, a.q_elems, a.kv_elems);
        break;
      }
      if (serving_) {
        rotary(s, "attn.rotary_qk", a.q_elems + a.kv_elems);
      } else {
        rotary(s, "attn.rotary_q", a.q_elems);
        rotary(s, "attn.rotary_k", a.kv_elems);
      }
      break;
    }
  }
}

// Decoding (and a serving stack's every step) writes this step's keys and values into the cache.
void TransformerSynth::kv_cache_write(Section& s, const AttentionShape& a) {
  if (serving_ && !a.mla) {
    // Every step writes its tokens' keys and values into the paged cache (the prompt's too).
    s.op(work("attn.kv_cache vllm::reshape_and_cache_flash", EW, dt_, 0, 2 * a.kv_elems * (e_ + kv_e_)));
  } else if (decode_) {
    // This step's keys and values into the cache (index_copy_ of one token per sequence).
    if (a.mla)
      s.op(work("attn.kv_cache aten::index_copy_ (k|v)", EW, dt_, 0, (a.k_elems + a.v_elems) * (e_ + kv_e_)));
    else if (kv_e_ == e_)
      s.op(times(pointwise("attn.kv_cache aten::index_copy_", dt_, a.kv_elems, 2, 0), 2));
    else  // quantized into the cache as it is written (vLLM's reshape_and_cache with a scale)
      s.op(times(work("attn.kv_cache reshape_and_cache (quantized)", EW, dt_, a.kv_elems, a.kv_elems * (e_ + kv_e_)),
                 2));
  }
}

// Flash attention: one fused kernel for QK^T, softmax and PV (and one for their backward); under
// context parallelism the K / V ring around it. Its FLOP count is here.
void TransformerSynth::fused_attention_core(Section& s, const AttentionShape& a, int64_t window) {
  const double BH = double(B_) * double(H_), SS = double(S_) * double(a.Sk);
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
  double io = 2 * a.q_elems * e_ + 2 * a.kv_read * kv_e_;
  double bwd_io = (3 * a.q_elems + 2 * a.kv_elems + a.q_elems + 2 * a.kv_elems) * e_;
  if (a.mla) {  // q.k and p.v over different head widths; K and V read from the cache when decoding
    const double per_key = double(B_) * double(a.Sk) * double(H_);
    fl = 2.0 * BH * attended * double(qkhd_ + vhd_);
    io = (a.q_elems + a.o_elems) * e_ + per_key * double(qkhd_ + vhd_) * kv_e_;
    bwd_io = (2 * a.q_elems + 2 * a.o_elems + 2 * (a.k_elems + a.v_elems) + a.o_elems) * e_;
  }
  if (o_.cp > 1) {
    // Ring attention: the other cp - 1 GPUs' K and V chunks pass by, one per step (their attention
    // FLOPs are above: this GPU's queries against every key); in backward K and V again with their
    // gradients. Transformer Engine overlaps the steps with the chunks' attention; shown exposed.
    const double chunk = (a.k_elems + a.v_elems) * e_, steps = double(o_.cp - 1);
    const double net = ring_net_share(o_.cp, tp_, o_.gpus_per_node);
    s.op(over_network(collective("attn.cp nccl:send_recv (context-parallel K|V ring)", dt_, steps * chunk), net),
         {over_network(collective("attn.cp nccl:send_recv (context-parallel K|V and dK|dV ring, backward)", dt_,
                                  2 * steps * chunk),
                       net)});
  }
  // Serving stacks run FlashAttention-3 on Hopper and FlashInfer / TRT-LLM kernels on Blackwell:
  // native tensor instructions, so their kernel is not named as PyTorch's mma.sync one.
  // Megatron runs Transformer Engine's cuDNN fused attention (native tensor instructions on Hopper
  // and Blackwell), not PyTorch's FlashAttention-2 kernel.
  const char* fwd_name = serving_    ? "attn.flash vllm::unified_attention (varlen | paged KV)"
                         : megatron_ ? "attn.flash te::fused_attn (cuDNN)"
                                     : "attn.flash aten::_scaled_dot_product_flash_attention";
  const char* bwd_name = megatron_ ? "attn.flash te::fused_attn (cuDNN, backward)"
                                   : "attn.flash aten::_scaled_dot_product_flash_attention_backward";
  s.op(work(fwd_name, KernelClass::attention, dt_, fl, io + BH * double(S_) * 4),
       // Backward recomputes P and runs 5 GEMMs (2.5x the forward); reads Q,K,V,O,dO,LSE, writes dQ,dK,dV.
       {work(bwd_name, KernelClass::attention, dt_, 2.5 * fl, bwd_io + 2 * BH * double(S_) * 4)});
}

// Eager attention as HF's code runs it: head-major copies, the QK^T bmm, the family's scale and
// mask, softmax, dropout and the PV bmm (the core selective recomputation re-runs).
void TransformerSynth::eager_attention_core(Section& s, const AttentionShape& a) {
  const double BH = double(B_) * double(H_), SS = double(S_) * double(a.Sk), N = BH * SS;
  // Head-major copies for the batched GEMMs. matmul reshapes [B,H,S,hd] views of the
  // projections to [B*H,S,hd], a copy unless B = 1; the backward's view of the permuted
  // gradient always copies. OPT copies explicitly (.contiguous()).
  const bool batched = B_ > 1;
  if (a.mla) {
    copy(s, "attn.v_heads", a.v_elems, 1, batched, true);  // v: a strided split of kv_b's output
  } else if (c_.family == Family::llama) {
    if (H_ == Hkv_) copy(s, "attn.v_heads", a.kv_elems, 1, batched, true);
    else {
      // repeat_kv: expand + reshape of k and v to all heads; backward sums the groups.
      // Every key and value read is copied to each of its group's heads (decoding, the whole cache).
      const double kv_heads = a.kv_read * double(H_) / double(Hkv_);
      s.op(times(work("attn.repeat_kv aten::clone", EW, dt_, 0, (a.kv_read + kv_heads) * e_), 2),
           {times(work("attn.repeat_kv aten::sum (backward)", KernelClass::reduction, dt_, a.q_elems,
                       (a.kv_elems + a.q_elems) * e_),
                  2)});
    }
  } else if (decode_) {
    // K and V are the cache's [B, H, Sk, hd]; only the new queries are made head-major.
    copy(s, "attn.split_heads", a.q_elems, 1, batched || c_.family == Family::opt, false);
  } else {
    copy(s, "attn.split_heads", a.q_elems, 3, batched || c_.family == Family::opt, true);
  }
  const size_t core = s.fwd.size();  // the core attention selective recomputation re-runs
  s.op(gemm("attn.qk aten::bmm (QK^T)", dt_, B_ * H_, S_, a.Sk, qkhd_),
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
                   N / a.Sk, a.Sk),
         {over_rows(work("attn.softmax aten::_softmax_backward_data", KernelClass::softmax, DType::fp32, 4 * N, N * 12),
                    N / a.Sk, a.Sk)});
    s.op(work("attn.softmax aten::_to_copy", EW, dt_, 0, N * (e_ + 4)),
         {work("attn.softmax aten::_to_copy (backward)", EW, dt_, 0, N * (e_ + 4))});
  } else {
    s.op(over_rows(pointwise("attn.softmax aten::_softmax", dt_, N, 2, 5, KernelClass::softmax), N / a.Sk, a.Sk),
         {over_rows(pointwise("attn.softmax aten::_softmax_backward_data", dt_, N, 3, 4, KernelClass::softmax),
                    N / a.Sk, a.Sk)});
  }
  dropout(s, "attn.dropout", N, c_.attention_dropout);
  s.op(gemm("attn.pv aten::bmm (PV)", dt_, B_ * H_, S_, vhd_, a.Sk),
       {gemm("attn.pv aten::bmm (dP)", dt_, B_ * H_, S_, S_, vhd_),
        gemm("attn.pv aten::bmm (dV)", dt_, B_ * H_, S_, vhd_, S_)});
  if (o_.selective_recompute)
    for (size_t i = core; i < s.fwd.size(); ++i) s.recompute_ops.push_back(i);
}

// The heads merged, an output gate where the model has one, the output projection and its
// tensor-parallel all-reduce, the residual dropout.
void TransformerSynth::attention_output(Section& s, const AttentionShape& a) {
  // .contiguous() of the permuted output; its gradient reaches the PV bmm as a permuted view,
  // reshaped with a copy unless B = 1.
  if (!serving_) copy(s, "attn.merge_heads", a.o_elems, 1, true, B_ > 1);  // serving kernels write [T, H x hd]
  if (c_.attn_output_gate) {  // out * sigmoid(gate): eager two kernels, a serving stack's compiled graph one
    if (serving_) s.op(work("attn.output_gate sigmoid|mul", EW, dt_, 5 * a.o_elems, 3 * a.o_elems * e_));
    else {
      s.op(pointwise("attn.output_gate aten::sigmoid", dt_, a.o_elems, 2, 4));
      s.op(pointwise("attn.output_gate aten::mul", dt_, a.o_elems, 3, 1));
    }
  }
  linear(s, "attn.out_proj", T_, od_, d_, c_.bias);
  tp_all_reduce(s, "attn.out_proj", true);
  dropout(s, "attn.resid_dropout", Tn_ * d_, c_.hidden_dropout);
}

// DeepSeek's multi-head latent attention in eager (HF DeepseekV3Attention): q = q_b(norm(q_a(x)))
// (or one q projection), [latent | rotary key] = kv_a(x), k_nope | v = kv_b(norm(latent)) per head;
// rotary on q's rope part and on the one shared rotary key; q and k assembled by cat (the shared
// key expanded to every head). Tensor parallelism splits the heads (q_b, kv_b, o); q_a and kv_a run
// whole on every GPU.
void TransformerSynth::mla_projections(Section& s) {
  const int64_t kvl = c_.kv_lora_rank, rope = c_.qk_rope_dim, nope = c_.qk_nope_dim;
  mla_query_and_latent(s);
  const size_t up = s.fwd.size();  // Megatron's mla_up_proj: kv_b, the rotary and the assembly (q_b above)
  linear(s, "attn.kv_b_proj", T_, kvl, H_ * (nope + vhd_), false);
  rotary(s, "attn.rotary_q", T_ * double(H_ * rope));
  rotary(s, "attn.rotary_k", T_ * double(rope));
  const double qk = T_ * double(qd_);  // q's (and k's) elements over every head
  s.op(times(pointwise("attn.cat (q_nope|q_pe, k_nope|k_pe)", dt_, qk, 2, 0), 2),
       {times(pointwise("attn.cat (backward: slices)", dt_, qk, 2, 0), 2),
        work("attn.k_pe aten::sum (expand backward)", KernelClass::reduction, dt_, T_ * double(H_ * rope),
             T_ * double(H_ * rope + rope) * e_)});
  recompute_from(s, up, kRecomputeMlaUpProj);
}

// Both MLA paths: q (q_a, its norm, q_b; or one q projection) and [latent | rotary key] = kv_a(x)
// with the latent normed.
void TransformerSynth::mla_query_and_latent(Section& s) {
  const int64_t ql = c_.q_lora_rank, kvl = c_.kv_lora_rank, rope = c_.qk_rope_dim;
  s.backward_only({accumulate("attn.input", T_ * d_)});  // x feeds q (or q_a) and kv_a
  if (ql > 0) {
    linear(s, "attn.q_a_proj", T_, d_, ql, false);
    norm(s, "attn.q_a_layernorm", T_, ql);
    const size_t up = s.fwd.size();
    linear(s, "attn.q_b_proj", T_, ql, qd_, false);
    recompute_from(s, up, kRecomputeMlaUpProj);
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
void TransformerSynth::latent_decode_attention(Section& s, int64_t Sk) {
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

// Llama 4's per-layer position handling, each op on the share of layers it runs in (rope_fraction
// of them rotary, the rest NoPE; the rows' counts carry the fraction). Rotary: q and k cast to
// fp32, viewed as complex, multiplied by the complex table, cast back; then, where use_qk_norm,
// their L2 norm (HF's composite without a weight) over each head. NoPE layers with temperature
// tuning scale q by log(floor((pos + 1) / floor_scale) + 1) * attn_scale + 1: a few ops on the
// positions, then a multiply (fp32 out) and the cast back.
void TransformerSynth::llama4_positions(Section& s, double q_elems, double kv_elems) {
  const double rope = c_.rope_fraction, nope = 1 - rope;
  const DType f32 = DType::fp32;
  if (serving_) {
    // The serving engines run the same math in fewer passes (vLLM's Llama4Attention, compiled; SGLang's
    // and TensorRT-LLM's alike): on the rotary layers one rotary kernel over q and k (interleaved pairs,
    // the same pass as a half-split rotary), then where use_qk_norm one fused kernel that takes each q
    // and k head to fp32, divides by its RMS and writes it back in the model's dtype; on the NoPE layers
    // the queries times the temperature of their positions, one fused multiply.
    if (rope > 0) {
      s.op(times(serving_rotary("attn.rotary_qk", q_elems + kv_elems), rope));
      if (c_.qk_l2_norm) {
        const double elems = q_elems + kv_elems, rows = elems / double(hd_);
        s.op(times(over_rows(work("attn.qk_l2_norm" + std::string(engine_kernel(" triton_fused_l2_norm (q|k)",
                                                                              " sgl_kernel::l2_norm (q|k)",
                                                                              " trtllm::l2_norm (q|k)")),
                                  KernelClass::normalization, f32, 4 * elems, 2 * elems * e_),
                             rows, double(hd_)),
                   rope));
      }
    }
    if (c_.temperature_tuning && nope > 0)
      s.op(times(work("attn.temperature" + std::string(engine_kernel(" triton_fused_mul (q, temperature)",
                                                                     " sgl_kernel::mul (q, temperature)",
                                                                     " trtllm::mul (q, temperature)")),
                      EW, dt_, 6 * q_elems / double(hd_) + q_elems, 2 * q_elems * e_ + T_ * 8),
                 nope));
    return;
  }
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

}  // namespace kcast::synth::transformer

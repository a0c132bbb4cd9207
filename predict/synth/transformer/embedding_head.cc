// What comes before the first layer and after the last: token, position and type embeddings (with
// the masks and rotary tables eager code builds there), the final norm and LM / classifier /
// pretraining heads, a serving stack's sampled-token logits and sampler, and the loss. The word
// embedding and the LM head split the vocabulary under tensor parallelism (an all-reduce after
// the lookup; the cross-entropy all-reduces each token's max, target logit and sum); embedding
// backward zero-fills the table gradient.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "model/error.h"
#include "predict/synth/transformer/transformer_synth.h"

namespace kcast::synth::transformer {

// `vocab_parallel`: the word embedding, whose table tensor parallelism splits (V_ rows here) and
// whose lookups the group all-reduces.
void TransformerSynth::embedding(Section& s, const std::string& name, double rows, int64_t table, bool vocab_parallel) {
  if (vocab_parallel) table = V_;
  const double out = rows * double(d_);
  s.op(work(name + " aten::embedding", KernelClass::embedding, dt_, 0, rows * 8 + 2 * out * e_),
       {pointwise(name + " aten::zero_ (embedding grad)", dt_, double(table) * d_, 1, 0),
        work(name + " aten::embedding_dense_backward", KernelClass::embedding, dt_, out,
             rows * 8 * 4 + 2 * out * e_)});
  s.param(table * d_);
  if (vocab_parallel) tp_all_reduce(s, name, true, /*block=*/false);
}

// ---- sections --------------------------------------------------------------------------
void TransformerSynth::embeddings(Section& s) {
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

void TransformerSynth::pooler(Section& s) {
  // The first token of each sequence: a strided view, so no copy forward; select_backward
  // zero-fills the full hidden-state gradient.
  if (train_) s.backward_only({pointwise("pooler.select aten::select_backward (zero_)", dt_, T_ * d_, 1, 0)});
  linear(s, "pooler.dense", double(B_), d_, d_, true);
  unary(s, "pooler.activation", "aten::tanh", "aten::tanh_backward", double(B_) * d_, 6);
}

// Serving: logits only for the tokens it samples (a prompt's last; every token of a decode step),
// gathered from the tensor-parallel GPUs, then the sampler over the whole vocabulary.
void TransformerSynth::serving_head(Section& s) {
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

void TransformerSynth::head(Section& s) {
  if (serving_) return serving_head(s);
  if (c_.family != Family::bert) norm(s, "final_norm", Tn_);
  const double V = double(V_);
  switch (head_) {
    case HeadKind::automatic:
    case HeadKind::none:
      return;
    case HeadKind::lm:
      tp_all_reduce(s, "lm_head.input", false, /*block=*/false);
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
      tp_all_reduce(s, "cls.decoder.input", false, /*block=*/false);
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
void TransformerSynth::cross_entropy(Section& s, const std::string& name, double rows, double classes, bool vocab_parallel) {
  const double n = rows * classes;
  if (vocab_parallel)
    s.op(times(over_network(all_reduce(name + " nccl:all_reduce (vocab-parallel max|target|sum)", DType::fp32, rows,
                                       tp_),
                            tp_net_share()),
               3));
  if (fused_) {
    // One kernel each way (Megatron's fused vocab-parallel cross-entropy, cross_entropy_loss_fusion;
    // torch.compile's): forward reads the logits once (max, target logit and sum of exponentials, the
    // all-reduces between them above), backward writes their gradient from the logits it reads again.
    const char* kernel = megatron_ ? " te::fused_cross_entropy" : " triton_fused_cross_entropy";
    s.op(over_rows(work(name + kernel + " (forward)", KernelClass::softmax, DType::fp32, 5 * n, n * e_ + rows * 12),
                   rows, classes),
         {over_rows(work(name + kernel + " (backward)", KernelClass::softmax, DType::fp32, 4 * n, 2 * n * e_ + rows * 12),
                    rows, classes)});
    return;
  }
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

void TransformerSynth::loss(Section& s) {
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

// One multi-token prediction depth before its layer (Megatron-Core's MultiTokenPredictionLayer,
// DeepSeek-V3 section 2.2): the next-shifted tokens embedded again (the shared embedding), that and
// the previous depth's hidden state each RMS-normed, their concatenation projected back to the hidden
// width (eh_proj, column-parallel under TP); the transformer layer follows (run()).
void TransformerSynth::mtp_depth(Section& s) {
  s.op(work("embed aten::embedding (shifted tokens)", KernelClass::embedding, dt_, 0, T_ * 8 + 2 * T_ * d_ * e_),
       {work("embed aten::embedding_dense_backward", KernelClass::embedding, dt_, T_ * d_,
             T_ * 8 * 4 + 2 * T_ * d_ * e_)});
  norm(s, "enorm", Tn_);
  norm(s, "hnorm", Tn_);
  s.op(pointwise("concat aten::cat", dt_, 2 * Tn_ * d_, 2, 0), {pointwise("concat aten::split (backward)", dt_, 2 * Tn_ * d_, 2, 0)});
  linear(s, "eh_proj", T_, 2 * d_, d_ / tp_, false);
}

// A depth's predictions: the final norm and the shared output head (its weights the main head's), then
// the loss on the tokens one more step ahead.
void TransformerSynth::mtp_head(Section& s) {
  norm(s, "final_norm", Tn_);
  tp_all_reduce(s, "lm_head.input", false, /*block=*/false);
  linear(s, "lm_head", T_, d_, V_, false, 1, /*register_params=*/false);
  cross_entropy(s, "lm", T_, double(V_), tp_ > 1);
}

}  // namespace kcast::synth::transformer

// What a synthesized transformer step holds in activations, for `kcast synth`'s memory line: in
// training what autograd keeps for the backward (Korthikanti et al. 2022's accounting, tensor by
// tensor for the ops synth emits), the first pipeline stage's share, the loss backward's transient;
// at inference one layer's transient peak. From one GPU's shapes as the synthesizer derives them
// (transformer_synth.cc); tests/synth/activation_memory_test.cc and friends check the closed forms.
#pragma once
#include <cstdint>

#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth {

// One GPU's share of a step (tensor parallelism applied), in the synthesizer's terms.
struct StepShape {
  int64_t B = 0, S = 0, Sk = 0;  // sequences of one micro-batch, queries per sequence, keys each query reads
  double T = 0, Tn = 0;          // tokens; those outside the tensor-parallel regions (T / tp under SP)
  int64_t tp = 1, d = 0;         // tensor-parallel degree, hidden size
  int64_t qd = 0, H = 0, Hkv = 0, hd = 0;  // q's width, heads, KV heads, the rotary head width (this GPU's)
  int64_t qkhd = 0, vhd = 0, od = 0;       // per-head q.k and v widths, attention's output width
  int64_t F = 0, V = 0;                    // MLP width and vocabulary (this GPU's)
  double e = 2;                            // bytes per activation element
  bool flash = false, decode = false;
  bool serving = false;  // Runtime::serving: fused norms, logits of the sampled tokens only
  bool fused_experts = false;  // a mixture's experts as fused kernels (serving, quantized inference)
  bool softmax_upcast = false;  // eager softmax in fp32 on 16-bit scores (HF's Llama family)
  HeadKind head = HeadKind::lm;  // resolved: never `automatic`
  double stage_layers = 0;       // layers this GPU holds
  double stage_dense_layers = 0;  // of them, a mixture's dense layers
  double Tmoe = 0;                // tokens a mixture's experts see on this GPU (Tn when folded)
  int64_t etp = 1;                // expert tensor parallelism: tp, or 1 folded
};

class ActivationMemory {
 public:
  ActivationMemory(const TransformerConfig& c, const SynthOptions& o, const StepShape& s) : c_(c), o_(o), s_(s) {}
  // Training: one micro-batch's kept activations on this GPU (the last pipeline stage's).
  double activation_bytes() const;
  // Training with pipeline stages: the micro-batches the first stage holds at once, and its bytes.
  double first_stage_microbatches() const;
  double first_stage_activation_bytes() const;
  // Training: what the loss's backward allocates beside the kept activations.
  double loss_transient_bytes() const;
  // Inference: the most one layer's forward holds at once.
  double inference_peak_bytes() const;
  // Training with --cpu-offload-layers: what one offloaded layer keeps for the backward (the stage's
  // layers on average), copied to the host in the forward and back in the backward; those layers'
  // share leaves the kept activations above.
  double offloaded_layer_bytes() const;

 private:
  // Fused kernels (Megatron-LM / Transformer Engine, torch.compile) keep what their own backward reads.
  bool fused() const;
  // Bytes per element of a block projection's saved input: Transformer Engine keeps the recipe's
  // narrow column-wise copy (FP8: 1 byte, NVFP4: half, plus block scales) for the weight gradient.
  double gemm_input_bytes() const;
  double norm_saved(double rows, double width) const;
  double attention_saved() const;
  double gated_saved(double rows, double F) const;
  double mlp_saved(bool dense_mlp) const;
  double layer_activation_bytes() const;
  double stage_layers_saved() const;  // every layer of the stage keeping all it saves
  // Of it: what each micro-batch keeps, and the one layer's whole activations alive while it is
  // recomputed (full recomputation, torchtitan's policy; 0 otherwise).
  double kept_layer_bytes() const;
  double recompute_transient_bytes() const;
  double recomputed_layers() const;  // layers of this stage that keep only their inputs
  // torchtitan's per-op selective checkpointing: what one layer keeps (transformer_synth.cc).
  double op_sac_saved() const;
  double embedding_activation_bytes() const;
  double head_activation_bytes() const;

  const TransformerConfig& c_;
  const SynthOptions& o_;
  StepShape s_;
};

}  // namespace kcast::synth

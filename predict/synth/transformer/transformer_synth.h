// The transformer synthesizer's one class, TransformerSynth: the shapes of one GPU's share of a step
// (its members) and a member function per piece of a layer. The files of this folder each define the
// members of one concern, named in the groups below; only they include this header. The rest of
// kcast reaches the synthesizer through predict/synth/synth.h (synthesize_transformer).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "predict/synth/activation_memory.h"
#include "predict/synth/emitter.h"
#include "predict/synth/recompute_modules.h"
#include "predict/synth/transformer/quantize.h"
#include "predict/synth/transformer/recipe.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth::transformer {

constexpr KernelClass EW = KernelClass::elementwise;
constexpr const char* kLayerSection = "layer.";  // the repeated block (one layer, count = layers)
constexpr const char* kDenseLayerSection = "dense_layer.";  // a mixture's dense layers, wherever they sit
constexpr const char* kLocalLayerSection = "local_layer.";  // sliding-window layers, where the window bites
constexpr const char* kLinearLayerSection = "linear_layer.";  // Gated DeltaNet layers (Qwen3-Next, Qwen3.5)
constexpr const char* kMtpSection = "mtp.";  // multi-token prediction depths (SynthOptions::mtp_layers)
inline bool in_block(const Section& s) {
  return s.prefix == kLayerSection || s.prefix == kDenseLayerSection || s.prefix == kLocalLayerSection ||
         s.prefix == kLinearLayerSection || s.prefix == kMtpSection;
}

class TransformerSynth {
 public:
  TransformerSynth(const TransformerConfig& c, const SynthOptions& o);
  std::vector<Kernel> run();
  Footprint footprint() const;

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
  // The serving engine's name for one of its layer kernels (SynthOptions::serving_kernels): vLLM's,
  // SGLang's or TensorRT-LLM's.
  const char* engine_kernel(const char* vllm, const char* sglang, const char* trtllm) const {
    return o_.serving_kernels == ServingKernels::sglang   ? sglang
           : o_.serving_kernels == ServingKernels::trtllm ? trtllm
                                                          : vllm;
  }
  // --dtype fp8 / fp4 (inference only): the blocks' projections run narrow; null: none.
  const QuantKernels* quant_ = nullptr;
  double quant_params_ = 0;  // the narrow weights this GPU holds (quant_)
  // Latent attention decoding with a fused kernel (--attention flash): the serving stacks' MLA path
  // (latent cache, absorbed up-projections; latent_decode_attention below).
  bool latent_decode_ = false;
  double absorbed_copy_bytes_ = 0;  // the BF16 copies of kv_b's halves that FP8 serving keeps for it
  // Training with a low-precision recipe (--recipe): the block projections' kernels; null: none.
  const RecipeKernels* recipe_ = nullptr;
  double recipe_weight_elems_ = 0;  // the narrow weights this GPU quantizes once per step
  double recipe_layer_elems_ = 0;   // the most narrow weights one repetition of a section holds (a layer)
  std::map<const Section*, double> recipe_section_elems_;  // per section, one repetition's narrow weights
  // Megatron-LM / Transformer Engine's fused kernels (--framework megatron), or torch.compile's
  // (--compile): one kernel per norm, rotary, gated activation and cross-entropy.
  bool fused_ = false;
  bool megatron_ = false;
  Tape tape_;
  double stage_layers_ = 0;  // the slowest pipeline stage's layers (pipeline_layout.h)
  double stage_layers() const { return stage_layers_; }  // layers this GPU holds
  // Whether a sliding window is shorter than the keys a query sees (prefill: the sequence; decode:
  // the cache).
  bool window_bites() const { return c_.sliding_window > 0 && c_.local_layers > 0 && c_.sliding_window < Sk_; }
  // The sliding-window layers this GPU holds as their own section (0 where the window does not bite):
  // with pipeline stages the critical stage's share in the model's proportion (GPT-OSS alternates
  // them, Gemma 3 has five local layers to one global).
  double local_stage_layers() const {
    return window_bites() ? stage_layers() * double(c_.local_layers) / double(c_.layers) : 0;
  }
  // A mixture's dense layers on this GPU: all on one stage; with pipeline stages none where they all
  // lead (DeepSeek-V3's first three sit on the first stage, the critical stage holds expert layers
  // only), else the critical stage's share in the model's proportion (Llama 4's interleaving).
  double dense_stage_layers() const;
  // A mixture's expert blocks: the tokens they route on this GPU and the tensor-parallel split of each
  // expert — folded over the tensor-parallel ranks (SynthOptions::folded_experts), the sequence-
  // parallel shard and whole experts; else every token of the region and experts split like the MLP.
  double moe_tokens() const { return o_.folded_experts() ? Tn_ : T_; }
  // Token dropping (SynthOptions::moe_capacity_factor), inside moe() where T_ is the routed tokens: the
  // rows one expert takes from this GPU at most (0: dropless), and the rows this GPU's tokens become;
  // the rows the busiest GPU of the expert-parallel group receives (SynthOptions::moe_load_imbalance).
  double expert_capacity() const;
  double routed_rows() const;
  double busiest_rows() const;
  int64_t expert_tp() const { return o_.folded_experts() ? 1 : tp_; }
  // The share of a tensor-parallel collective's bytes that leaves the node (adjacent ranks).
  double tp_net_share() const { return ring_net_share(tp_, 1, o_.gpus_per_node); }
  // An activation function's forward and backward kernels and its FLOPs per element (gate_activation).
  struct ActivationOps {
    const char *op, *bwd_op;
    double flops;
  };

  // transformer_synth.cc: the step, one layer, the memory footprint
  bool softmax_upcast() const;
  Section& layer_section(const char* prefix, double count);
  StepShape shape() const;
  double model_flops_per_token() const;
  void layer(Section& s, bool dense_mlp = false, int64_t window = 0, bool linear = false);
  // torchtitan's per-op selective activation checkpointing: what of a layer's forward runs again.
  void torchtitan_op_sac(Section& s) const;

  // blocks.cc: projections, norms, residuals, dropout, rotary, soft caps
  void linear(Section& s, const std::string& name, double rows, int64_t in, int64_t out, bool bias, double n = 1, bool register_params = true, bool quantizable = true);
  void recipe_linear(Section& s, const std::string& name, double rows, int64_t in, int64_t out, double n);
  void recipe_weights();
  Kernel accumulate(const std::string& name, double elems, double n = 1);
  void unary(Section& s, const std::string& name, const std::string& op, const std::string& bwd_op, double elems, double flops);
  void dropout(Section& s, const std::string& name, double elems, double p);
  void copy(Section& s, const std::string& name, double elems, double n = 1, bool fwd = true, bool bwd = true);
  void residual_add(Section& s, const std::string& name);
  void norm(Section& s, const std::string& name, double rows, int64_t width = 0);
  void residual_norm(Section& s, const std::string& name);
  void pre_norm(Section& s, const std::string& name);
  void rotary(Section& s, const std::string& name, double elems);
  Kernel serving_rotary(const std::string& name, double elems) const;
  void l2_norm(Section& s, const std::string& name, double rows, double share);
  void soft_cap(Section& s, const std::string& name, double elems);

  // parallel.cc: tensor-, sequence-, expert- and pipeline-parallel collectives
  void all_to_all(Section& s, const std::string& name, bool dispatch);
  // `block`: the collective feeds or follows a block projection, which a training recipe runs narrow:
  // its all-gathers then carry the quantized tensor (the head's and the embedding's stay 16-bit).
  void tp_all_reduce(Section& s, const std::string& name, bool forward, bool block = true);
  void stage_sends(Section& s);
  void cpu_offload(Section& s);

  // embedding_head.cc: embeddings, heads, loss
  void embedding(Section& s, const std::string& name, double rows, int64_t table, bool vocab_parallel = false);
  void embeddings(Section& s);
  void pooler(Section& s);
  void serving_head(Section& s);
  void head(Section& s);
  void cross_entropy(Section& s, const std::string& name, double rows, double classes, bool vocab_parallel = false);
  void loss(Section& s);
  void mtp_depth(Section& s);
  void mtp_head(Section& s);

  // attention.cc: softmax attention and its FLOP count (dense, GQA, MLA, windows, Llama 4)
  void attention(Section& s, int64_t window = 0);
  // The sizes attention's pieces share (attention_shape).
  struct AttentionShape {
    int64_t Sk = 0;  // keys a query reads
    double x_elems = 0, q_elems = 0, kv_elems = 0;
    int64_t kvd = 0;     // this GPU's key / value width
    double kv_read = 0;  // keys and values read (decoding: the cache's)
    bool mla = false;
    double k_elems = 0, v_elems = 0, o_elems = 0;
  };
  AttentionShape attention_shape(int64_t window) const;
  void attention_projections(Section& s, const AttentionShape& a);
  void kv_cache_write(Section& s, const AttentionShape& a);
  void fused_attention_core(Section& s, const AttentionShape& a, int64_t window);
  void eager_attention_core(Section& s, const AttentionShape& a);
  void attention_output(Section& s, const AttentionShape& a);
  void mla_projections(Section& s);
  void mla_query_and_latent(Section& s);
  void latent_decode_attention(Section& s, int64_t Sk);
  void llama4_positions(Section& s, double q_elems, double kv_elems);

  // linear_attention.cc: Gated DeltaNet linear attention
  double linear_state_bytes_per_sequence() const;
  void linear_attention(Section& s);

  // mlp_moe.cc: the MLP, routers and experts
  ActivationOps gate_activation() const;
  // `act_module`: the recompute module (recompute_modules.h) the gated activation belongs to, if any.
  void swiglu(Section& s, const std::string& name, double rows, int64_t F, bool bias, double n = 1,
              bool register_params = true, unsigned act_module = 0);
  // Training with Megatron's --recompute-modules naming `module`: the forward rows from `first` on run
  // again before the backward (Section::recompute_ops).
  void recompute_from(Section& s, size_t first, unsigned module) const;
  void gate(Section& s, const std::string& name, double e, double n);
  void moe(Section& s);
  bool all_experts_eagerly() const;
  void topk_first_routing(Section& s);
  void eager_experts(Section& s, double hit, double Te, int64_t Fe);
  void all_experts(Section& s, int64_t Fe);
  void sigmoid_routing(Section& s);
  void group_limit(Section& s);
  void fused_experts(Section& s, double hit, double Te, int64_t Fe);
  void megatron_experts(Section& s, double hit, double Te, int64_t Fe);
  void mlp(Section& s, bool dense_mlp);
};

}  // namespace kcast::synth::transformer

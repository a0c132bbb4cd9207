// Workload synthesis (`kcast synth`): the kernel list PyTorch eager would launch for one step of a
// model — a transformer (built-in name or Hugging Face config.json) or a ResNet — in inference or
// training. Repeated layers are one set of rows with `count` = number of layers.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/dtype.h"
#include "model/kernel.h"

namespace kcast::synth {

// infer: one forward pass over batch x seq tokens (prefill); train: forward, backward and the
// optimizer step; decode: one generation step of a decoder, one new token per sequence attending to
// a KV cache of seq tokens (forward only); generate: a whole generation, the prompt's forward (infer
// over batch x seq, rows prefixed `prefill.`) then `new_tokens` decode steps, each attending to the
// prompt and the tokens before it (rows prefixed `decode@CTX.`, grouped: generation.h).
enum class Mode { infer, train, decode, generate };
enum class AttentionImpl { eager, flash };
// Whose kernels an inference step launches: PyTorch eager as Hugging Face's modeling code runs it, or
// a serving stack's (vLLM / SGLang: fused norms with the residual add, one rotary kernel, merged
// q|k|v and gate|up projections, silu_and_mul, a paged KV cache written every step, fused attention,
// fused MoE, logits for the sampled tokens only and the sampler).
enum class Runtime { eager, serving };
// Under Runtime::serving, whose layer kernels run the norms, rotary embedding and gated activation:
// vLLM's CUDA ops (csrc/layernorm_kernels.cu, pos_encoding_kernels.cu, activation_kernels.cu: one
// element per thread and loop step, model/thread_access.h; its fused_add_rms_norm loads vectors),
// SGLang's sgl-kernel (FlashInfer's vectorized norm, rope and activation kernels) or TensorRT-LLM's
// (vectorized norm and activation kernels; rope inside the attention's QKV preprocessing).
enum class ServingKernels { vllm, sglang, trtllm };
// adamw: torch.optim.AdamW, Adam's step after a decoupled weight decay of the parameters.
enum class Optimizer { adam, adamw, sgd, none };
// Whether the optimizer keeps Adam's two moments per parameter.
inline bool keeps_moments(Optimizer o) { return o == Optimizer::adam || o == Optimizer::adamw; }
// Which output head a transformer carries. `automatic`: decoders get the LM head; encoders (BERT)
// get the sequence-classification head (pooler + classifier) in inference and the pre-training
// heads (MLM + next-sentence) in training — what the NeuSight measurements ran.
enum class HeadKind { automatic, lm, classifier, pretraining, none };

// Low-precision training recipes, as Transformer Engine runs them: which GEMMs run narrow and how
// their operands are scaled (docs/synth.md, "Training recipes"). The block layers' projections run
// their forward, data-gradient and weight-gradient GEMMs narrow; attention, norms, embeddings and the
// output layer stay BF16.
//  delayed: FP8 (E4M3 forward, E5M2 gradients), per-tensor scales from an amax history
//           (te.recipe.DelayedScaling, the default of the NeMo / Megatron-Bridge 24.x-25.x containers)
//  current: FP8 with per-tensor scales from each tensor's own amax (Float8CurrentScaling): one more
//           read of every quantized tensor
//  mxfp8:   FP8 with one E8M0 scale per 32 values in each direction (MXFP8BlockScaling; Blackwell)
//  block:   FP8 with DeepSeek-V3's 1x128 activation and 128x128 weight scales (Float8BlockScaling)
//  nvfp4:   FP4 (E2M1) with one E4M3 scale per 16 values and a tensor scale (NVFP4BlockScaling;
//           Blackwell), a random Hadamard transform of the weight-gradient operands
enum class Recipe { none, delayed, current, mxfp8, block, nvfp4 };
// How expert parallelism moves the routed tokens to their experts' GPUs and the results back
// (Megatron-Core's --moe-token-dispatcher-type; its flex dispatcher's backends):
//  alltoall:  NCCL all-to-all of every (token, expert) pair: a token chosen by k experts crosses
//             k times (ep - 1) / ep of the group's links, in the activations' 16-bit dtype;
//  deepep:    DeepSeek's DeepEP (and NVIDIA's HybridEP, `hybridep`): each token is sent once to
//             every other GPU holding at least one of its experts over NVLink, and once to every
//             other node over the network (RDMA), where it is forwarded over NVLink; the combine
//             returns the same bytes (summed per node before they cross the network);
//  allgather: every GPU gathers the group's tokens (all-gather) and returns its experts' outputs by
//             reduce-scatter, k and the routing aside.
// Megatron quantizes inside the expert GEMMs: the tokens travel in the 16-bit activations' dtype
// whatever the recipe.
enum class MoeDispatcher { alltoall, deepep, hybridep, allgather };
inline const char* to_string(MoeDispatcher d) {
  return d == MoeDispatcher::deepep     ? "deepep"
         : d == MoeDispatcher::hybridep ? "hybridep"
         : d == MoeDispatcher::allgather ? "allgather"
                                          : "alltoall";
}
// Whose kernels a training step launches: eager (PyTorch as Hugging Face's code runs it, today's
// default), megatron (Megatron-LM / NeMo / Megatron-Bridge with Transformer Engine: fused norms, RoPE,
// SwiGLU and cross-entropy, cuDNN fused attention, the distributed optimizer's fused Adam, and
// communication overlapped with compute), torchtitan / automodel (PyTorch FSDP2: eager kernels, or
// torch.compile's fused ones with --compile, parameter all-gathers prefetched behind compute).
enum class Framework { eager, megatron, torchtitan, automodel };
// The --framework name of a framework.
inline const char* to_string(Framework f) {
  return f == Framework::megatron     ? "megatron"
         : f == Framework::torchtitan ? "torchtitan"
         : f == Framework::automodel  ? "automodel"
                                      : "eager";
}

struct SynthOptions {
  int64_t batch = 0;  // 0: model default (1)
  int64_t seq = 0;    // 0: model default (its context length; 512 for BERT)
  Mode mode = Mode::infer;
  std::optional<DType> dtype;  // empty: bf16 for llama-family models, fp32 otherwise
  AttentionImpl attention = AttentionImpl::eager;
  Runtime runtime = Runtime::eager;  // serving: inference only, fused attention
  ServingKernels serving_kernels = ServingKernels::vllm;  // kcast serve / plan serve: the --engine's
  Optimizer optimizer = Optimizer::adam;  // train only
  HeadKind head = HeadKind::automatic;
  bool loss = true;  // train only: include the loss (cross-entropy) and its backward
  // train only: full activation recomputation (HF gradient checkpointing, Megatron-LM's "full"
  // granularity): each layer keeps only its input, and its forward runs again before its backward.
  bool recompute = false;
  // With recompute: Megatron-LM's block method (--recompute-method block --recompute-num-layers N),
  // only the first N layers of each pipeline chunk recomputed; 0: every layer.
  int64_t recompute_layers = 0;
  // train only, --framework megatron, one pipeline stage, no recomputation: Megatron-LM's CPU
  // activation offloading (--cpu-offloading-num-layers N, Transformer Engine's offload context): what
  // N layers keep for the backward is copied to host memory over the GPU's host link during the
  // forward and back during the backward, behind the other layers' compute.
  int64_t cpu_offload_layers = 0;
  // train only: Megatron-LM's selective recomputation (Korthikanti et al. 2022): eager attention's
  // core (QK^T through the attention over V) keeps no scores and runs again before its backward.
  bool selective_recompute = false;
  // train only, --framework megatron: Megatron-LM's --recompute-modules (selective granularity), the
  // RecomputeModule bits of recompute_modules.h; core_attn is selective_recompute above. Each module's
  // forward runs again before its backward and what it alone kept is freed.
  unsigned recompute_modules = 0;
  bool recomputes(unsigned module) const { return (recompute_modules & module) != 0; }
  // train only, --framework megatron: Megatron-LM's per-layer CUDA graphs (--cuda-graph-modules), the
  // CudaGraphModule bits of cuda_graph_modules.h: what they capture issues as one launch a direction.
  unsigned cuda_graph_modules = 0;
  // With --framework torchtitan, --recompute selective is torchtitan's per-op checkpointing policy
  // (transformer_synth.cc, torchtitan_op_sac): its kernels and what it keeps both follow it.
  bool torchtitan_op_sac() const { return selective_recompute && framework == Framework::torchtitan; }
  // Architecture overrides (0: keep the model's value), e.g. to reproduce a measured setup.
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0;
  // Parallelism (Megatron-LM's scheme); the kernel list is one GPU's step. `batch` is the global
  // batch: each of the `dp` data-parallel replicas runs batch / dp, in `microbatches` micro-batches.
  // Tensor parallelism splits heads, MLP width and vocabulary over `tp` GPUs, with the all-reduces
  // of the activations; pipeline parallelism puts layers / pp on each of `pp` stages and the list
  // follows the critical path of the schedule. Expert parallelism (mixtures of experts) splits the
  // experts over `ep` of the data-parallel replicas, which exchange tokens by all-to-all. Where ep
  // does not divide dp but divides tp x dp, the expert-parallel group folds over the tensor-parallel
  // ranks too (Megatron-Core's MoE parallel folding, expert tensor parallelism 1: each GPU routes its
  // sequence-parallel shard of the tokens and holds whole experts; folded_experts()).
  int64_t tp = 1, pp = 1, dp = 1, microbatches = 1, ep = 1;
  MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
  // train: multi-token prediction depth (Megatron-Core's --mtp-num-layers; DeepSeek-V3's MTP module):
  // per micro-batch each depth embeds the next-shifted tokens again, normalizes them and the previous
  // depth's hidden state, projects their concatenation (eh_proj, 2d -> d), runs one more transformer
  // layer (an expert layer where the model's last is), and the shared output head and its loss again.
  // On the last pipeline stage, where Megatron-Bridge's layouts put it ("...mL").
  int64_t mtp_layers = 0;
  // train, --framework megatron: Megatron-Core's batch-level EP overlap (--overlap-moe-expert-parallel-
  // comm): the dispatch and combine of one micro-batch run behind the other's forward or backward
  // compute, so only what the layers' compute cannot cover is waited for (synth_step_parts.h).
  bool moe_a2a_overlap = false;
  // Token dropping (Megatron-Core's --moe-expert-capacity-factor, --moe-pad-expert-input-to-capacity;
  // Megatron-Bridge's "tokendrop" runs set 1.0 and the padding): each expert takes at most
  // ceil(factor x tokens x top-k / experts) of a rank's routed rows (moe_utils.get_capacity); 0 =
  // dropless. Padded, every expert takes exactly that many, so the shapes are known before routing and
  // the host reads no counts back (token_dispatcher.py: cuda_sync_point "no_sync").
  double moe_capacity_factor = 0;
  bool moe_pad_to_capacity = false;
  // Routing imbalance (--moe-load-imbalance): the rows the busiest GPU of the expert-parallel group
  // receives over the mean, 1 = balanced (the published runs force it) up to ep (every token on one
  // GPU). Every MoE layer waits for its busiest GPU at the combine, so its expert GEMMs and exchange
  // carry that many rows (the capacity, where tokens drop, caps them; padding fixes them).
  double moe_load_imbalance = 1;
  // Expert tensor parallelism (Megatron-Core's --expert-tensor-parallel-size; train): 1 holds whole
  // experts and folds the expert-parallel group over the tensor-parallel ranks wherever ep divides
  // tp x dp (Megatron-Bridge's MoE recipes set it); tp splits each expert as the dense MLP; 0: tp,
  // folding only where ep does not divide dp.
  int64_t etp = 0;
  bool folded_experts() const {
    if (mode != Mode::train || ep <= 1 || (tp * cp * dp) % ep != 0) return false;
    return etp == 1 || (etp == 0 && (dp * cp) % ep != 0);
  }
  // The GPUs holding copies of the same experts (their gradients' replicas): dp x cp / ep, or folded
  // tp x cp x dp / ep. (Training only: serving's expert parallelism is over attention data-parallel
  // ranks.) With context parallelism each GPU routes its seq / cp tokens: the expert-parallel group is
  // drawn from the data x context-parallel GPUs (Megatron-Core's rank order tp-cp-ep-dp).
  int64_t expert_replicas() const { return folded_experts() ? tp * cp * dp / ep : dp * cp / ep; }
  // Megatron-LM's interleaved 1F1B schedule: each pipeline GPU holds `virtual_stages` chunks of
  // layers / (pp x virtual_stages) layers, which shortens the fill and drain by that factor.
  int64_t virtual_stages = 1;
  // train: ZeRO stage over the data-parallel replicas (DeepSpeed; PyTorch FSDP's SHARD_GRAD_OP is 2,
  // FULL_SHARD 3). 1: Adam's state sharded, gradients reduce-scattered and the updated parameters
  // all-gathered instead of all-reduced; 2: the gradients kept sharded too; 3: the parameters as well,
  // each section's all-gathered before its forward and again before its backward. 0: plain DDP.
  int zero = 0;
  // Megatron-LM's sequence parallelism (with tp > 1): the norms, dropouts and residual adds outside
  // the tensor-parallel regions run on seq / tp of the tokens; each all-reduce becomes an all-gather
  // into a region and a reduce-scatter out of it.
  bool sequence_parallel = false;
  int64_t new_tokens = 0;  // generate: tokens generated per sequence after the prompt of `seq`
  // decode: the tokens each sequence runs through the model this step, all against its cache: 1 for
  // plain decoding; 1 + k to verify k draft tokens (speculative decoding: EAGLE, Medusa, a draft
  // model, DeepSeek's multi-token prediction).
  int64_t decode_tokens = 1;
  // train only, 16-bit dtypes: mixed-precision training's fp32 master weights (Megatron-LM's and
  // DeepSpeed's 16-bit optimizers, FSDP with fp32 parameters): the optimizer state is an fp32 copy of
  // the weights and Adam's fp32 moments (12 bytes per parameter, ZeRO's K = 12); each step casts the
  // 16-bit gradients to fp32, updates the master copy, and writes the 16-bit weights back.
  bool master_weights = false;
  // decode / generate with a fused attention kernel: the KV cache's dtype (empty: the model's), e.g.
  // fp8 as serving stacks quantize it (vLLM's --kv-cache-dtype fp8): the cache's bytes and the
  // attention kernel's reads of it.
  std::optional<DType> kv_cache_dtype;
  // GPUs per node: a collective whose group spans nodes sends part of its bytes through the NICs
  // (Kernel::net_bytes), placed in Megatron-LM's rank order (tensor parallel innermost, then data /
  // expert parallel, then pipeline stages).
  int64_t gpus_per_node = 8;
  // Context parallelism (Megatron-LM's, ring attention as Transformer Engine runs it): each of `cp`
  // GPUs holds seq / cp of every sequence's tokens; attention's keys and values pass around the ring;
  // the weights' gradients are reduced over dp x cp. Fused attention only, no decoding.
  int64_t cp = 1;
  // train: the low-precision recipe of the block layers' GEMMs (none: every GEMM in `dtype`).
  Recipe recipe = Recipe::none;
  // train, --framework megatron with an FP8 recipe: Megatron's --fp8-param-gather (FP8 primary
  // weights; Megatron-Bridge's delayed, current-scaling and MXFP8 precision recipes set it): the
  // block projections' weights live as their narrow copies only, no 16-bit copy beside them.
  bool fp8_param_gather = false;
  Framework framework = Framework::eager;
  bool compile = false;  // torchtitan / automodel: torch.compile's fused element-wise kernels
  // Pipeline stages' layers (Megatron-LM's pipeline layout), one count per stage (per virtual stage
  // with interleaving); empty: layers / pp each.
  std::vector<int64_t> pp_layout;
  int64_t pp_layout_mtp_chunk = -1;  // the chunk Megatron's layout string puts 'm' in (-1: the last)
};

// What one GPU holds for the step, exact for the synthesized model and options: its parameters as
// the kernel list's optimizer rows update them (the last pipeline stage's), their gradients and
// optimizer state in training, the KV cache when decoding. Activations are not estimated.
struct Footprint {
  double params = 0;
  double weight_bytes = 0;     // in the model's dtype (FP8 serving: the blocks' projections 1 byte each)
  double gradient_bytes = 0;   // train: one gradient per parameter, in its dtype
  double optimizer_bytes = 0;  // train: Adam's two moments in the parameter dtype; SGD (no momentum) none
  double kv_cache_bytes = 0;   // decode: K and V of batch x seq tokens, this GPU's layers and KV heads
  // train: what autograd keeps from one micro-batch's forward for its backward (an estimate:
  // activation_memory.h); 0 where not estimated (the ResNets).
  double activation_bytes = 0;
  // Inference: activation_bytes is instead the peak one layer's forward holds at once (freed as it
  // goes; activation_memory.h).
  bool activations_transient = false;
  // The sequences of one micro-batch of one replica (transformers; 0 where not estimated): the KV cache
  // and the activations are proportional to them, the rest is not.
  double batch_sequences = 0;
  // train with pipeline stages: the first stage's activations (it runs min(micro-batches, stages)
  // micro-batches' forwards before the first backward); the figures above are the last stage's.
  double first_stage_activation_bytes = 0;
  double first_stage_microbatches = 0;  // the micro-batches those are (fractional when interleaved)
  // train: what the loss's backward allocates beside the kept activations, the step's peak for a
  // large vocabulary (the fp32 gradients of the log-probabilities and of the logits); on the last
  // pipeline stage only.
  double loss_transient_bytes = 0;
  // What the whole run (every replica) processes in one step, for its rates: tokens (`step_unit`;
  // ResNets: images). Training and prefill: batch x seq; decoding: batch x the tokens each sequence
  // runs (speculative verification counts every draft); a generation: batch x new tokens.
  double step_tokens = 0;
  std::string step_unit = "tokens";
  // Chunked attention (Llama 4's attention_chunk_size, on its rotary layers): this share of the step's
  // attention layers attends only within its own chunk of `attention_chunk` positions, the rest to
  // every key before it; 0: none. kcast serve counts the pairs of long contexts with it (synth itself
  // refuses a sequence past one chunk).
  int64_t attention_chunk = 0;
  double chunked_attention_share = 0;
  double layers = 0;  // transformer layers this GPU runs (its pipeline stage's; 0 where not counted)
  // train: the kernel list's forward rows come first, this many of them (the backward and the
  // optimizer step follow); 0 where not recorded.
  size_t forward_rows = 0;
  // train: the model FLOPs of one token by the convention the frameworks publish (Megatron-LM's
  // num_floating_point_operations: 6 x the projection weights a token passes through, the LM head's
  // included, plus causal attention's 6 x layers x seq x q.k width), so that recomputation, pipeline
  // bubbles and padding never count as useful work; 0 where not known.
  double model_flops_per_token = 0;
  // train with --moe-dispatcher deepep: the communication buffers DeepEP allocates (moe_dispatch.h).
  double dispatch_buffer_bytes = 0;
  // train with --cpu-offload-layers: what those layers keep for the backward, held in host memory
  // instead (not in total_bytes: the GPU's memory is what the figures are about).
  double offloaded_activation_bytes = 0;
  double total_bytes() const {
    return weight_bytes + gradient_bytes + optimizer_bytes + kv_cache_bytes + activation_bytes + loss_transient_bytes +
           dispatch_buffer_bytes;
  }
  // What the user should know about the list's scope, one line each: parts of the config not
  // synthesized (a multimodal model's encoders: neither their kernels nor their weights are in the
  // list or the figures above), an architecture synthesized as a look-alike family.
  std::vector<std::string> notes;
};

struct BuiltinModel {
  std::string name;
  std::string description;
  bool transformer;  // else a CNN: no sequence, attention, decode, FP8 or tensor/pipeline parallelism
};

// The built-in model names with a one-line description, in `kcast synth --list` order.
std::vector<BuiltinModel> builtin_models();

// Synthesizes a built-in model. Unknown name or unsupported option -> InputError naming it.
// `footprint`, when given, receives what the step holds in GPU memory.
std::vector<Kernel> synthesize(const std::string& model, const SynthOptions& opt, Footprint* footprint = nullptr);
// Synthesizes a transformer from a Hugging Face-style config.json.
std::vector<Kernel> synthesize_config_file(const std::string& path, const SynthOptions& opt,
                                           Footprint* footprint = nullptr);

// PyTorch's multi_tensor_apply launch count for a foreach op over tensors of these sizes
// (chunks of 65536 elements, at most 320 blocks and `max_tensors` tensors per launch).
int64_t multi_tensor_launches(const std::vector<int64_t>& numels, int max_tensors);

}  // namespace kcast::synth

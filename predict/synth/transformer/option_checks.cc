// The options a transformer step cannot be synthesized with, refused before any kernel is made: each
// an InputError naming the option, in the order the checks below run (the first that fails is
// reported). Dimensions a parallel layout must divide, modes a model has no kernels for, layouts
// the synthesizer does not lay out (mixed layers over pipeline stages), serving-stack limits.
#include "predict/synth/transformer/option_checks.h"

#include <string>

#include "model/error.h"
#include "predict/synth/emitter.h"
#include "predict/synth/pipeline_layout.h"
#include "predict/synth/recompute_modules.h"
#include "predict/synth/transformer/recipe.h"

namespace kcast::synth::transformer {

namespace {

// A training recipe matches its dtype, and FP8 / FP4 training names its recipe.
void check_recipe(const SynthOptions& opt) {
  const bool narrow = opt.dtype == DType::fp8 || opt.dtype == DType::fp4;
  if (opt.recipe != Recipe::none) {
    const std::string r = to_string(opt.recipe);
    if (opt.mode != Mode::train)
      throw InputError("option '--recipe': " + r + " is a training recipe; use --mode train (inference runs "
                       "--dtype fp8 / fp4 without one)");
    const DType want = opt.recipe == Recipe::nvfp4 ? DType::fp4 : DType::fp8;
    if (opt.dtype != want)
      throw InputError("option '--recipe': " + r + " runs " + std::string(kcast::to_string(want)) + " GEMMs; give --dtype " +
                       std::string(kcast::to_string(want)));
  }
  if (narrow && opt.mode == Mode::train && opt.recipe == Recipe::none)
    throw InputError("option '--dtype': " + std::string(kcast::to_string(*opt.dtype)) +
                     " training runs by a recipe: --recipe delayed, current, mxfp8 or block (fp8), nvfp4 (fp4)");
}

// Megatron-LM's CPU activation offloading, with Megatron's own conditions (TransformerConfig's
// __post_init__: fewer layers than the model's, no pipeline parallelism, no recomputation).
void check_cpu_offload(const TransformerConfig& cfg, const SynthOptions& opt) {
  if (opt.cpu_offload_layers == 0) return;
  auto refuse = [](const std::string& why) { throw InputError("option '--cpu-offload-layers': " + why); };
  if (opt.cpu_offload_layers < 0) refuse("a positive count of layers");
  if (opt.mode != Mode::train || opt.framework != Framework::megatron)
    refuse("Megatron-LM's activation offloading: use it with --mode train --framework megatron");
  if (opt.cpu_offload_layers >= cfg.layers)
    refuse("fewer than the model's " + std::to_string(cfg.layers) + " layers (Megatron offloads at most all but one)");
  if (opt.pp > 1) refuse("Megatron-LM offloads activations only without pipeline parallelism (--pp 1)");
  if (opt.recompute || opt.selective_recompute || opt.recompute_modules)
    refuse("Megatron-LM offloads activations only without recomputation (--recompute none)");
}

// Megatron's recomputed modules exist in the model they name (recompute_modules.h); its block method
// recomputes whole layers.
void check_recompute_modules(const TransformerConfig& cfg, const SynthOptions& opt) {
  if (opt.recompute_layers < 0) throw InputError("option '--recompute-layers': a positive count");
  if (opt.recompute_layers > 0 && (!opt.recompute || opt.framework != Framework::megatron))
    throw InputError("option '--recompute-layers': Megatron-LM's block method of full recomputation; give it with "
                     "--recompute full --framework megatron");
  check_cpu_offload(cfg, opt);
  if (!opt.recompute_modules) return;
  auto refuse = [&](const std::string& why) { throw InputError("option '--recompute-modules': " + why); };
  if (opt.framework != Framework::megatron || opt.mode != Mode::train)
    refuse("Megatron-LM's modules: use them with --framework megatron --mode train");
  if (opt.recompute) refuse("--recompute full recomputes whole layers already");
  const bool dense_mlp = cfg.experts == 0 || cfg.dense_layers > 0;
  if (opt.recomputes(kRecomputeMlaUpProj) && !cfg.mla())
    refuse("mla_up_proj is latent attention's; " + cfg.name + " has none");
  if (opt.recomputes(kRecomputeMlp) && !dense_mlp) refuse("mlp is a dense layer's MLP; every layer of " + cfg.name + " is a mixture");
  if (opt.recomputes(kRecomputeMoeAct | kRecomputeLayernorm) && cfg.experts == 0)
    refuse("moe_act and layernorm are a mixture layer's; " + cfg.name + " has no experts");
  if (opt.recomputes(kRecomputeSharedExperts) && cfg.shared_expert_ffn == 0)
    refuse("shared_experts: " + cfg.name + " has no shared experts");
}

// The training framework's kernels exist for its own kind of model and mode.
void check_framework(const TransformerConfig& cfg, const SynthOptions& opt) {
  if (opt.compile && opt.framework == Framework::megatron)
    throw InputError("option '--compile': torch.compile is torchtitan's and AutoModel's; Megatron-LM runs "
                     "Transformer Engine's fused kernels (drop --compile)");
  if (opt.framework == Framework::eager) return;
  if (opt.mode != Mode::train)
    throw InputError("option '--framework': the frameworks' kernels are synthesized for training (--mode train)");
  if (cfg.family != Family::llama)
    throw InputError("option '--framework': synthesized for llama-like decoders (RMSNorm, rotary, SwiGLU); " +
                     cfg.name + " is a BERT, GPT-2 or OPT model");
  if (opt.torchtitan_op_sac() && cfg.experts > 0)
    throw InputError("option '--recompute': torchtitan's per-op selective policy is modelled for dense models; " +
                     cfg.name + " is a mixture of experts (use full or none)");
}

// Sizes, dtypes, and the options that belong to one mode only.
void check_step(const TransformerConfig& cfg, const SynthOptions& opt) {
  if (opt.batch < 0) throw InputError("option '--batch': must be positive");
  if (opt.seq < 0) throw InputError("option '--seq': must be positive");
  if (opt.dtype && (*opt.dtype == DType::int8 || *opt.dtype == DType::fp64))
    throw InputError("option '--dtype': " + std::string(to_string(*opt.dtype)) +
                     " is not supported by synth (fp32, tf32, fp16, bf16; fp8 and fp4 for inference)");
  check_recipe(opt);
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
}

// Tensor parallelism splits heads, MLP and hidden sizes: it must divide them.
void check_tensor_parallel(const TransformerConfig& cfg, const SynthOptions& opt) {
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
}

// Experts over expert-parallel GPUs, layers over pipeline stages and virtual stages.
void check_experts_and_stages(const TransformerConfig& cfg, const SynthOptions& opt) {
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
  // A capacity factor of `experts` already lets one expert take every routed row of a GPU: beyond it
  // padding only grows without bound.
  if (cfg.experts == 0 && (opt.moe_capacity_factor > 0 || opt.moe_pad_to_capacity))
    throw InputError(std::string("option '") +
                     (opt.moe_capacity_factor > 0 ? "--moe-expert-capacity-factor" : "--moe-pad-expert-input-to-capacity") +
                     "': " + cfg.name + " has no experts to drop tokens for (token dropping is for mixtures of experts)");
  if (cfg.experts > 0 && opt.moe_capacity_factor > double(cfg.experts))
    throw InputError("option '--moe-expert-capacity-factor': at most the " + std::to_string(cfg.experts) +
                     " experts (a capacity of every routed row of a GPU)");
  if (opt.virtual_stages < 1)
    throw InputError("option '--virtual-stages': must be at least 1");
  if (opt.virtual_stages > 1 && opt.pp < 2)
    throw InputError("option '--virtual-stages': interleaves pipeline stages; give --pp 2 or more");
  pipeline_layout(cfg, opt);  // refuses layers that do not lay out over the stages
  if (opt.virtual_stages > 1) {
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
}

// --runtime serving: the serving stacks' kernels exist for llama-like decoders' inference.
void check_serving(const TransformerConfig& cfg, const SynthOptions& opt) {
  if (opt.runtime == Runtime::serving) {
    auto refuse = [&](const std::string& why) {
      throw InputError("option '--runtime': serving is synthesized for " + why);
    };
    if (opt.mode == Mode::train) refuse("inference (--mode infer, decode or generate); training runs eager");
    if (cfg.family != Family::llama)
      refuse("llama-like decoders (RMSNorm, rotary, SwiGLU); " + cfg.name + " is a BERT, GPT-2 or OPT model");
  }
}

}  // namespace

void check_options(const TransformerConfig& cfg, const SynthOptions& opt) {
  check_step(cfg, opt);
  check_framework(cfg, opt);
  check_recompute_modules(cfg, opt);
  check_tensor_parallel(cfg, opt);
  check_experts_and_stages(cfg, opt);
  check_serving(cfg, opt);
}

}  // namespace kcast::synth::transformer

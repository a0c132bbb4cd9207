// The parallel layouts `kcast plan train` considers for a model on N GPUs at a global batch: tensor,
// pipeline (with interleaving), context and expert parallelism, the data-parallel rest, the micro-batch
// size and activation recomputation, as Megatron-LM lays them out (tensor parallel innermost, within a
// node). Only the divisibility rules are applied here; whatever else a layout breaks (heads per tensor
// rank, layers per stage) synth refuses, and the planner reports its message.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"

namespace kcast::plan {

enum class Recompute { none, selective, full };
const char* to_string(Recompute r);

struct TrainLayout {
  int64_t tp = 1, pp = 1, cp = 1, ep = 1, dp = 1, vp = 1;
  int64_t microbatches = 1;  // per replica and step
  int64_t mbs = 1;           // sequences per micro-batch
  Recompute recompute = Recompute::none;
  int zero = -1;  // the optimizer sharding (--zero); -1: the framework's own (plan_train's base options)
  // With recompute selective: Megatron's --recompute-modules (synth/recompute_modules.h); 0: core_attn,
  // as --recompute selective alone.
  unsigned modules = 0;
  // With recompute full: Megatron's block method, the first N layers of each chunk; 0: every layer.
  int64_t recompute_layers = 0;
  // Without recomputation or pipeline stages: Megatron's CPU activation offloading of N layers
  // (--cpu-offload-layers); 0: none.
  int64_t offload_layers = 0;
};

struct LayoutSpace {
  int64_t gpus = 0, batch = 0, seq = 0;  // GPUs in all, global batch (sequences), sequence length
  int64_t layers = 0, heads = 0, kv_heads = 0, experts = 0;
  int64_t gpus_per_node = 8;
  // Megatron: besides its distributed optimizer (--zero 1), Megatron FSDP (--zero 3) where there is no
  // pipeline (Megatron-Bridge's Llama 3 8B H100 runs).
  bool megatron_fsdp = false;
  int default_zero = 1;  // the framework's own sharding, which --fix zero=N must name to keep
  // --fix: keys tp, pp, cp, ep, dp, vp, mbs, microbatches, recompute (0 none, 1 selective, 2 full), zero;
  // recompute=MODULE+MODULE gives recompute 1 and recompute_modules the bits (synth/recompute_modules.h).
  std::map<std::string, int64_t> fixed;
};

// The recompute column of plan's table and CSV: none, selective or full, the modules joined by '+',
// full:N (the block method's N layers a chunk), or offload:N (N layers' activations offloaded instead).
std::string recompute_label(const TrainLayout& l);

// The module sets of Megatron's selective recomputation (synth/recompute_modules.h) that plan train
// tries, cheapest first, on a layout that does not fit without recomputation: those Megatron-Bridge's
// recipes pick (the experts' activation; with it the mixture's pre-MLP norm; latent attention's up
// projections, alone and with the activation), where the model has the modules. Empty for a dense
// model with standard attention.
std::vector<unsigned> recompute_module_ladder(const synth::TransformerConfig& cfg);

// Every layout of the space, in a fixed order (tp, pp, cp, ep, vp, mbs, recompute ascending); recompute
// none or full (selective only when fixed).
std::vector<TrainLayout> enumerate_train_layouts(const LayoutSpace& s);

// `--fix tp=8,pp=4,...` as a map; InputError naming the option on an unknown key or a bad value.
std::map<std::string, int64_t> parse_fix(const std::string& text);

// The layout applied to a training step's options (`base`: dtype, recipe, framework, ...).
synth::SynthOptions with_layout(synth::SynthOptions base, const TrainLayout& l, int64_t batch);

}  // namespace kcast::plan

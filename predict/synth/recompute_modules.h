// Megatron-LM's selective recomputation by module (--recompute-granularity selective
// --recompute-modules ...; megatron/core/transformer/transformer_config.py): which parts of a layer
// keep nothing of their own for the backward and run their forward again before it. The names are
// Megatron's, so a launch command's list carries over as written (`kcast synth --recompute-modules`).
#pragma once
#include <string>
#include <vector>

#include "predict/synth/synth.h"

namespace kcast::synth {

enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,       // the attention core (fused: keeps no scores anyway)
  kRecomputeLayernorm = 1u << 1,      // a mixture layer's pre-MLP norm (the attention's is fused into its projection)
  kRecomputeMlaUpProj = 1u << 2,      // latent attention's q / kv up-projections and rotary: q, k, v not kept
  kRecomputeMlp = 1u << 3,            // a dense layer's whole MLP
  kRecomputeMoeAct = 1u << 4,         // the experts' gated activation: its output (fc2's input) not kept
  kRecomputeSharedExperts = 1u << 5,  // a mixture's shared experts
};

// "mla_up_proj,moe_act" (commas or spaces) as bits; InputError naming `option` on an unknown name, on
// `moe` (the whole mixture layer, its dispatch included, which synth does not recompute) or on an empty list.
unsigned parse_recompute_modules(const std::string& option, const std::string& text);
// Sets `o`'s modules from the bits, as Megatron takes a module list: it replaces selective
// recomputation's default (core_attn), which stays on only where the list names it.
void set_recompute_modules(SynthOptions& o, unsigned bits);

// The bits as Megatron's names, in the order of the enum; and comma-separated.
std::vector<std::string> recompute_module_names(unsigned bits);
std::string recompute_modules_string(unsigned bits);

}  // namespace kcast::synth

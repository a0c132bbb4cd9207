// The refusals of synthesize_transformer (option_checks.cc): a transformer step's options checked
// against its model before anything is synthesized.
#pragma once
#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth::transformer {

// Throws InputError naming the first option that the model cannot be synthesized with.
void check_options(const TransformerConfig& cfg, const SynthOptions& opt);

}  // namespace kcast::synth::transformer

// The mixture-of-experts routing options kcast synth, kcast plan train and kcast serve share:
// token dropping (--moe-expert-capacity-factor, --moe-pad-expert-input-to-capacity) and routing
// imbalance (--moe-load-imbalance), read into the synthesizer's options.
#pragma once
#include "predict/cli/options.h"
#include "predict/synth/synth.h"

namespace kcast::cli {

// Whichever of the three options the command defines and was given; the rest keep the defaults
// (dropless, unpadded, balanced). A value that is not a positive number is an error naming its option;
// the synthesizer checks the rest (predict/synth/emitter.cc).
void read_moe_routing_options(const po::variables_map& vm, synth::SynthOptions& o);

}  // namespace kcast::cli

#include "predict/cli/moe_options.h"

#include "predict/synth/emitter.h"

namespace kcast::cli {

void read_moe_routing_options(const po::variables_map& vm, synth::SynthOptions& o) {
  o.moe_capacity_factor = positive_number(vm, "moe-expert-capacity-factor", 0, synth::kCapacityFactorWhat);
  o.moe_pad_to_capacity = vm.count("moe-pad-expert-input-to-capacity") > 0;
  o.moe_load_imbalance = positive_number(vm, "moe-load-imbalance", 1, synth::kImbalanceWhat);
}

}  // namespace kcast::cli

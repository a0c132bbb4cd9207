// `kcast synth --gpu G --context SETUP`: predict a synthesized step as a measurement setup timed it.
// NeuSight's labels (its per-node CUDA-event timing of each op in isolation) carry a framework floor in
// every op that a step run end to end does not; the shipped model holds those floors per op family
// (ModelParams::context_overhead_us, fitted on NeuSight's per-op corpus, never on its end-to-end
// labels). Tagging each synthesized row with its family's context and predicting with the floors
// added (`kcast predict --with-context`) gives the setup's figure from one command.
#pragma once
#include <string>
#include <vector>

#include "model/kernel.h"

namespace kcast::cli {

// The NeuSight per-op corpus whose framework floor stands for a kernel's op family: its bmm corpus for
// batched GEMMs and fused attention, linear for the rest of the GEMMs, element-wise ops' floor for the
// classes it has no corpus of.
std::string neusight_context(const Kernel& k);

// Sets each row's `context` to SETUP's context for its op family; InputError naming --context for a
// setup kcast does not know (the known ones: neusight).
void tag_measurement_context(std::vector<Kernel>& rows, const std::string& setup);

}  // namespace kcast::cli

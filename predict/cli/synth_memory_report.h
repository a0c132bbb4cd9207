// `kcast synth`'s memory report: what a step holds in one GPU's memory (synth::Footprint), whether it
// fits each `--gpu`, and the largest batch that would; rendered as the stderr lines and, with
// `--memory-json`, as JSON, both from the same values.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/gpu_spec.h"
#include "predict/synth/synth.h"

namespace kcast::cli {

// One GPU's verdict. The datasheet's GB are binary (an "80 GB" board holds 80 GiB) and the step's
// figure leaves out workspace (and, where not estimated, activations), so a fit is a necessary
// condition. With pipeline stages the first stage, holding several micro-batches' activations and no
// loss, may need more than the last (whose parameters the figures are; the first's taken as the same).
struct MemoryFit {
  std::string gpu;
  bool capacity_known = false;
  double capacity_bytes = 0, need_bytes = 0;
  bool fits = false;
  bool first_stage_decides = false;
  // The most sequences one micro-batch (of one replica) could hold and still fit: the KV cache and
  // the activations grow in proportion to them, the rest does not. -1 where nothing scales (the
  // ResNets' inference).
  double largest_batch = -1;
};

MemoryFit memory_fit(const synth::Footprint& f, const GpuSpec& g);

// The stderr lines (without a trailing newline): the footprint, and one GPU's fit.
std::string footprint_line(const synth::Footprint& f, const synth::SynthOptions& o);
std::string fit_line(const synth::Footprint& f, const synth::SynthOptions& o, const MemoryFit& fit);

// One GPU's verdict as JSON: gpu, capacity_bytes, need_bytes, fits, decided_by, largest_batch (null
// where the capacity, or a batch that grows, is unknown); `--memory-json`'s gpus and each
// `--batch-sweep` row share it.
nlohmann::json fit_json(const MemoryFit& fit);

// The same as one JSON object (docs/CLI-EXTENSIONS.md, `synth --memory-json`): `gpus` in `fits` order.
nlohmann::json memory_json_of(const synth::Footprint& f, const synth::SynthOptions& o,
                              const std::vector<MemoryFit>& fits);

}  // namespace kcast::cli

// Parameters that stand in for a measurement on GPUs that have none (e.g. mem_eff: the sustained
// fraction of datasheet DRAM bandwidth) take the typical value of the GPUs that were measured, so a
// database-only GPU (H100-SXM, B200, ...) inherits what microbenchmarks showed on its siblings
// rather than a guess or a value bent by an unrelated corpus.
#pragma once
#include <optional>
#include <string>

#include "calibrate/model_file.h"

namespace kcast {

struct PriorUpdate {
  std::string param;
  double value = 0;
  size_t gpus = 0;  // measured GPUs it was derived from
};

// mem_eff := median over the model's measured GPUs of measured / datasheet DRAM bandwidth.
// Returns nothing (and changes nothing) when no GPU has both figures.
std::optional<PriorUpdate> set_mem_eff_from_measured(LoadedModel& model, const GpuDatabase& db);

}  // namespace kcast

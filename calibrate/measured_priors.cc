#include "calibrate/measured_priors.h"

#include <algorithm>
#include <vector>

#include "calibrate/median.h"

namespace kcast {

std::optional<PriorUpdate> set_mem_eff_from_measured(LoadedModel& model, const GpuDatabase& db) {
  std::vector<double> ratios;
  for (const auto& [name, m] : model.gpus) {
    const GpuSpec* spec = db.find(name);
    if (!spec || !known(m.dram_bw_gbps) || !known(spec->dram_bw_gbps) || spec->dram_bw_gbps <= 0) continue;
    ratios.push_back(m.dram_bw_gbps / spec->dram_bw_gbps);
  }
  if (ratios.empty()) return std::nullopt;
  // Median: one odd board (e.g. an early HBM3e part far below its datasheet) must not move the rest.
  const ParamInfo& info = kParamInfo[kMemEff];
  const double v = std::clamp(median_of(ratios), info.lower, info.upper);
  model.model.mutable_params()[kMemEff] = v;
  return PriorUpdate{info.name, v, ratios.size()};
}

}  // namespace kcast

#include "predict/e2e/transfer.h"

#include <algorithm>

namespace kcast {

double measured_gpu_time(double d, double context_us, double floor_source_us) {
  if (!(context_us > 0)) return d;
  return std::max(d - context_us, std::min(d, floor_source_us));
}

double transfer_time(double d_gpu, double model_source_us, double model_target_us, double floor_target_us) {
  const double r = model_source_us > 0 ? model_target_us / model_source_us : 1.0;
  return std::max(d_gpu * r, std::min(d_gpu, floor_target_us));
}

double graph_time(double t, double floor_us) {
  const double graph = kGraphLaunchFraction * floor_us;
  return std::max(std::min(t, graph), t - (floor_us - graph));
}

}  // namespace kcast

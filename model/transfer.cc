#include "model/transfer.h"

#include <algorithm>

namespace kcast {

double measured_gpu_time(double d, double context_us, double floor_us) {
  if (!(context_us > 0)) return d;
  return std::max(d - context_us, std::min(d, floor_us));
}

double transfer_ratio(double context_source_us, double context_target_us, double model_source_us,
                      double model_target_us) {
  const double cs = context_source_us > 0 ? context_source_us : 0.0;
  const double ct = context_target_us > 0 ? context_target_us : 0.0;
  return model_source_us > 0 ? (model_target_us + ct) / (model_source_us + cs) : 1.0;
}

double transfer_measurement(double d, double context_source_us, double context_target_us, double model_source_us,
                            double model_target_us, double floor_target_us) {
  const double r = transfer_ratio(context_source_us, context_target_us, model_source_us, model_target_us);
  const double ct = context_target_us > 0 ? context_target_us : 0.0;
  return std::max(d * r, std::min(d, floor_target_us + ct));
}

double graph_time(double t, double floor_us) {
  const double graph = kGraphLaunchFraction * floor_us;
  return std::max(std::min(t, graph), t - (floor_us - graph));
}

}  // namespace kcast

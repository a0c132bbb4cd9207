#include "model/transfer.h"

#include <algorithm>
#include <cmath>

#include "model/cost_model.h"

namespace kcast {

std::optional<Param> persistence_param(KernelClass c) {
  if (c == KernelClass::gemm) return kGemmBiasPersistence;
  if (c == KernelClass::conv) return kConvBiasPersistence;
  return std::nullopt;
}

double bias_persistence(KernelClass c, const GpuCaps& source, const GpuCaps& target, const ModelParams& p) {
  const std::optional<Param> param = persistence_param(c);
  if (!param || source.compute_capability == target.compute_capability) return 1.0;
  return std::clamp(p[*param], 0.0, 1.0);
}

double persistent_measurement(double d, double predicted_us, double persistence) {
  if (persistence >= 1 || !(predicted_us > 0) || !(d > 0)) return d;
  return persistent_measurement(d, predicted_us, std::log(d), std::log(predicted_us), persistence);
}

double graph_time(double t, double floor_us, double blend_q) {
  const double graph = kGraphLaunchFraction * floor_us;
  if (!(t > floor_us)) return std::min(t, graph);  // launch-bound, or measured faster than the floor
  return with_floor(graph, work_behind_floor(t, floor_us, blend_q), blend_q);
}

double transferred_graph_time(double gpu_source_us, double floor_source_us, double model_source_us,
                              double model_target_us, double floor_target_us, double blend_q) {
  const double own = graph_time(gpu_source_us, floor_source_us, blend_q);
  const double gs = graph_time(model_source_us, floor_source_us, blend_q);
  if (!(gs > 0)) return own;
  const double gt = graph_time(model_target_us, floor_target_us, blend_q);
  return std::max(own * gt / gs, std::min(own, kGraphLaunchFraction * floor_target_us));
}

}  // namespace kcast

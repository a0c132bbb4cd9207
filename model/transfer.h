// Transfer mode: the one definition of moving a measured kernel from its source GPU to a target,
// used by `kcast predict`/`whatif` (predict/e2e) and scored by `kcast validate` (calibrate/score).
//
// A kernel measured on a source GPU is predicted on a target as
//     t = d * model(target) / model(source)
// so whatever the model gets wrong about that kernel (a library heuristic, an odd shape) cancels in
// the ratio. Two refinements, both exact no-ops when source and target are the same GPU:
//  * Measurement context: rows with a `context` column were timed inside a framework whose floor
//    (ModelParams::context_overhead times the rig's GpuCaps::context_scale) is part of `d`. The
//    measurement scales by the ratio of the two predicted *measurements*,
//    (model(target) + ctx_t) / (model(source) + ctx_s): a floor-dominated row moves by the ratio of
//    the two rigs' floors and a long one scales with the GPU. (Subtracting ctx first and scaling the
//    rest fails when the source host's own floor differs from the fitted one: the excess would be
//    scaled as if it were GPU time.) The GPU-only part is what remains after removing ctx, never
//    less than the kernel floor: d_gpu = max(d - ctx, min(d, floor)).
//  * Launch floor: a transferred time never drops below the target's floor (plus ctx), unless the
//    kernel was measured faster than that itself (then its measurement is the better floor).
// The ratio cancels the model's bias for a kernel only where that bias is the same on both GPUs. For
// GEMMs it is, within a compute capability (one library build, one kernel menu: torch.mm moved
// between the two H100s, the two P100s, L4 and L20 lands 9.0% median with the ratio, 9.2% with the
// model alone), and mostly is not across them, where the library picks other tiles and splits for
// the same shape: the model's log residuals of the same GEMM on two GPUs correlate 0.12 between
// A100 and H100 (aiconfigurator's 989 shared BF16 shapes) and 0.0-0.4 between NeuSight's FP32
// boards, and across compute capabilities torch.mm's pairs land 12.5% median with the ratio, 7.0%
// with the model alone. So across compute capabilities a GEMM's measurement is first shrunk toward
// the model's own prediction of it, keeping the share of its deviation that persists
// (ModelParams kGemmBiasPersistence, which kcast calibrate measures); a convolution's likewise
// (kConvBiasPersistence: its cuDNN algorithm, read from the source's name, carries over, and most of
// its deviation with it). The other classes, and every kernel moved within its compute capability,
// move by the plain ratio.
// CUDA graphs: replaying a captured graph shrinks the per-kernel launch cost from the launch floor
// (the back-to-back launch interval of an empty kernel) to the graph launch interval, which
// published measurements put at about half of it (te42kyfo/gpu-benches gpu-small-kernels:
// A100 1.34 vs 2.6 µs, A40 1.09 vs 2.05, L40 0.94 vs 1.64, H200 1.26 vs 2.43).
#pragma once
#include <algorithm>
#include <cmath>

#include <optional>

#include "model/gpu_caps.h"
#include "model/kernel_class.h"
#include "model/model_params.h"

namespace kcast {

// Graph launch interval as a fraction of the stream launch interval (see above). A GPU-specific
// measured figure would be better data; until GpuCaps carries one, this ratio is the documented default.
inline constexpr double kGraphLaunchFraction = 0.52;

// The parameter that says how much of a measured deviation from the model class `c` keeps across
// compute capabilities (kGemmBiasPersistence, kConvBiasPersistence), or nullopt: all of it.
std::optional<Param> persistence_param(KernelClass c);
// The share of a measured kernel of class `c`'s deviation from the model that persists from `source`
// to `target`: its persistence_param between GPUs of different compute capabilities, else 1.
double bias_persistence(KernelClass c, const GpuCaps& source, const GpuCaps& target, const ModelParams& p);

// The measurement a transfer moves: `d` shrunk toward `predicted_us`, the model's prediction of that
// same measurement on its source (GPU time plus context), keeping the share `persistence` of the
// log deviation: d^persistence * predicted^(1 - persistence). `d` itself at persistence 1 or without
// a prediction, so a kernel moved within its compute capability is untouched.
double persistent_measurement(double d, double predicted_us, double persistence);
// The same from std::log(d) and std::log(predicted_us), bit for bit: a trace's rows are moved to many
// targets, and their logs do not depend on the target.
// (Inline, as the other per-row arithmetic here: evaluate_target runs it for every row and target.)
inline double persistent_measurement(double d, double predicted_us, double log_d, double log_predicted,
                                     double persistence) {
  if (persistence >= 1 || !(predicted_us > 0) || !(d > 0)) return d;
  return std::exp(persistence * log_d + (1 - persistence) * log_predicted);
}

// The ratio a measurement scales by: (model(target) + ctx_t) / (model(source) + ctx_s); 1 when the
// source prediction is missing (model_source_us <= 0).
inline double transfer_ratio(double context_source_us, double context_target_us, double model_source_us,
                             double model_target_us) {
  const double cs = context_source_us > 0 ? context_source_us : 0.0;
  const double ct = context_target_us > 0 ? context_target_us : 0.0;
  return model_source_us > 0 ? (model_target_us + ct) / (model_source_us + cs) : 1.0;
}

// The target's measurement (same context as the source's, the target rig's floor context_target_us
// included) of a kernel measured as `d` on the source, whose rig's floor is context_source_us.
// model_*_us are GPU-only predictions; model_source_us <= 0 gives ratio 1.
inline double transfer_measurement(double d, double context_source_us, double context_target_us,
                                   double model_source_us, double model_target_us, double floor_target_us) {
  const double r = transfer_ratio(context_source_us, context_target_us, model_source_us, model_target_us);
  const double ct = context_target_us > 0 ? context_target_us : 0.0;
  return std::max(d * r, std::min(d, floor_target_us + ct));
}

// GPU-only part of a measured duration `d` taken in a context with floor `context_us`.
inline double measured_gpu_time(double d, double context_us, double floor_us) {
  if (!(context_us > 0)) return d;
  return std::max(d - context_us, std::min(d, floor_us));
}

// A kernel time under CUDA-graph replay: the launch floor replaced by the graph launch interval in
// the cost model's blend of floor and work (`blend_q`, ModelParams kFloorBlend; with_floor): a
// launch-bound kernel drops to the interval, a long one keeps its time (its launch already hid
// behind the kernel before it), and a smaller floor never lengthens a replay. (The sum, q = 1,
// takes floor - interval off every kernel.)
double graph_time(double t, double floor_us, double blend_q);

// A measured kernel under CUDA-graph replay on a target: replayed on its own GPU first (the source's
// floor decides how much of `gpu_source_us`, its GPU-only time there, was launch cost), then moved by
// the model's ratio of the two replayed predictions, never below the target's graph interval unless
// the replay itself is. Its source and target the same GPU, this is graph_time of the measurement;
// a smaller target floor (or more of any resource) never lengthens it, which graphing the transferred
// time instead did not hold for kernels measured near the floor.
double transferred_graph_time(double gpu_source_us, double floor_source_us, double model_source_us,
                              double model_target_us, double floor_target_us, double blend_q);

}  // namespace kcast

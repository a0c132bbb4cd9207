// Accuracy scoring: absolute relative error |predicted - measured| / measured, summarized per GPU and
// class (rows, median, mean, p90), in absolute mode (model alone) and transfer mode (a kernel measured
// on another GPU scaled by the model's target/source ratio).
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "calibrate/measured_set.h"

namespace kcast {

struct ErrorStats {
  size_t rows = 0;
  double median = 0, mean = 0, p90 = 0;
};
ErrorStats summarize(std::vector<double> errors);

struct ScoreLine {
  std::string mode;    // "absolute" or "transfer"
  std::string source;  // transfer: source GPU; absolute: empty
  std::string gpu;     // target GPU
  std::string cls;     // kernel class, or "all"
  ErrorStats stats;
};

// The row's measurement-context floor on the rig of the GPU `caps` describes, plus the extra kernel
// its context's op runs on that GPU (CostModel::context_pass_us), if any.
double context_floor_us(const LoadedModel& m, const Kernel& k, const GpuCaps& caps);
// Predicted duration of a measured row as the measurement saw it: the GPU's kernel time plus the
// row's measurement-context floor.
double predicted_as_measured(const LoadedModel& m, const Kernel& k, const GpuCaps& caps);

// The fields the model reads, plus the context: two rows with the same key are the same kernel.
// The conv algorithm is left out: each GPU's library may pick another for the same op, and the target's
// choice is not known to a transfer (the source's kernel is predicted on both GPUs, as in predict).
using KernelKey = std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, double, double, std::string, bool>;
KernelKey key_of(const Kernel& k);

// Each GPU of `s` (in MeasuredSet::gpus order) as `m` sees it.
std::vector<GpuCaps> measured_caps(const MeasuredSet& s, const LoadedModel& m);

// Per (gpu, class) and per gpu ("all") lines for absolute mode.
std::vector<ScoreLine> score_absolute(const MeasuredSet& s, const LoadedModel& m);
// Transfer mode: each row of `targets` whose identical kernel (same class, dtype, shape, bytes,
// flops and context) was measured in `sources` on a different GPU.
std::vector<ScoreLine> score_transfer(const MeasuredSet& targets, const MeasuredSet& sources,
                                      const LoadedModel& m);

}  // namespace kcast

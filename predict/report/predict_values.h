// The `kcast predict` report as one plain values struct. make_predict_values() is the observer that
// fills it from the predictor's results; the table, CSV, JSON and HTML renderers read only this
// struct, so the formats cannot drift apart.
//
// Split of kernel time: "launch-bound" is every kernel the model puts at its launch floor, whatever
// its class; "GEMM" is the rest of the matrix-engine classes (gemm, conv, attention); "non-GEMM" is
// everything else. The peak comparison uses the workload's dominant dtype (the dtype carrying the
// most FLOPs, count * flops) and each GPU's datasheet dense peak for it (FP32 where the GPU lists none).
#pragma once
#include <array>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/e2e/predictor.h"

namespace kcast {

struct PredictGpuValues {
  std::string gpu, mode;
  bool announced = false;  // the GPU is announced, not shipping (JSON says so)
  size_t kernels = 0, transferred_rows = 0;
  double invocations = 0;
  double kernel_us = 0, step_us = 0;
  std::array<double, kNumClasses> class_us{};
  std::array<size_t, kNumClasses> class_rows{};
  std::array<double, kNumBounds> bound_us{};  // indexed by Bound
  double gemm_us = 0, non_gemm_us = 0, launch_bound_us = 0;
  std::vector<std::string> source_gpus;
  double peak_tflops = kUnknown;       // datasheet, dominant dtype
  double speedup_vs_first = kUnknown;  // step time of the first GPU / this GPU's
  double peak_ratio_vs_first = kUnknown;
  std::vector<double> prefix_us;  // count x time per PredictValues::prefixes entry (--by-prefix)
};

struct PredictValues {
  std::string kernels_file, model;
  bool cuda_graph = false, with_context = false, timeline = false;
  std::string dominant_dtype;
  double measured_kernel_us = kUnknown, measured_step_us = kUnknown;  // the list's own, if measured
  size_t inferred_work_rows = 0;  // measured rows without work, given what their time implies
  std::vector<PredictGpuValues> gpus;
  // With --by-prefix: the rows' name prefixes (a name up to its first '.', as `kcast synth` writes
  // sections: embed., layer., head., optimizer., prefill., decode@N.; "-" for a name without one),
  // in first-seen order.
  std::vector<std::string> prefixes;
};

// `specs[i]` is the database row of `preds[i]` (for peaks).
PredictValues make_predict_values(const PreparedWorkload& w, const std::vector<GpuPrediction>& preds,
                                  const std::vector<const GpuSpec*>& specs, const std::string& kernels_file,
                                  const std::string& model);

// Fills v.prefixes and each GPU's prefix_us from per-row predictions (E2eOptions::keep_rows).
void add_prefix_breakdown(PredictValues& v, const PreparedWorkload& w, const std::vector<GpuPrediction>& preds);

void render_predict_table(const PredictValues& v, std::ostream& out);
void render_predict_csv(const PredictValues& v, std::ostream& out);
nlohmann::json predict_json(const PredictValues& v);  // docs/cli-contract.md's shape plus extra fields
std::string predict_html(const PredictValues& v);

}  // namespace kcast

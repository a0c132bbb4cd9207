// Fits the cost model's parameters to measured kernels with Ceres.
//
// Residual per kernel: log(predicted + context floor) - log(measured), so a 2x miss weighs the same
// on a 3 µs kernel and on a 3 ms one. Each residual is weighted by 1/sqrt(rows of its GPU and class)
// so that a class with many rows cannot drown the others, and passed through a pseudo-Huber
// transform (robust to outliers such as clock throttling or a library's odd kernel choice). Bounds
// keep parameters physical. Deterministic: one thread, fixed start.
#pragma once
#include <string>
#include <vector>

#include "calibrate/measured_set.h"
#include "calibrate/model_file.h"

namespace kcast {

struct FitOptions {
  int max_iterations = 60;
  double huber_delta = 0.25;  // in log units (~28% error)
  bool verbose = false;
  std::vector<std::string> frozen;  // parameter names kept at their starting value
};

struct FitReport {
  std::string brief;  // Ceres Summary::BriefReport()
  double initial_cost = 0, final_cost = 0;
  int iterations = 0;
  double seconds = 0;
};

// Starts from `base` (its parameters and GPU overrides) and returns the fitted model.
LoadedModel fit_model(const MeasuredSet& data, const LoadedModel& base, const FitOptions& opt,
                      FitReport* report = nullptr);

}  // namespace kcast

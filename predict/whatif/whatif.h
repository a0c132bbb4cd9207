// What-if studies on one GPU: the workload on the GPU as it is (baseline) and as modified by knobs
// (knobs.h); a sweep of one knob over a range; and the "walls" study, which asks which wall the
// workload is up against by removing each one in turn:
//   compute_2x            compute-bound kernels only (by the model's bound on the configured GPU)
//                         get twice the tensor and SIMT rates;
//   memory_2x             memory-bound kernels only get twice the DRAM and L2 bandwidth;
//   compute_and_memory_2x every kernel gets both (a GPU twice as fast in everything but launches);
//   launch_half           the launch floor halves.
// Walls and sweeps start from the configured GPU (baseline plus --set/--scale); speedups of walls
// are relative to it, speedups of sweep points and of the modified GPU relative to the baseline.
// Prediction modes work as in `predict`: a measured row is scaled by model(modified)/model(source).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "predict/e2e/predictor.h"
#include "predict/whatif/knobs.h"

namespace kcast {

struct SweepSpec {
  Knob knob = Knob::dram_bw;
  double start = 0, stop = 0;
  int steps = 1;
  std::vector<double> values() const;  // `steps` evenly spaced values from start to stop inclusive
};
// "KNOB=START:STOP:STEPS"; InputError naming `option` on bad text.
SweepSpec parse_sweep(const std::string& text, const std::string& option);

struct KnobChange {
  Knob knob;
  bool scale;    // --scale (factor) rather than --set (value)
  double value;
};

struct WhatifSpec {
  std::vector<KnobChange> changes;  // applied in order
  std::optional<SweepSpec> sweep;
  bool walls = false;
};

struct WhatifResult {
  std::string gpu;
  GpuCaps baseline_caps, modified_caps;
  GpuPrediction baseline, modified;
  struct Point {
    double value;
    GpuPrediction pred;
  };
  std::vector<Point> sweep;
  struct Wall {
    std::string name, description;
    GpuPrediction pred;
  };
  std::vector<Wall> walls;
};

// Applies `changes` to `caps` in order (option names for errors: --set / --scale).
GpuCaps apply_changes(GpuCaps caps, const std::vector<KnobChange>& changes);

WhatifResult run_whatif(const PreparedWorkload& w, const GpuSpec& spec, const GpuCaps& baseline,
                        const WhatifSpec& ws);

}  // namespace kcast

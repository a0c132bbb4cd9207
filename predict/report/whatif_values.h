// The `kcast whatif` report as one plain values struct, filled by make_whatif_values() from a
// WhatifResult; the table, CSV, JSON and HTML renderers read only this struct.
// Totals (baseline_us, modified_us, sweep total_us, wall total_us) are step times, as in predict;
// per-class figures are kernel time (count * time).
#pragma once
#include <array>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/whatif/whatif.h"

namespace kcast {

struct WhatifValues {
  std::string gpu, mode, kernels_file, model;
  size_t kernels = 0;
  struct Change {
    std::string knob, unit;
    double baseline, modified;  // knob values in its unit
  };
  std::vector<Change> changes;  // every knob, baseline vs modified (changed ones flagged by value)
  double baseline_us = 0, modified_us = 0, speedup = 1;
  double baseline_kernel_us = 0, modified_kernel_us = 0;
  std::array<double, kNumClasses> class_baseline{}, class_modified{};
  std::array<size_t, kNumClasses> class_rows{};
  std::array<double, kNumBounds> bound_baseline{}, bound_modified{};
  bool has_sweep = false;
  std::string sweep_knob, sweep_unit;
  double sweep_knob_baseline = kUnknown;  // the knob's value on the unmodified GPU
  struct Point {
    double value, total_us, speedup;
  };
  std::vector<Point> sweep;
  struct Wall {
    std::string name, description;
    double total_us, speedup;  // speedup relative to modified_us
  };
  std::vector<Wall> walls;
};

WhatifValues make_whatif_values(const WhatifResult& r, const WhatifSpec& ws,
                                const std::string& kernels_file, const std::string& model);

void render_whatif_table(const WhatifValues& v, std::ostream& out);
void render_whatif_csv(const WhatifValues& v, std::ostream& out);
nlohmann::json whatif_json(const WhatifValues& v);  // docs/cli-contract.md's shapes plus extra fields
std::string whatif_html(const WhatifValues& v);

}  // namespace kcast
